// TOTP second factor of local users: enrolment (secret encrypted with the master key, confirmed by a first code),
// ten single-use recovery codes (argon2-hashed), the check at sign-in (replays refused) and an administrator's reset.
import { randomBytes } from 'node:crypto';
import { ApiError } from '../../errors';
import type { DB } from '../../db/open';
import type { Actor } from '../../identity/actor';
import { hashPassword, verifyPassword } from '../../identity/password';
import { authorize } from '../../identity/policy';
import type { SecretBox } from '../../identity/secrets';
import { recordAudit } from '../audit/audit.service';
import { USER_OPS } from './users.policy';
import { requireLocalUser, targetFor } from './users.service';
import { isReplayedTotp, matchTotp, newTotpSecret, totpUri } from './totp.code';
import { advanceTotpStep, clearTotp, enableTotp, getTotpRow, listUnusedRecoveryCodes, setPendingTotpSecret, useRecoveryCode, type TotpRow } from './totp.store';

export type TotpSetting = 'off' | 'optional' | 'required';
export const RECOVERY_CODE_COUNT = 10;
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const ISSUER = 'confvault';

export interface TotpStatus {
  /** A directory user: the second factor is the directory's business. */
  directory: boolean;
  enabled: boolean;
  enabledAt: number | null;
  /** Enrolment started and not yet confirmed: the secret and its URI, for the page that shows the QR code. */
  pending: { secret: string; uri: string } | null;
  recoveryCodesLeft: number;
}

function rowOf(db: DB, userId: number): TotpRow {
  const row = getTotpRow(db, userId);
  if (!row) throw ApiError.notFound('user');
  return row;
}

function ownRow(db: DB, actor: Actor): TotpRow {
  if (actor.principal.userId <= 0) throw new ApiError('PERMISSION_DENIED', 'Only a signed-in user enrols their own second factor');
  const row = rowOf(db, actor.principal.userId);
  if (row.source !== 'local') throw new ApiError('CONFLICT', `${row.username} signs in through the directory: its own second factor applies`);
  return row;
}

/** Where the user stands; the secret is returned only while the enrolment is unconfirmed. */
export function totpStatus(db: DB, box: SecretBox, userId: number): TotpStatus {
  const row = rowOf(db, userId);
  const enabled = row.totp_enabled_at !== null;
  const secret = !enabled && row.totp_secret ? box.decrypt(row.totp_secret) : null;
  return {
    directory: row.source !== 'local',
    enabled,
    enabledAt: row.totp_enabled_at,
    pending: secret ? { secret, uri: totpUri(secret, ISSUER, row.username) } : null,
    recoveryCodesLeft: enabled ? listUnusedRecoveryCodes(db, userId).length : 0,
  };
}

/** The user a sign-in challenge belongs to, as the code step needs them (null: deleted meanwhile). */
export function challengedUser(db: DB, userId: number): { username: string; disabled: boolean; mustChangePassword: boolean } | null {
  const row = getTotpRow(db, userId);
  return row ? { username: row.username, disabled: row.disabled === 1, mustChangePassword: row.must_change_password === 1 } : null;
}

/** A local user without a second factor in force (under [auth] totp = "required": sent to enrolment). */
export function needsTotpEnrolment(db: DB, userId: number): boolean {
  const row = getTotpRow(db, userId);
  return row?.source === 'local' && row.totp_enabled_at === null;
}

/** Whether sign-in must ask this user for a code. */
export function hasTotp(db: DB, userId: number): boolean {
  return getTotpRow(db, userId)?.totp_enabled_at != null;
}

/** Start (or restart) the actor's own enrolment: a new secret, in force once a first code confirms it. */
export function startTotpEnrolment(db: DB, box: SecretBox, actor: Actor, setting: TotpSetting): void {
  if (setting === 'off') throw new ApiError('CONFLICT', 'The second factor is turned off on this appliance ([auth] totp = "off")');
  db.transaction(() => {
    const row = ownRow(db, actor);
    // Replacing a factor in force would first weaken it: a new phone goes through an administrator's reset.
    if (row.totp_enabled_at !== null) {
      throw new ApiError('CONFLICT', 'You already have a second factor: ask an administrator to reset it before enrolling a new one');
    }
    setPendingTotpSecret(db, row.id, box.encrypt(newTotpSecret()));
    recordAudit(db, actor, { action: 'user.totp_enrol_start', target: `user ${row.username}` });
  }).immediate();
}

