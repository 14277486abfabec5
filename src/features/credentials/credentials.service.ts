// Credentials: secrets encrypted at rest and never returned; the one place they are decrypted, for the backup runner.
import ssh2 from 'ssh2';
import type { DB } from '../../db/open';
import { ApiError, isUniqueViolation, type FieldError } from '../../errors';
import type { SecretBox } from '../../identity/secrets';
import type { Actor } from '../../identity/actor';
import { authorize, denied, requireOwnsSharedThing } from '../../identity/policy';
import { changesBetween, recordAudit, type AuditChanges } from '../audit/audit.service';
import { countCredentialDevicesOutside, devicesOutsideUsage, getUsageGroups, getUsageGroupsOf, setUsageGroups } from './credential-usage.store';
import { CREDENTIAL_OPS, checkUsageInput, defaultUsage, usageWithinScope } from './credentials.policy';
import type { Principal } from '../../identity/principal';
import {
  countCredentialRows,
  deleteCredentialRow,
  getCredentialRow,
  getCredentialSecretRow,
  insertCredentialRow,
  listCredentialRows,
  toCredential,
  updateCredentialRow,
  type Credential,
  type CredentialSecretRow,
  type CredentialWrite,
} from './credentials.store';

export type { Credential } from './credentials.store';

const SECRET_FIELDS = ['password', 'private_key', 'passphrase', 'enable_secret'] as const;
type SecretField = (typeof SECRET_FIELDS)[number];

export interface CredentialInput {
  name: string;
  username?: string;
  description?: string;
  password?: string | null;
  private_key?: string | null;
  passphrase?: string | null;
  enable_secret?: string | null;
  /** Usage scope; omitted on create: anywhere for scope "all", otherwise the groups assigned to the actor's user. */
  group_ids?: number[] | null;
}

/** PUT semantics: an omitted field keeps its value; a secret set to null is cleared. */
export type CredentialPatch = Partial<CredentialInput>;

export interface DecryptedCredential {
  username: string;
  password: string | null;
  private_key: string | null;
  passphrase: string | null;
  enable_secret: string | null;
}

export function listCredentials(db: DB, opts: { page: number; limit: number; q?: string }): { items: Credential[]; total: number } {
  const filter = { q: opts.q ? opts.q.toLowerCase() : null };
  const total = countCredentialRows(db, filter);
  const offset = (opts.page - 1) * opts.limit;
  const rows = offset < total ? listCredentialRows(db, filter, offset, opts.limit) : [];
  const usage = getUsageGroupsOf(
    db,
    rows.map((r) => r.id),
  );
  return { items: rows.map((r) => toCredential(r, usage.get(r.id) ?? null)), total };
}

export function getCredential(db: DB, id: number): Credential {
  const row = getCredentialRow(db, id);
  if (!row) throw ApiError.notFound(`credential ${id}`);
  return toCredential(row, getUsageGroups(db, id));
}

/** What the audit trail shows of a credential: public fields and usage scope; secrets only as "changed". */
function auditView(c: Credential) {
  return { name: c.name, username: c.username, description: c.description, group_ids: c.group_ids };
}

function secretChanges(input: Partial<Record<SecretField, string | null>>, onCreate: boolean): AuditChanges {
  const out: AuditChanges = {};
  for (const f of SECRET_FIELDS) if (input[f] !== undefined && !(onCreate && input[f] === null)) out[f] = 'changed';
  return out;
}

