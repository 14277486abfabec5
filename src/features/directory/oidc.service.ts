// OpenID Connect sign-in and re-check: the provider's claims turned into a directory user (source oidc) through the
// [[auth.oidc.map]] mapping, the provider's tokens kept encrypted, the client secret in the encrypted store; door oidc.
import type { DB } from '../../db/open';
import type { OidcConfig } from '../../config/oidc-config';
import type { SecretBox } from '../../identity/secrets';
import type { Actor } from '../../identity/actor';
import { recordAnonymousAudit, recordAudit } from '../audit/audit.service';
import { accessOfMatch, applyAccess, settleRecheck, type DirectoryAccess, type RecheckResult } from './directory.service';
import { matchClaimValues } from './directory.mapping';
import { getUserSourceRow, listDirectoryUsersInUse, updateDirectoryUser } from './directory.store';
import { OidcProvider, ProviderUnavailableError, type PendingSignIn, type ProviderTokens, type ProviderUser } from './directory.oidc';
import { getAuthSecret, getOidcTokens, putAuthSecret, putOidcTokens } from './oidc.store';

const CLIENT_SECRET = 'oidc.client_secret';
const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

/** The provider of this appliance's [auth.oidc], its client secret read from the encrypted store. */
export function oidcProviderFor(db: DB, secrets: SecretBox, cfg: OidcConfig): OidcProvider {
  return new OidcProvider(cfg, () => {
    const blob = getAuthSecret(db, CLIENT_SECRET);
    return blob ? secrets.decrypt(blob) : null;
  });
}

/** Store the client secret encrypted (`confvault auth set-oidc-secret`), audited (never the secret itself). */
export function setOidcClientSecret(db: DB, secrets: SecretBox, actor: Actor, secret: string): void {
  db.transaction(() => {
    const replaced = getAuthSecret(db, CLIENT_SECRET) !== undefined;
    putAuthSecret(db, CLIENT_SECRET, secrets.encrypt(secret));
    recordAudit(db, actor, { action: 'auth.oidc_secret_set', target: 'auth.oidc client secret', details: { replaced } });
  }).immediate();
}

/** Whether a client secret is stored (`auth test-oidc` says so). */
export function hasOidcClientSecret(db: DB): boolean {
  return getAuthSecret(db, CLIENT_SECRET) !== undefined;
}

/** Evaluate [[auth.oidc.map]] for a user's claims (shared by sign-in, re-check and `auth test-oidc`). */
export function oidcAccessFor(db: DB, cfg: OidcConfig, user: ProviderUser): DirectoryAccess {
  const match = matchClaimValues(cfg.map, user.groups);
  if (!match) return { ok: false, reason: 'no_mapping', detail: `none of the values of the "${cfg.groups_claim}" claim is in [[auth.oidc.map]]` };
  return accessOfMatch(db, match);
}

export type OidcSignIn =
  | { result: 'ok'; userId: number; username: string }
  | { result: 'bad'; detail: string }
  | { result: 'disabled' }
  | { result: 'refused'; detail: string }
  | { result: 'unavailable'; message: string };

interface AuditContext {
  address: string;
  requestId: string | null;
}

function audit(db: DB, ctx: AuditContext, actorName: string, userId: number | null, action: string, details: Record<string, unknown>) {
  recordAnonymousAudit(db, { actorName, userId, door: 'oidc', action, target: `address ${ctx.address}`, requestId: ctx.requestId, details });
}

const subjectRef = (u: ProviderUser) => `sub ${u.subject}`;

function keepTokens(db: DB, secrets: SecretBox, userId: number, t: ProviderTokens): void {
  putOidcTokens(db, userId, {
    refresh_token: t.refreshToken ? secrets.encrypt(t.refreshToken) : null,
    id_token: t.idToken ? secrets.encrypt(t.idToken) : null,
  });
}

/**
 * Finish a sign-in at the callback: the code exchanged (state, nonce, PKCE checked by openid-client), the claims mapped,
 * the user created or brought in step. Every outcome is audited with the door `oidc`. A name that belongs to a local or
 * LDAP account, or to another subject of the provider, is refused: the provider must not take over an existing account.
 */
