// Web sessions: 32 random bytes in an HttpOnly cookie, stored hashed, with idle and absolute expiry and a CSRF token.
import { bestEffortWrite } from '../../features/maintenance/storage-health';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DB } from '../../db/open';
import { userPrincipal } from '../../features/apikeys/apikeys.service';
import type { Principal } from '../../identity/principal';
import { deleteExpiredSessions, deleteSession, deleteUserSessions, findSessionForAuth, insertSession, touchSession } from './sessions.store';

export const SESSION_COOKIE = 'confvault_session';
export const IDLE_TIMEOUT_MS = 30 * 60_000;
export const ABSOLUTE_TIMEOUT_MS = 12 * 3_600_000;
// Writing last_seen on every request would make each page view a database write; a minute of slack is harmless.
const TOUCH_INTERVAL_MS = 60_000;

export interface WebSession {
  idHash: Buffer;
  userId: number;
  csrfToken: string;
  mustChangePassword: boolean;
  principal: Principal;
}

export function hashSessionId(id: string): Buffer {
  return createHash('sha256').update(id, 'utf8').digest();
}

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Start a session for a user who has just proved their password; returns the cookie value. */
export function createSession(db: DB, userId: number, meta: { address: string; userAgent: string }, now = Date.now()): string {
  const id = newToken();
  insertSession(db, {
    id_hash: hashSessionId(id),
    user_id: userId,
    csrf_token: newToken(),
    created_at: now,
    last_seen_at: now,
    expires_at: now + ABSOLUTE_TIMEOUT_MS,
    address: meta.address.slice(0, 64),
    user_agent: meta.userAgent.slice(0, 256),
  });
  // Housekeeping rides on logins: no timer, and the table never holds more than a day of dead rows.
  deleteExpiredSessions(db, now, now - IDLE_TIMEOUT_MS);
  return id;
}

/**
 * The live session behind a cookie value, or null. An expired session, or one whose user was disabled
 * meanwhile, is deleted here; permissions and scope are those of the current auth epoch, as for API keys.
 */
export function resolveSession(db: DB, cookie: string | undefined, now = Date.now()): WebSession | null {
  if (!cookie || !/^[A-Za-z0-9_-]{43}$/.test(cookie)) return null;
  const idHash = hashSessionId(cookie);
  const row = findSessionForAuth(db, idHash);
  if (!row) return null;
  if (row.expires_at <= now || row.last_seen_at + IDLE_TIMEOUT_MS <= now || row.disabled === 1) {
    deleteSession(db, idHash);
    return null;
  }
  if (now - row.last_seen_at >= TOUCH_INTERVAL_MS) bestEffortWrite(db, 'session last-seen time', () => touchSession(db, idHash, now));
  return {
    idHash,
    userId: row.user_id,
    csrfToken: row.csrf_token,
    mustChangePassword: row.must_change_password === 1,
    principal: userPrincipal(db, row),
  };
}

export function endSession(db: DB, idHash: Buffer): void {
  deleteSession(db, idHash);
}

export function endOtherSessions(db: DB, userId: number, keep: Buffer | null): number {
  return deleteUserSessions(db, userId, keep);
}

/** Constant-time comparison of a presented CSRF token with the expected one. */
export function tokensEqual(expected: string, presented: string | undefined | null): boolean {
  if (!presented) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}