export function createCredential(db: DB, actor: Actor, secrets: SecretBox, input: CredentialInput): Credential {
  authorize(actor, CREDENTIAL_OPS.create);
  const plain = {
    password: input.password ?? null,
    private_key: input.private_key ?? null,
    passphrase: input.passphrase ?? null,
    enable_secret: input.enable_secret ?? null,
  };
  checkKeyPair(plain.private_key, plain.passphrase);
  const write: CredentialWrite = {
    name: input.name.trim(),
    username: input.username ?? '',
    description: input.description ?? '',
    password_enc: seal(secrets, plain.password),
    private_key_enc: seal(secrets, plain.private_key),
    passphrase_enc: seal(secrets, plain.passphrase),
    enable_secret_enc: seal(secrets, plain.enable_secret),
  };
  return db
    .transaction(() => {
      const usage = checkUsageInput(db, actor, input.group_ids === undefined ? defaultUsage(db, actor) : input.group_ids);
      const id = withNameCheck(write.name, () => insertCredentialRow(db, write, Date.now()));
      setUsageGroups(db, id, usage);
      const created = getCredential(db, id);
      recordAudit(db, actor, {
        action: 'credential.create',
        target: `credential ${id}`,
        changes: { ...changesBetween(null, auditView(created)), ...secretChanges(plain, true) },
        details: { name: created.name },
      });
      return created;
    })
    .immediate();
}

export function updateCredential(db: DB, actor: Actor, secrets: SecretBox, id: number, patch: CredentialPatch): Credential {
  authorize(actor, CREDENTIAL_OPS.update);
  // A passphrase belongs to its key: removing the key without naming the passphrase removes both.
  const effective: CredentialPatch = { ...patch };
  if (patch.private_key === null && patch.passphrase === undefined) effective.passphrase = null;
  const checkKey = effective.private_key !== undefined || effective.passphrase !== undefined;

  // The key check can take a good part of a second (bcrypt KDF), so it runs before the write lock is taken.
  const checked = getCredentialSecretRow(db, id);
  if (!checked) throw ApiError.notFound(`credential ${id}`);
  if (checkKey) {
    const key = effective.private_key !== undefined ? effective.private_key : open(secrets, checked.private_key_enc);
    const pass = effective.passphrase !== undefined ? effective.passphrase : open(secrets, checked.passphrase_enc);
    checkKeyPair(key, pass);
  }

  // IMMEDIATE: the merge reads the row the write replaces, even when the CLI or web interface writes concurrently.
  return db
    .transaction(() => {
      const before = getCredential(db, id);
      const stored = getCredentialSecretRow(db, id);
      if (!stored) throw ApiError.notFound(`credential ${id}`);
      if (checkKey && !(sameBlob(stored.private_key_enc, checked.private_key_enc) && sameBlob(stored.passphrase_enc, checked.passphrase_enc))) {
        throw new ApiError('CONFLICT', `credential ${id} got another key or passphrase while this update was being checked; retry`);
      }
      requireLoginOwned(db, actor, before, effective);
      if (patch.group_ids !== undefined && JSON.stringify(patch.group_ids) !== JSON.stringify(before.group_ids)) {
        changeUsage(db, actor, before, patch.group_ids);
      }
      const write: CredentialWrite = {
        name: patch.name?.trim() ?? before.name,
        username: patch.username ?? before.username,
        description: patch.description ?? before.description,
        password_enc: next(secrets, effective, stored, 'password'),
        private_key_enc: next(secrets, effective, stored, 'private_key'),
        passphrase_enc: next(secrets, effective, stored, 'passphrase'),
        enable_secret_enc: next(secrets, effective, stored, 'enable_secret'),
      };
      withNameCheck(write.name, () => updateCredentialRow(db, id, write, Date.now()));
      const after = getCredential(db, id);
      const changes = { ...changesBetween(auditView(before), auditView(after)), ...secretChanges(effective, false) };
      if (Object.keys(changes).length)
        recordAudit(db, actor, { action: 'credential.update', target: `credential ${id}`, changes, details: { name: after.name } });
      return after;
    })
    .immediate();
}

/**
 * What a credential logs in with (user name and secrets) is shared by every device using it: changing it for
 * devices outside the actor's scope would break their backups (or hand them another login), so a scoped actor may
 * change it only while every device using it is in their scope. Reads stay as spec 4.6 rule 4 says (permission only).
 */
function requireLoginOwned(db: DB, actor: Actor, before: Credential, patch: CredentialPatch): void {
  const fields: string[] = SECRET_FIELDS.filter((f) => patch[f] !== undefined);
  if (patch.username !== undefined && patch.username !== before.username) fields.unshift('username');
  if (fields.length === 0) return;
  requireOwnsSharedThing(
    actor,
    { label: `Credential ${before.id}`, use: 'device', details: { credential_id: before.id, fields } },
    (groups) => countCredentialDevicesOutside(db, before.id, groups),
    `its ${fields.join(', ')} changed`,
  );
}

