// Web login and logout: the throttled password check, the new session and the audit row of each outcome.
import type { Logger } from 'pino';
import type { DB } from '../../db/open';
import type { Actor } from '../../identity/actor';
import { recordAnonymousAudit, recordAudit } from '../../features/audit/audit.service';
import { checkUserPassword } from '../../features/users/users.service';
import { createSession, endSession } from './sessions.service';
import type { LoginThrottle } from './throttle';
import type { LdapConfig } from '../../config/ldap-config';
import { isLocalUser, signInWithDirectory } from '../../features/directory/directory.service';
import { hasTotp, type TotpSetting } from '../../features/users/totp.service';
import { startChallenge } from '../../features/users/totp-challenge.service';

/** The [auth] keys of local sign-in: the second factor, and which local users may sign in with a password at all. */
export interface LocalSignIn {
  totp: TotpSetting;
  local_users: readonly string[];
}

export type LoginOutcome =
  | { result: 'throttled'; retryAfterMs: number }
  | { result: 'bad' }
  | { result: 'disabled' }
  | { result: 'ok'; cookie: string; mustChangePassword: boolean }
  /** Directory sign-in: the directory did not answer (local users still sign in). */
  | { result: 'unavailable' }
  /** Directory sign-in: right password, but no [[auth.ldap.map]] entry (or an unusable one) gives any access. */
  | { result: 'refused' }
  /** Right password of a user with a second factor: the code is owed (`challenge` is the cookie of that step). */
  | { result: 'code'; challenge: string };

export interface LoginAttempt {
  username: string;
  password: string;
  /** The client's address (behind a trusted proxy, the one it reports). */
  address: string;
  userAgent: string;
  requestId: string | null;
  /** Where directory sign-in reports what it ignored (referrals). */
  log?: Pick<Logger, 'info'>;
}

/**
 * One login attempt. The throttle's attempt is reserved before the password is checked (argon2 is asynchronous:
 * parallel guesses must not all pass the throttle first), then refunded if the password was right.
 */
export async function login(
  db: DB,
  throttle: LoginThrottle,
  a: LoginAttempt,
  ldap?: LdapConfig,
  local: LocalSignIn = { totp: 'optional', local_users: [] },
): Promise<LoginOutcome> {
  const slot = throttle.reserve(a.username, a.address);
  if (!('reservation' in slot)) return { result: 'throttled', retryAfterMs: slot.wait };
  // A local user of that name always signs in locally (the break-glass administrator works with the directory down).
  if (ldap?.url && !isLocalUser(db, a.username)) {
    const d = await signInWithDirectory(db, ldap, a.username, a.password, { address: a.address, requestId: a.requestId, log: a.log });
    // Unavailable: the password was never checked, so the attempt keeps counting (refunding would clear the name).
    if (d.result === 'bad' || d.result === 'unavailable') return { result: d.result };
    // The right password (even if refused for want of a mapping): as for a local user, the attempt is refunded.
    throttle.succeeded(slot.reservation);
    if (d.result !== 'ok') return { result: d.result };
    const cookie = createSession(db, d.userId, { address: a.address, userAgent: a.userAgent });
    return { result: 'ok', cookie, mustChangePassword: false };
  }
  const check = await checkUserPassword(db, a.username, a.password);
  const audit = { target: `address ${a.address}`, door: 'web' as const, requestId: a.requestId };
  if (check.result === 'bad') {
    recordAnonymousAudit(db, { ...audit, actorName: a.username, action: 'login.failure' });
    return { result: 'bad' };
  }
  // Not a named local user ([auth] local_users): told exactly what a wrong password is told, and counted as one.
  if (local.local_users.length > 0 && !local.local_users.includes(check.username)) {
    recordAnonymousAudit(db, { ...audit, actorName: check.username, userId: check.userId, action: 'login.refused_not_listed' });
    return { result: 'bad' };
  }
  if (check.result === 'disabled') {
    throttle.succeeded(slot.reservation);
    recordAnonymousAudit(db, { ...audit, actorName: check.username, userId: check.userId, action: 'login.refused_disabled' });
    return { result: 'disabled' };
  }
  if (local.totp !== 'off' && hasTotp(db, check.userId)) {
    // The password's attempt is refunded, but the username's count stays: each code tried counts on it (login-code).
    throttle.refund(slot.reservation);
    const challenge = db
      .transaction(() => {
        recordAnonymousAudit(db, { ...audit, actorName: check.username, userId: check.userId, action: 'login.code_required' });
        return startChallenge(db, check.userId, a.address);
      })
      .immediate();
    return { result: 'code', challenge };
  }
  throttle.succeeded(slot.reservation);
  const cookie = db
    .transaction(() => {
      const id = createSession(db, check.userId, { address: a.address, userAgent: a.userAgent });
      recordAnonymousAudit(db, { ...audit, actorName: check.username, userId: check.userId, action: 'login.success' });
      return id;
    })
    .immediate();
  return { result: 'ok', cookie, mustChangePassword: check.mustChangePassword };
}

/** End the actor's own session, with its audit row. */
export function logout(db: DB, actor: Actor, sessionHash: Buffer): void {
  db.transaction(() => {
    endSession(db, sessionHash);
    recordAudit(db, actor, { action: 'logout', target: `user ${actor.principal.username}` });
  }).immediate();
}
