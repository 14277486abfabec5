// The OIDC door of the web sign-in: the login throttle around the callback, the provider's answer turned into a session.
import type { DB } from '../../db/open';
import type { OidcConfig } from '../../config/oidc-config';
import type { SecretBox } from '../../identity/secrets';
import type { OidcProvider, PendingSignIn } from '../../features/directory/directory.oidc';
import { signInWithOidc } from '../../features/directory/oidc.service';
import { createSession } from './sessions.service';
import type { LoginThrottle } from './throttle';

export type OidcLoginOutcome =
  { result: 'throttled'; retryAfterMs: number } | { result: 'ok'; cookie: string } | { result: 'bad' | 'disabled' | 'refused' | 'unavailable'; detail: string };

/** The throttle's name for callbacks from one address: the user is unknown until the provider has answered. */
export function oidcThrottleName(address: string): string {
  return `oidc@${address}`;
}

export interface OidcCallback {
  query: string;
  pending: PendingSignIn | null;
  address: string;
  userAgent: string;
  requestId: string | null;
}

/**
 * One callback. It takes a throttle attempt first (a failed callback counts, as a wrong password does), refunded when
 * the provider vouched for the user (signed in, or refused for want of a mapping).
 */
export async function loginWithOidc(
  db: DB,
  secrets: SecretBox,
  cfg: OidcConfig,
  provider: OidcProvider,
  throttle: LoginThrottle,
  cb: OidcCallback,
): Promise<OidcLoginOutcome> {
  const slot = throttle.reserve(oidcThrottleName(cb.address), cb.address);
  if (!('reservation' in slot)) return { result: 'throttled', retryAfterMs: slot.wait };
  const r = await signInWithOidc(db, secrets, cfg, provider, { query: cb.query, pending: cb.pending }, { address: cb.address, requestId: cb.requestId });
  if (r.result === 'bad') return { result: 'bad', detail: r.detail };
  if (r.result === 'unavailable') return { result: 'unavailable', detail: r.message };
  throttle.succeeded(slot.reservation);
  if (r.result === 'disabled') return { result: 'disabled', detail: 'the account is disabled' };
  if (r.result === 'refused') return { result: 'refused', detail: r.detail };
  return { result: 'ok', cookie: createSession(db, r.userId, { address: cb.address, userAgent: cb.userAgent }) };
}