/**
 * Moving a credential's usage scope decides where its secret may go: the actor must reach both the old and the
 * new scope (else a scoped user could take over a credential meant for other groups), and no device using it
 * may be left outside the new one.
 */
function changeUsage(db: DB, actor: Actor, before: Credential, wanted: number[] | null): void {
  if (!usageWithinScope(actor, before.group_ids)) {
    throw denied(`credential ${before.id} may be used beyond your device-group scope, so you cannot change where it may be used`, { field: 'group_ids' });
  }
  const usage = checkUsageInput(db, actor, wanted);
  setUsageGroups(db, before.id, usage);
  const stranded = devicesOutsideUsage(db, before.id);
  if (stranded.length) {
    throw new ApiError(
      'CONFLICT',
      `devices ${stranded.map((d) => d.name).join(', ')} use credential ${before.id} and are outside the new usage scope; give them another credential first`,
      { device_ids: stranded.map((d) => d.id) },
    );
  }
}

export function deleteCredential(db: DB, actor: Actor, id: number): void {
  authorize(actor, CREDENTIAL_OPS.delete);
  db.transaction(() => {
    const before = getCredential(db, id);
    if (before.device_count > 0) throw inUseError(id, before.device_count);
    deleteCredentialRow(db, id);
    recordAudit(db, actor, {
      action: 'credential.delete',
      target: `credential ${id}`,
      changes: removedFields(auditView(before)),
      details: { name: before.name },
    });
  }).immediate(); // the write lock is held from the count to the delete, so no device can be added in between
}

/** The credential in clear text, for the backup runner only. Never pass the result to a response or a log line. */
export function getDecryptedCredential(db: DB, secrets: SecretBox, id: number): DecryptedCredential | undefined {
  const row = getCredentialSecretRow(db, id);
  if (!row) return undefined;
  return {
    username: row.username,
    password: open(secrets, row.password_enc),
    private_key: open(secrets, row.private_key_enc),
    passphrase: open(secrets, row.passphrase_enc),
    enable_secret: open(secrets, row.enable_secret_enc),
  };
}

function inUseError(id: number, devices: number): ApiError {
  return new ApiError(
    'RESOURCE_CREDENTIAL_IN_USE',
    `credential ${id} is used by ${devices} device${devices === 1 ? '' : 's'}; give them another credential first`,
    { device_count: devices },
  );
}

function withNameCheck<T>(name: string, write: () => T): T {
  try {
    return write();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ApiError('CREDENTIAL_NAME_EXISTS', `a credential named "${name}" already exists`);
    throw err;
  }
}

function sameBlob(a: Buffer | null, b: Buffer | null): boolean {
  return a === null || b === null ? a === b : a.equals(b);
}

function seal(secrets: SecretBox, plain: string | null): Buffer | null {
  return plain === null ? null : secrets.encrypt(plain);
}

function open(secrets: SecretBox, blob: Buffer | null): string | null {
  return blob === null ? null : secrets.decrypt(blob);
}

/** The new blob of one secret: kept when omitted, cleared by null, re-encrypted (fresh IV) when given. */
function next(secrets: SecretBox, patch: CredentialPatch, stored: CredentialSecretRow, field: SecretField): Buffer | null {
  const value = patch[field];
  if (value === undefined) return stored[`${field}_enc`];
  return seal(secrets, value);
}

/**
 * A private key must be one OpenSSH/PEM private key that the passphrase (if any) opens: a bad key would otherwise
 * surface only at the next backup, as an authentication failure on every device using it.
 */
