// API keys: `cv_` + 32 random bytes, shown once; verified by SHA-256 (never argon2) and a cached principal on every request; a key seen in a URL is revoked as exposed.
import { bestEffortWrite } from '../maintenance/storage-health';
import { hasControlCharacters } from '../../lib/names';
import { createHash, hash, randomBytes } from 'node:crypto';
import type { DB } from '../../db/open';
import { ApiError } from '../../errors';
import type { Permission } from '../../identity/permissions';
import { SCOPE_ALL, type Principal, type Scope } from '../../identity/principal';
import { getRoleById, listRolePermissions } from '../roles/roles.store';
import { permissionsOfRole } from '../roles/roles.policy';
import { expandScopeGroupIds, getUserById, getUserByUsername, type UserRow } from '../users/users.store';
import { holdingOf, requireNotAbove } from '../users/users.policy';
import { changesBetween, recordAudit } from '../audit/audit.service';
import { SYSTEM_ACTOR, type Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import { USER_OPS } from '../users/users.policy';
import { APIKEY_OPS } from './apikeys.policy';
import {
  currentAuthEpoch,
  findKeyForAuth,
  findKeyIdByHash,
  getKeyRow,
  insertKey,
  insertKeyExposure,
  listKeyRows,
  revokeKeyRow,
  touchKey,
  type ApiKeyListRow,
  type KeyAuthRow,
} from './apikeys.store';

export const KEY_PREFIX = 'cv_';
const DISPLAY_PREFIX_LENGTH = 10;
const TOUCH_INTERVAL_MS = 60_000;
const KEY_PATTERN = /^cv_[A-Za-z0-9_-]{43}$/;

/** `exposed`: revoked because the key was seen in a URL (it is in some proxy or browser log). */
export type KeyState = 'active' | 'expired' | 'revoked' | 'exposed';

export interface ApiKeyInfo {
  id: number;
  name: string;
  prefix: string;
  owner: string;
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
  revoked_at: number | null;
  exposed_at: number | null;
  state: KeyState;
}

export function hashKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

function keyState(row: { revoked_at: number | null; expires_at: number | null }, now = Date.now()): KeyState {
  if (row.revoked_at !== null) return 'revoked';
  if (row.expires_at !== null && row.expires_at <= now) return 'expired';
  return 'active';
}

function toInfo(row: ApiKeyListRow): ApiKeyInfo {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    owner: row.username,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
    exposed_at: row.exposed_at,
    state: row.exposed_at !== null ? 'exposed' : keyState(row),
  };
}

/** Keys of another user are managed only with `users.update`, and only for a user not above the actor. */
function requireKeyOwnerReachable(db: DB, actor: Actor, owner: UserRow, what: string): void {
  if (owner.id === actor.principal.userId) return;
  authorize(actor, USER_OPS.update);
  requireNotAbove(actor, owner, holdingOf(db, owner, getRoleById(db, owner.role_id)!), what);
}

export function createApiKey(
  db: DB,
  actor: Actor,
  input: { username: string; name?: string; expiresInDays?: number | null },
): { key: string; info: ApiKeyInfo } {
  authorize(actor, APIKEY_OPS.create);
  const user = getUserByUsername(db, input.username);
  if (!user) throw ApiError.notFound(`user "${input.username}"`);
  requireKeyOwnerReachable(db, actor, user, 'create an API key for');
  const days = input.expiresInDays ?? null;
  if (days !== null && (!Number.isInteger(days) || days < 1 || days > 3650)) {
    throw ApiError.validation([{ field: 'expires_in_days', message: 'must be a whole number of days, 1-3650' }], 'expiry must be 1-3650 days');
  }
  const name = (input.name ?? '').trim().normalize('NFC');
  if (hasControlCharacters(input.name ?? ''))
    throw ApiError.validation([{ field: 'name', message: 'must not contain control characters' }], 'key name has control characters');
  if (name.length > 128) throw ApiError.validation([{ field: 'name', message: 'at most 128 characters' }], 'key name too long');
  const key = KEY_PREFIX + randomBytes(32).toString('base64url');
  const now = Date.now();
  return db
    .transaction(() => {
      const id = insertKey(db, {
        key_hash: hashKey(key),
        prefix: key.slice(0, DISPLAY_PREFIX_LENGTH),
        name,
        user_id: user.id,
        created_at: now,
        expires_at: days === null ? null : now + days * 86_400_000,
      });
      const info = toInfo(getKeyRow(db, id)!);
      recordAudit(db, actor, {
        action: 'apikey.create',
        target: `key ${id}`,
        changes: changesBetween(null, { owner: info.owner, name: info.name, prefix: info.prefix, expires_at: info.expires_at }),
      });
      return { key, info };
    })
    .immediate();
}

export function listApiKeys(db: DB, username?: string): ApiKeyInfo[] {
  if (username === undefined) return listKeyRows(db).map(toInfo);
  const user = getUserByUsername(db, username);
  if (!user) throw ApiError.notFound(`user "${username}"`);
  return listKeyRows(db, user.id).map(toInfo);
}

export function revokeApiKey(db: DB, actor: Actor, id: number): ApiKeyInfo {
  authorize(actor, APIKEY_OPS.revoke);
  return db
    .transaction(() => {
      const row = getKeyRow(db, id);
      if (!row) throw ApiError.notFound(`API key ${id}`);
      requireKeyOwnerReachable(db, actor, getUserById(db, row.user_id)!, 'revoke an API key of');
      const now = Date.now();
      if (revokeKeyRow(db, id, now)) {
        recordAudit(db, actor, {
          action: 'apikey.revoke',
          target: `key ${id}`,
          changes: changesBetween<{ revoked_at: number | null }>({ revoked_at: null }, { revoked_at: now }),
          details: { prefix: row.prefix, owner: row.username },
        });
      }
      return toInfo(getKeyRow(db, id)!);
    })
    .immediate();
}

