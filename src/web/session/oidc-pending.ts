// Sign-ins started with the identity provider and not yet back at the callback: in memory, bound to the browser by a cookie.
import { randomBytes } from 'node:crypto';
import type { PendingSignIn } from '../../features/directory/directory.oidc';

/** Bounded: at most this many sign-ins wait; past it the oldest goes (its callback then says "start again"). */
const MAX_WAITING = 1_000;
/** A sign-in not back from the provider within this time is dropped. */
export const PENDING_TTL_MS = 10 * 60_000;

interface Waiting extends PendingSignIn {
  next: string;
  at: number;
}

export class OidcPending {
  private readonly waiting = new Map<string, Waiting>();

  /** Keep a started sign-in; returns the value of the browser's cookie that finds it again. */
  put(p: PendingSignIn, next: string, now = Date.now()): string {
    for (const [ref, w] of this.waiting) if (now - w.at > PENDING_TTL_MS) this.waiting.delete(ref);
    while (this.waiting.size >= MAX_WAITING) this.waiting.delete(this.waiting.keys().next().value as string);
    const ref = randomBytes(32).toString('base64url');
    this.waiting.set(ref, { ...p, next, at: now });
    return ref;
  }

  /** The sign-in once (a replayed callback finds nothing), or null when unknown or expired. */
  take(ref: string | undefined, now = Date.now()): Waiting | null {
    if (!ref) return null;
    const w = this.waiting.get(ref);
    if (!w) return null;
    this.waiting.delete(ref);
    return now - w.at > PENDING_TTL_MS ? null : w;
  }
}