function checkKeyPair(privateKey: string | null, passphrase: string | null): void {
  const errors: FieldError[] = [];
  const rounds = privateKey === null ? null : opensshKdfRounds(privateKey);
  if (privateKey === null) {
    if (passphrase !== null) errors.push({ field: 'passphrase', message: 'a passphrase is only used with a private_key' });
  } else if (rounds !== null && rounds > MAX_KDF_ROUNDS) {
    errors.push({
      field: 'private_key',
      message: `is encrypted with ${rounds} bcrypt KDF rounds; at most ${MAX_KDF_ROUNDS} are accepted (re-encrypt it with ssh-keygen -p -a ${MAX_KDF_ROUNDS} or fewer)`,
    });
  } else {
    const parsed = ssh2.utils.parseKey(privateKey, passphrase ?? undefined);
    if (parsed instanceof Error) {
      // Asking again without a passphrase tells "wrong or missing passphrase" apart from "not a key".
      const bare = passphrase === null ? parsed : ssh2.utils.parseKey(privateKey);
      const encrypted = bare instanceof Error && /passphrase/i.test(bare.message);
      if (encrypted && passphrase === null) {
        errors.push({ field: 'passphrase', message: 'the private_key is encrypted; give its passphrase' });
      } else if (encrypted) {
        errors.push({ field: 'passphrase', message: 'does not decrypt the private_key (wrong passphrase)' });
      } else {
        errors.push({ field: 'private_key', message: `is not a valid OpenSSH or PEM private key (${parsed.message})` });
      }
    } else if (Array.isArray(parsed) || !parsed.isPrivateKey()) {
      errors.push({ field: 'private_key', message: 'must be a single private key (this is a public key or several keys)' });
    }
  }
  if (errors.length) throw ApiError.validation(errors, 'Invalid private key or passphrase');
}

/**
 * ssh2 derives the key of an encrypted OpenSSH key with a pure-JavaScript bcrypt_pbkdf that blocks the event loop
 * for about 13 ms per round (ssh-keygen's default of 16 rounds: ~0.2 s; "-a 100": ~1.3 s). The round count is
 * chosen by whoever wrote the key, so it is capped before ssh2 sees the key; 128 still admits the common "-a 100".
 */
const MAX_KDF_ROUNDS = 128;
const OPENSSH_BLOCK = /-----BEGIN OPENSSH PRIVATE KEY-----([\s\S]*?)-----END OPENSSH PRIVATE KEY-----/;
const OPENSSH_MAGIC = 'openssh-key-v1\0';

/** The bcrypt round count of an encrypted OpenSSH-format key, or null (not that format, unencrypted, or malformed). */
function opensshKdfRounds(text: string): number | null {
  const m = OPENSSH_BLOCK.exec(text);
  if (!m) return null;
  const buf = Buffer.from(m[1].replace(/\s+/g, ''), 'base64');
  if (buf.toString('latin1', 0, OPENSSH_MAGIC.length) !== OPENSSH_MAGIC) return null;
  try {
    let off = OPENSSH_MAGIC.length;
    const field = () => {
      const len = buf.readUInt32BE(off);
      const value = buf.subarray(off + 4, off + 4 + len);
      off += 4 + len;
      return value;
    };
    field(); // cipher name
    if (field().toString('latin1') !== 'bcrypt') return null;
    const options = field(); // string salt, uint32 rounds
    return options.readUInt32BE(4 + options.readUInt32BE(0));
  } catch {
    return null; // truncated: ssh2 rejects it with its own message
  }
}

/** A deleted record's audited fields as before/after pairs (after: null). */
function removedFields(before: object): AuditChanges {
  const out: AuditChanges = {};
  for (const [k, v] of Object.entries(before)) out[k] = { before: v ?? null, after: null };
  return out;
}

/** The credential reads a door offers: the reader's own credentials.view (CREDENTIAL_OPS); never a secret. */
export function listCredentialsFor(db: DB, reader: Principal, opts: { page: number; limit: number; q?: string }): { items: Credential[]; total: number } {
  authorize(reader, CREDENTIAL_OPS.list);
  return listCredentials(db, opts);
}

export function getCredentialFor(db: DB, reader: Principal, id: number): Credential {
  authorize(reader, CREDENTIAL_OPS.get);
  return getCredential(db, id);
}
