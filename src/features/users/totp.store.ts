// Queries for the TOTP second factor (schema 0021): the user's encrypted secret, recovery codes, and sign-in challenges.
import type { DB } from '../../db/open';

export interface TotpRow {
  id: number;
  username: string;
  source: 'local' | 'ldap' | 'oidc';
  totp_secret: Buffer | null;
  totp_enabled_at: number | null;
  totp_last_step: number;
  disabled: number;
  must_change_password: number;
}

export interface RecoveryCodeRow {
  id: number;
  code_hash: string;
}

export interface ChallengeRow {
  user_id: number;
  expires_at: number;
  attempts: number;
}

export function getTotpRow(db: DB, userId: number): TotpRow | undefined {
  return db
    .prepare('SELECT id, username, source, totp_secret, totp_enabled_at, totp_last_step, disabled, must_change_password FROM users WHERE id = ?')
    .get(userId) as TotpRow | undefined;
}

/** A new (not yet confirmed) secret: any earlier enrolment and its recovery codes are gone. */
export function setPendingTotpSecret(db: DB, userId: number, secret: Buffer): void {
  db.prepare('UPDATE users SET totp_secret = ?, totp_enabled_at = NULL, totp_last_step = 0 WHERE id = ?').run(secret, userId);
  db.prepare('DELETE FROM user_recovery_codes WHERE user_id = ?').run(userId);
}

export function enableTotp(db: DB, userId: number, at: number, step: number, codeHashes: readonly string[]): void {
  db.prepare('UPDATE users SET totp_enabled_at = ?, totp_last_step = ? WHERE id = ?').run(at, step, userId);
  const insert = db.prepare('INSERT INTO user_recovery_codes (user_id, code_hash) VALUES (?, ?)');
  for (const h of codeHashes) insert.run(userId, h);
}

/** Records the step of an accepted code; false when another request used that step (or a later one) first. */
export function advanceTotpStep(db: DB, userId: number, step: number): boolean {
  return db.prepare('UPDATE users SET totp_last_step = ? WHERE id = ? AND totp_last_step < ?').run(step, userId, step).changes === 1;
}

export function clearTotp(db: DB, userId: number): number {
  db.prepare('DELETE FROM user_recovery_codes WHERE user_id = ?').run(userId);
  return db.prepare('UPDATE users SET totp_secret = NULL, totp_enabled_at = NULL, totp_last_step = 0 WHERE id = ?').run(userId).changes;
}

export function listUnusedRecoveryCodes(db: DB, userId: number): RecoveryCodeRow[] {
  return db.prepare('SELECT id, code_hash FROM user_recovery_codes WHERE user_id = ? AND used_at IS NULL ORDER BY id').all(userId) as RecoveryCodeRow[];
}

/** Spends a recovery code; false when it was spent meanwhile (two requests with the same code). */
export function useRecoveryCode(db: DB, id: number, at: number): boolean {
  return db.prepare('UPDATE user_recovery_codes SET used_at = ? WHERE id = ? AND used_at IS NULL').run(at, id).changes === 1;
}

export function insertChallenge(db: DB, c: { id_hash: Buffer; user_id: number; expires_at: number; address: string }): void {
  db.prepare('INSERT INTO login_challenges (id_hash, user_id, expires_at, address) VALUES (@id_hash, @user_id, @expires_at, @address)').run(c);
}

export function getChallenge(db: DB, idHash: Buffer): ChallengeRow | undefined {
  return db.prepare('SELECT user_id, expires_at, attempts FROM login_challenges WHERE id_hash = ?').get(idHash) as ChallengeRow | undefined;
}

export function countChallengeAttempt(db: DB, idHash: Buffer): void {
  db.prepare('UPDATE login_challenges SET attempts = attempts + 1 WHERE id_hash = ?').run(idHash);
}

export function deleteChallenge(db: DB, idHash: Buffer): void {
  db.prepare('DELETE FROM login_challenges WHERE id_hash = ?').run(idHash);
}

export function deleteExpiredChallenges(db: DB, now: number): void {
  db.prepare('DELETE FROM login_challenges WHERE expires_at <= ?').run(now);
}