/** Whether a query-string value has the shape of a key: only those are looked up (a digest each). */
export function hasKeyShape(value: string): boolean {
  return KEY_PATTERN.test(value);
}

/**
 * A value of a request's query string that has a key's shape: if it is a key on record (valid, expired or revoked)
 * the request is to be refused, and a still valid key is revoked and marked exposed, with an audit row (the key now
 * sits in proxy and browser logs). Returns whether it is a key on record. The value itself is never logged.
 */
export function exposeKeyInUrl(db: DB, value: string, requestId: string | null, now = Date.now()): boolean {
  if (!KEY_PATTERN.test(value)) return false;
  const id = findKeyIdByHash(db, hashKey(value));
  if (id === undefined) return false;
  db.transaction(() => {
    const row = getKeyRow(db, id)!;
    if (keyState(row, now) !== 'active' || row.exposed_at !== null) return;
    insertKeyExposure(db, id, now, requestId);
    revokeKeyRow(db, id, now);
    recordAudit(
      db,
      { ...SYSTEM_ACTOR, requestId },
      {
        action: 'apikey.exposed',
        target: `key ${id}`,
        changes: changesBetween<{ revoked_at: number | null }>({ revoked_at: null }, { revoked_at: now }),
        details: { prefix: row.prefix, owner: row.username, reason: 'the key was sent in a URL query string; it has been revoked' },
      },
    );
  }).immediate();
  return true;
}

/** Build the principal for a user: role permissions and expanded device-group scope, read fresh every time. */
export function loadPrincipal(
  db: DB,
  u: { user_id: number; username: string; role_id: number; role_name: string; role_builtin: number; scope_all: number; timezone: string | null },
  apiKeyId: number | null,
): Principal {
  const permissions: ReadonlySet<Permission> = new Set(
    permissionsOfRole({ name: u.role_name, builtin: u.role_builtin }, () => listRolePermissions(db, u.role_id)),
  );
  const scope: Scope = u.scope_all ? SCOPE_ALL : { all: false, groupIds: new Set(expandScopeGroupIds(db, u.user_id)) };
  return { userId: u.user_id, username: u.username, roleName: u.role_name, permissions, scope, timezone: u.timezone, apiKeyId };
}

type PrincipalSource = Parameters<typeof loadPrincipal>[1];

/** Per database handle: the principal of each user seen by a web session, with the auth epoch it was built at. */
const userPrincipals = new WeakMap<DB, Map<number, { epoch: number; principal: Principal }>>();
const MAX_CACHED_USERS = 10_000;

/**
 * A web session's principal (no API key), as loadPrincipal builds it, reused while the auth epoch stands still:
 * any change to the user, its role, permissions or scope, or the group tree moves the epoch (schema/0004).
 */
export function userPrincipal(db: DB, u: PrincipalSource): Principal {
  const epoch = currentAuthEpoch(db);
  let cache = userPrincipals.get(db);
  if (!cache) userPrincipals.set(db, (cache = new Map<number, { epoch: number; principal: Principal }>()));
  const hit = cache.get(u.user_id);
  if (hit && hit.epoch === epoch) return hit.principal;
  const principal = loadPrincipal(db, u, null);
  if (cache.size >= MAX_CACHED_USERS) cache.clear();
  cache.set(u.user_id, { epoch, principal });
  return principal;
}

interface CachedKey {
  epoch: number;
  row: KeyAuthRow;
  principal: Principal;
}

/** Per database handle: principals of keys seen, by key digest, each with the auth epoch it was read at. */
const keyCache = new WeakMap<DB, Map<string, CachedKey>>();
const MAX_CACHED_KEYS = 10_000;

/**
 * Verify a presented key. Returns the principal, or null for a key that is malformed, unknown, revoked,
 * expired, or whose user is disabled. The principal of a key seen before is reused while the auth epoch
 * (schema/0004) stands still, and rebuilt from the database as soon as anything it depends on changes, so a
 * change made anywhere, the CLI in another process included, still takes effect on the next request: one
 * one-row read per request instead of the key, role, permission and scope queries.
 */
export function authenticateApiKey(db: DB, key: string, now = Date.now()): Principal | null {
  if (!KEY_PATTERN.test(key)) return null;
  // The one-shot hash straight to text: a quarter of createHash's cost, paid by every request of the API.
  const id = hash('sha256', key, 'base64');
  // The epoch is read before the rows: a change landing in between is then seen as a newer epoch next time.
  const epoch = currentAuthEpoch(db);
  let cache = keyCache.get(db);
  if (!cache) keyCache.set(db, (cache = new Map<string, CachedKey>()));
  let entry = cache.get(id);
  if (!entry || entry.epoch !== epoch) {
    const row = findKeyForAuth(db, Buffer.from(id, 'base64'));
    if (!row || row.disabled === 1) {
      cache.delete(id);
      return null;
    }
    entry = { epoch, row, principal: loadPrincipal(db, row, row.key_id) };
    if (cache.size >= MAX_CACHED_KEYS) cache.clear();
    cache.set(id, entry);
  }
  const row = entry.row;
  if (keyState(row, now) !== 'active') return null;
  if (row.last_used_at === null || now - row.last_used_at >= TOUCH_INTERVAL_MS) {
    // Bookkeeping: a full disk must not turn every authenticated read into a 500.
    bestEffortWrite(db, 'api key last-used time', () => touchKey(db, row.key_id, now));
    row.last_used_at = now;
  }
  return entry.principal;
}