function newRecoveryCode(): string {
  const bytes = randomBytes(40);
  let out = '';
  for (let i = 0; out.length < 10 && i < bytes.length; i++) {
    if (bytes[i] < 256 - (256 % RECOVERY_ALPHABET.length)) out += RECOVERY_ALPHABET[bytes[i] % RECOVERY_ALPHABET.length];
  }
  return `${out.slice(0, 5)}-${out.slice(5)}`;
}

/** What a person typed as a recovery code, as it was hashed: lower case, no spaces or dashes. */
function normalRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '');
}

/** Confirm the pending enrolment with a first code; returns the recovery codes, to be shown once and never again. */
export async function confirmTotpEnrolment(db: DB, box: SecretBox, actor: Actor, code: string, now = Date.now()): Promise<string[]> {
  const row = ownRow(db, actor);
  if (row.totp_enabled_at !== null || !row.totp_secret) throw new ApiError('CONFLICT', 'No enrolment is waiting for its first code; start again');
  const step = matchTotp(box.decrypt(row.totp_secret), code.trim(), 0, now);
  if (step === null) {
    recordAudit(db, actor, { action: 'user.totp_enrol_failure', target: `user ${row.username}` });
    throw ApiError.validation([{ field: 'code', message: 'That code does not match: check the time on your phone and type the newest code' }]);
  }
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  const hashes = await Promise.all(codes.map((c) => hashPassword(normalRecoveryCode(c))));
  db.transaction(() => {
    const again = rowOf(db, row.id);
    // Restarted meanwhile (another tab): this code confirmed the older secret.
    if (!again.totp_secret?.equals(row.totp_secret!) || again.totp_enabled_at !== null)
      throw new ApiError('CONFLICT', 'The enrolment changed meanwhile; start again');
    enableTotp(db, row.id, now, step, hashes);
    recordAudit(db, actor, { action: 'user.totp_enrol', target: `user ${row.username}`, details: { recovery_codes: RECOVERY_CODE_COUNT } });
  }).immediate();
  return codes;
}

/** An administrator removes a user's second factor (a lost phone): they sign in with the password alone, or enrol again. */
export function resetUserTotp(db: DB, actor: Actor, username: string): void {
  authorize(actor, USER_OPS.update);
  db.transaction(() => {
    const { row } = targetFor(db, actor, username, 'reset the second factor of');
    requireLocalUser(row, 'password and sign-in');
    const had = rowOf(db, row.id).totp_enabled_at !== null;
    clearTotp(db, row.id);
    recordAudit(db, actor, { action: 'user.totp_reset', target: `user ${row.username}`, changes: { totp: { before: had, after: false } } });
  }).immediate();
}

export type SecondFactorCheck = { result: 'ok'; via: 'totp' | 'recovery_code'; recoveryCodesLeft?: number } | { result: 'bad' } | { result: 'replayed' };

/** Check a code typed at sign-in: a TOTP code of a step not used before, or an unused recovery code (then spent). */
export async function checkSecondFactor(db: DB, box: SecretBox, userId: number, typed: string, now = Date.now()): Promise<SecondFactorCheck> {
  const row = rowOf(db, userId);
  if (row.totp_enabled_at === null || !row.totp_secret) return { result: 'bad' };
  const code = typed.trim().replace(/\s/g, '');
  if (/^\d+$/.test(code)) {
    const secret = box.decrypt(row.totp_secret);
    const step = matchTotp(secret, code, row.totp_last_step, now);
    // The step is claimed in one statement: of two requests with the same code, only one wins.
    if (step !== null && advanceTotpStep(db, userId, step)) return { result: 'ok', via: 'totp' };
    return isReplayedTotp(secret, code, Math.max(row.totp_last_step, step ?? 0), now) ? { result: 'replayed' } : { result: 'bad' };
  }
  const normal = normalRecoveryCode(code);
  if (normal.length !== 10 || [...normal].some((ch) => !RECOVERY_ALPHABET.includes(ch))) return { result: 'bad' };
  const unused = listUnusedRecoveryCodes(db, userId);
  for (const r of unused) {
    if (await verifyPassword(r.code_hash, normal)) {
      return useRecoveryCode(db, r.id, now) ? { result: 'ok', via: 'recovery_code', recoveryCodesLeft: unused.length - 1 } : { result: 'replayed' };
    }
  }
  return { result: 'bad' };
}
