// Queries for API keys: stored as SHA-256 digests only, looked up by that digest.
import { GenerationMemo } from '../../db/generation';
import type { DB } from '../../db/open';
import { statementSet } from '../../db/statements';

export interface ApiKeyRow {
  id: number;
  key_hash: Buffer;
  prefix: string;
  name: string;
  user_id: number;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface ApiKeyListRow extends ApiKeyRow {
  username: string;
  /** When the key was seen in a URL's query string (schema 0007), or null. */
  exposed_at: number | null;
}

/** The whole authentication lookup: key, owner and role in one indexed query. */
export interface KeyAuthRow {
  key_id: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
  user_id: number;
  username: string;
  disabled: number;
  scope_all: number;
  timezone: string | null;
  role_id: number;
  role_name: string;
  role_builtin: number;
}

/** The statements of the per-request authentication path, prepared once per database handle. */
function prepareAuthStatements(db: DB) {
  return {
    findKey: db.prepare(
      `SELECT k.id AS key_id, k.expires_at, k.revoked_at, k.last_used_at,
              u.id AS user_id, u.username, u.disabled, u.scope_all, u.timezone,
              r.id AS role_id, r.name AS role_name, r.builtin AS role_builtin
         FROM api_keys k JOIN users u ON u.id = k.user_id JOIN roles r ON r.id = u.role_id
        WHERE k.key_hash = ?`,
    ),
    touch: db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?'),
    epoch: db.prepare('SELECT epoch FROM auth_epoch WHERE id = 1').pluck(),
  };
}

const authStatements = statementSet(prepareAuthStatements);

export function findKeyForAuth(db: DB, hash: Buffer): KeyAuthRow | undefined {
  return authStatements(db).findKey.get(hash) as KeyAuthRow | undefined;
}

const epochMemo = new GenerationMemo<'epoch', number>(1);

/**
 * Moves whenever a key, user, role, permission, scope or the group tree changes (schema/0004 triggers). Read
 * again only once the database generation has moved: on a quiet database a request costs no query here.
 */
export function currentAuthEpoch(db: DB): number {
  return epochMemo.get(db, 'epoch', readAuthEpoch);
}

function readAuthEpoch(db: DB): number {
  return authStatements(db).epoch.get() as number;
}

export function touchKey(db: DB, id: number, at: number): void {
  authStatements(db).touch.run(at, id);
}

export function insertKey(db: DB, k: Omit<ApiKeyRow, 'id' | 'last_used_at' | 'revoked_at'>): number {
  const info = db
    .prepare('INSERT INTO api_keys (key_hash, prefix, name, user_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)')
    .run(k.key_hash, k.prefix, k.name, k.user_id, k.created_at, k.expires_at);
  return Number(info.lastInsertRowid);
}

export function listKeyRows(db: DB, userId?: number): ApiKeyListRow[] {
  const base = `SELECT k.*, u.username, x.exposed_at FROM api_keys k JOIN users u ON u.id = k.user_id
                  LEFT JOIN api_key_exposures x ON x.key_id = k.id`;
  return (
    userId === undefined ? db.prepare(`${base} ORDER BY k.id`).all() : db.prepare(`${base} WHERE k.user_id = ? ORDER BY k.id`).all(userId)
  ) as ApiKeyListRow[];
}

export function getKeyRow(db: DB, id: number): ApiKeyListRow | undefined {
  return db
    .prepare(
      `SELECT k.*, u.username, x.exposed_at FROM api_keys k JOIN users u ON u.id = k.user_id
         LEFT JOIN api_key_exposures x ON x.key_id = k.id WHERE k.id = ?`,
    )
    .get(id) as ApiKeyListRow | undefined;
}

export function revokeKeyRow(db: DB, id: number, at: number): boolean {
  return db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(at, id).changes > 0;
}

/** The key with this digest, whatever its state (the key-in-URL check). */
export function findKeyIdByHash(db: DB, hash: Buffer): number | undefined {
  return db.prepare('SELECT id FROM api_keys WHERE key_hash = ?').pluck().get(hash) as number | undefined;
}

/** Record that a key was seen in a URL; false when it already was. */
export function insertKeyExposure(db: DB, keyId: number, at: number, requestId: string | null): boolean {
  return db.prepare('INSERT OR IGNORE INTO api_key_exposures (key_id, exposed_at, request_id) VALUES (?, ?, ?)').run(keyId, at, requestId).changes > 0;
}
