// The state between a right password and its second factor at sign-in: a random token in a cookie, stored hashed,
// valid for a few minutes and a few codes. It is not a session: it opens nothing but the code form.
import { createHash, randomBytes } from 'node:crypto';
import type { DB } from '../../db/open';
import { countChallengeAttempt, deleteChallenge, deleteExpiredChallenges, getChallenge, insertChallenge } from './totp.store';

export const CHALLENGE_TTL_MS = 5 * 60_000;
/** Codes one challenge accepts before the password must be given again (the login throttle counts them too). */
export const CHALLENGE_MAX_ATTEMPTS = 5;

const hashOf = (token: string) => createHash('sha256').update(token, 'utf8').digest();

/** A new challenge for a user who gave the right password; returns the cookie value. */
export function startChallenge(db: DB, userId: number, address: string, now = Date.now()): string {
  const token = randomBytes(32).toString('base64url');
  deleteExpiredChallenges(db, now);
  insertChallenge(db, { id_hash: hashOf(token), user_id: userId, expires_at: now + CHALLENGE_TTL_MS, address: address.slice(0, 64) });
  return token;
}

/**
 * Take one attempt of a challenge: the user it belongs to, or null (unknown, expired, or out of attempts; then it
 * is gone and the password must be given again).
 */
export function takeChallengeAttempt(db: DB, token: string | undefined, now = Date.now()): number | null {
  if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const h = hashOf(token);
  return db
    .transaction(() => {
      const c = getChallenge(db, h);
      if (!c) return null;
      if (c.expires_at <= now || c.attempts >= CHALLENGE_MAX_ATTEMPTS) {
        deleteChallenge(db, h);
        return null;
      }
      countChallengeAttempt(db, h);
      return c.user_id;
    })
    .immediate();
}

/** Whether the cookie names a live challenge (the code page shows its form only then). */
export function challengeAlive(db: DB, token: string | undefined, now = Date.now()): boolean {
  if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return false;
  const c = getChallenge(db, hashOf(token));
  return Boolean(c && c.expires_at > now && c.attempts < CHALLENGE_MAX_ATTEMPTS);
}

export function endChallenge(db: DB, token: string): void {
  deleteChallenge(db, hashOf(token));
}
