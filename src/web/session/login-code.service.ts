// The second step of a local sign-in: the TOTP or recovery code owed after a right password, throttled and audited.
import type { DB } from '../../db/open';
import type { SecretBox } from '../../identity/secrets';
import { recordAnonymousAudit } from '../../features/audit/audit.service';
import { challengedUser, checkSecondFactor } from '../../features/users/totp.service';
import { endChallenge, takeChallengeAttempt } from '../../features/users/totp-challenge.service';
import { createSession } from './sessions.service';
import type { LoginThrottle } from './throttle';

export type CodeOutcome =
  | { result: 'throttled'; retryAfterMs: number }
  /** No live challenge (expired, too many codes, or none): back to the password. */
  | { result: 'expired' }
  | { result: 'bad' }
  | { result: 'disabled' }
  | { result: 'ok'; cookie: string; mustChangePassword: boolean; recoveryCodesLeft?: number };

export interface CodeAttempt {
  challenge: string | undefined;
  code: string;
  address: string;
  userAgent: string;
  requestId: string | null;
}

/** One code attempt: it takes a throttle attempt under the user's name, as a password does, refunded only when right. */
export async function loginWithCode(db: DB, box: SecretBox, throttle: LoginThrottle, a: CodeAttempt): Promise<CodeOutcome> {
  const userId = takeChallengeAttempt(db, a.challenge);
  const user = userId === null ? null : challengedUser(db, userId);
  if (userId === null || !user) return { result: 'expired' };
  const slot = throttle.reserve(user.username, a.address);
  if (!('reservation' in slot)) return { result: 'throttled', retryAfterMs: slot.wait };
  const audit = { target: `address ${a.address}`, door: 'web' as const, requestId: a.requestId, actorName: user.username, userId };
  const check = await checkSecondFactor(db, box, userId, a.code.slice(0, 64));
  if (check.result !== 'ok') {
    recordAnonymousAudit(db, { ...audit, action: check.result === 'replayed' ? 'login.code_replayed' : 'login.code_failure' });
    return { result: 'bad' };
  }
  throttle.succeeded(slot.reservation);
  endChallenge(db, a.challenge!);
  if (user.disabled) {
    recordAnonymousAudit(db, { ...audit, action: 'login.refused_disabled' });
    return { result: 'disabled' };
  }
  const cookie = db
    .transaction(() => {
      const id = createSession(db, userId, { address: a.address, userAgent: a.userAgent });
      const details = { second_factor: check.via, ...(check.via === 'recovery_code' ? { recovery_codes_left: check.recoveryCodesLeft } : {}) };
      recordAnonymousAudit(db, { ...audit, action: 'login.success', details });
      return id;
    })
    .immediate();
  return { result: 'ok', cookie, mustChangePassword: user.mustChangePassword, recoveryCodesLeft: check.recoveryCodesLeft };
}
