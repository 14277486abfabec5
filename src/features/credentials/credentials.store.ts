// Queries for credentials. The public columns (with usage counts) and the encrypted secret columns are read apart.
import type { DB } from '../../db/open';
import { statementSet } from '../../db/statements';

/** What may leave the appliance: secrets appear only as "is set" flags. */
export interface CredentialRow {
  id: number;
  name: string;
  username: string;
  description: string;
  has_password: number;
  has_private_key: number;
  has_passphrase: number;
  has_enable_secret: number;
  device_count: number;
  created_at: number;
  updated_at: number;
}

/** The AES-GCM blobs; only the credential service reads these, and only to decrypt or carry them over. */
export interface CredentialSecretRow {
  id: number;
  username: string;
  password_enc: Buffer | null;
  private_key_enc: Buffer | null;
  passphrase_enc: Buffer | null;
  enable_secret_enc: Buffer | null;
}

export interface CredentialWrite {
  name: string;
  username: string;
  description: string;
  password_enc: Buffer | null;
  private_key_enc: Buffer | null;
  passphrase_enc: Buffer | null;
  enable_secret_enc: Buffer | null;
}

export interface Credential {
  id: number;
  name: string;
  username: string;
  description: string;
  has_password: boolean;
  has_private_key: boolean;
  has_passphrase: boolean;
  has_enable_secret: boolean;
  device_count: number;
  /** Usage scope: the groups (subgroups included) whose devices may use it; null: devices anywhere. */
  group_ids: number[] | null;
  created_at: number;
  updated_at: number;
}

export function toCredential(row: CredentialRow, groupIds: number[] | null): Credential {
  return {
    id: row.id,
    name: row.name,
    username: row.username,
    description: row.description,
    has_password: row.has_password === 1,
    has_private_key: row.has_private_key === 1,
    has_passphrase: row.has_passphrase === 1,
    has_enable_secret: row.has_enable_secret === 1,
    device_count: row.device_count,
    group_ids: groupIds,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

// device_count uses the devices_credential index: one index probe per listed credential.
const PUBLIC_COLUMNS = `c.id, c.name, c.username, c.description,
  c.password_enc IS NOT NULL AS has_password, c.private_key_enc IS NOT NULL AS has_private_key,
  c.passphrase_enc IS NOT NULL AS has_passphrase, c.enable_secret_enc IS NOT NULL AS has_enable_secret,
  (SELECT count(*) FROM devices d WHERE d.credential_id = c.id) AS device_count, c.created_at, c.updated_at`;

// A substring filter cannot use a b-tree index; the table holds tens to hundreds of rows, so the scan is cheap.
const FILTER = '(@q IS NULL OR instr(lower(c.name), @q) > 0)';

function prepareStatements(db: DB) {
  return {
    count: db.prepare(`SELECT count(*) FROM credentials c WHERE ${FILTER}`).pluck(),
    page: db.prepare(`SELECT ${PUBLIC_COLUMNS} FROM credentials c WHERE ${FILTER} ORDER BY c.id LIMIT @limit OFFSET @offset`),
    get: db.prepare(`SELECT ${PUBLIC_COLUMNS} FROM credentials c WHERE c.id = ?`),
    secrets: db.prepare('SELECT id, username, password_enc, private_key_enc, passphrase_enc, enable_secret_enc FROM credentials WHERE id = ?'),
    insert: db.prepare(
      `INSERT INTO credentials (name, username, description, password_enc, private_key_enc, passphrase_enc, enable_secret_enc, created_at, updated_at)
       VALUES (@name, @username, @description, @password_enc, @private_key_enc, @passphrase_enc, @enable_secret_enc, @now, @now)`,
    ),
    update: db.prepare(
      `UPDATE credentials SET name = @name, username = @username, description = @description, password_enc = @password_enc,
              private_key_enc = @private_key_enc, passphrase_enc = @passphrase_enc, enable_secret_enc = @enable_secret_enc,
              updated_at = @now
        WHERE id = @id`,
    ),
    remove: db.prepare('DELETE FROM credentials WHERE id = ?'),
  };
}

// Prepared once per database handle; a closed handle's entry goes with it.
const stmts = statementSet(prepareStatements);

export interface CredentialFilter {
  /** Lower-cased name substring, or null for all. */
  q: string | null;
}

export function countCredentialRows(db: DB, f: CredentialFilter): number {
  return stmts(db).count.get({ q: f.q }) as number;
}

export function listCredentialRows(db: DB, f: CredentialFilter, offset: number, limit: number): CredentialRow[] {
  return stmts(db).page.all({ q: f.q, limit, offset }) as CredentialRow[];
}

export function getCredentialRow(db: DB, id: number): CredentialRow | undefined {
  return stmts(db).get.get(id) as CredentialRow | undefined;
}

export function getCredentialSecretRow(db: DB, id: number): CredentialSecretRow | undefined {
  return stmts(db).secrets.get(id) as CredentialSecretRow | undefined;
}

export function insertCredentialRow(db: DB, w: CredentialWrite, now: number): number {
  return Number(stmts(db).insert.run({ ...w, now }).lastInsertRowid);
}

export function updateCredentialRow(db: DB, id: number, w: CredentialWrite, now: number): void {
  stmts(db).update.run({ ...w, id, now });
}

export function deleteCredentialRow(db: DB, id: number): number {
  return stmts(db).remove.run(id).changes;
}