export async function signInWithOidc(
  db: DB,
  secrets: SecretBox,
  cfg: OidcConfig,
  provider: OidcProvider,
  callback: { query: string; pending: PendingSignIn | null },
  ctx: AuditContext,
): Promise<OidcSignIn> {
  if (!callback.pending) {
    audit(db, ctx, 'unknown', null, 'login.failure', { reason: 'no sign-in was started in this browser, or it expired' });
    return { result: 'bad', detail: 'no sign-in was started in this browser, or it expired' };
  }
  let t: ProviderTokens;
  try {
    t = await provider.finishSignIn(callback.query, callback.pending);
  } catch (err) {
    if (err instanceof ProviderUnavailableError) {
      audit(db, ctx, 'unknown', null, 'login.directory_error', { error: err.message });
      return { result: 'unavailable', message: err.message };
    }
    audit(db, ctx, 'unknown', null, 'login.failure', { reason: (err as Error).message });
    return { result: 'bad', detail: (err as Error).message };
  }
  const u = t.user;
  const who = { subject: u.subject, name: u.displayName, email: u.email, groups: u.groups.slice(0, 50) };
  if (!u.username || !USERNAME.test(u.username)) {
    const detail = `the "${cfg.username_claim}" claim is missing or not a valid username`;
    audit(db, ctx, u.username ?? `sub ${u.subject}`.slice(0, 64), null, 'login.refused_no_mapping', { ...who, reason: detail });
    return { result: 'refused', detail };
  }
  const username = u.username;
  const row = getUserSourceRow(db, username);
  if (row && (row.source !== 'oidc' || (row.directory_dn !== null && row.directory_dn !== subjectRef(u)))) {
    const detail = row.source === 'oidc' ? 'the name belongs to another account of the provider' : `the name belongs to a ${row.source} account`;
    audit(db, ctx, username, row.id, 'login.refused_name_taken', { ...who, reason: detail });
    return { result: 'refused', detail };
  }
  if (row && row.disabled === 1 && row.directory_disabled === 0) {
    audit(db, ctx, row.username, row.id, 'login.refused_disabled', who);
    return { result: 'disabled' };
  }
  const access = oidcAccessFor(db, cfg, u);
  if (!access.ok) {
    audit(db, ctx, username, row?.id ?? null, 'login.refused_no_mapping', { ...who, reason: access.detail });
    return { result: 'refused', detail: access.detail };
  }
  return db
    .transaction((): OidcSignIn => {
      const applied = applyAccess(db, getUserSourceRow(db, username), username, subjectRef(u), access, 'oidc');
      if (row?.directory_disabled === 1) updateDirectoryUser(db, row.id, { disabled: false, directory_disabled: false });
      keepTokens(db, secrets, applied.id, t);
      recordAnonymousAudit(db, {
        actorName: username,
        userId: applied.id,
        door: 'oidc',
        action: 'login.success',
        target: `address ${ctx.address}`,
        requestId: ctx.requestId,
        details: { ...who, group: access.match.group, mapping: access.match.index, created: applied.created, refresh_token: t.refreshToken !== null },
        changes: applied.changes,
      });
      return { result: 'ok', userId: applied.id, username: row?.username ?? username };
    })
    .immediate();
}

/**
 * Re-check every OIDC user with a live session or API key. With a refresh token: it is redeemed and the new claims are
 * mapped again (a refused token, or no matching entry, disables the user: sessions end, keys stop). Without one: a user
 * not confirmed by a sign-in for session_max_minutes is disabled the same way, until they sign in again.
 */
export async function recheckOidcUsers(db: DB, secrets: SecretBox, cfg: OidcConfig, provider: OidcProvider, now = Date.now()): Promise<RecheckResult> {
  const result: RecheckResult = { checked: 0, disabled: [], updated: [], referrals: [] };
  for (const row of listDirectoryUsersInUse(db, now, 'oidc')) {
    const stored = getOidcTokens(db, row.id);
    const subject = (row.directory_dn ?? '').replace(/^sub /, '');
    let access: DirectoryAccess;
    if (stored?.refresh_token) {
      try {
        const t = await provider.refresh(secrets.decrypt(stored.refresh_token), subject);
        access = oidcAccessFor(db, cfg, t.user);
        if (access.ok) keepTokens(db, secrets, row.id, { ...t, idToken: t.idToken ?? (stored.id_token ? secrets.decrypt(stored.id_token) : null) });
      } catch (err) {
        if (err instanceof ProviderUnavailableError) {
          result.unavailable = err.message;
          return result;
        }
        access = { ok: false, reason: 'disabled', detail: `the provider refused the refresh token (${(err as Error).message})` };
      }
    } else if ((row.directory_checked_at ?? 0) + cfg.session_max_minutes * 60_000 <= now) {
      access = { ok: false, reason: 'not_found', detail: `no refresh token, and no sign-in for session_max_minutes (${cfg.session_max_minutes})` };
    } else continue;
    result.checked++;
    settleRecheck(db, row, access, row.directory_dn ?? '', 'oidc', result, now);
  }
  return result;
}

/** The provider's logout address for a user signing out (null: the provider has none, or the user is no OIDC user). */
export async function oidcLogoutUrl(db: DB, secrets: SecretBox, provider: OidcProvider, userId: number): Promise<string | null> {
  const row = getOidcTokens(db, userId);
  if (!row) return null;
  return provider.endSessionUrl(row.id_token ? secrets.decrypt(row.id_token) : null);
}
