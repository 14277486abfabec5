// Users: create, list, disable, change password, role and device-group scope; the first administrator.
import type { DB } from '../../db/open';
import { ApiError, isUniqueViolation } from '../../errors';
import { ADMINISTRATOR_ROLE } from '../../identity/permissions';
import { MIN_PASSWORD_LENGTH, generatePassword, hashPassword, verifyPassword } from '../../identity/password';
import { getRoleById, getRoleByName } from '../roles/roles.store';
import { ensureBuiltinRoles } from '../roles/roles.service';
import { isValidTimeZone } from '../../config/config';
import { hasControlCharacters } from '../../lib/names';
import {
  existingGroupIds,
  getUserByUsername,
  insertUser,
  listScopeGroupIds,
  listUserRows,
  replaceScopeGroups,
  updateUserFields,
  type UserRow,
} from './users.store';

export interface User {
  id: number;
  username: string;
  role: string;
  scope: 'all' | number[];
  timezone: string | null;
  disabled: boolean;
  must_change_password: boolean;
  created_at: number;
}

export function validatePassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw ApiError.validation([{ field: 'password', message: `must be at least ${MIN_PASSWORD_LENGTH} characters` }], `password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (password.length > 1024) throw ApiError.validation([{ field: 'password', message: 'too long' }], 'password too long');
}

function checkGroups(db: DB, groups: readonly number[]): void {
  const found = existingGroupIds(db, groups);
  const missing = groups.filter((g) => !found.has(g));
  if (missing.length) {
    throw ApiError.validation(missing.map((g) => ({ field: 'groups', message: `group ${g} does not exist` })), `unknown group id: ${missing.join(', ')}`);
  }
}

export interface CreateUserInput {
  username: string;
  password: string;
  role: string;
  groups?: number[] | null;
  timezone?: string | null;
  must_change_password?: boolean;
}

export async function createUser(db: DB, input: CreateUserInput): Promise<User> {
  const username = input.username.trim();
  if (hasControlCharacters(input.username) || !/^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/.test(username)) {
    throw ApiError.validation([{ field: 'username', message: 'use 1-64 letters, digits, dot, dash, underscore or @' }], 'invalid username');
  }
  validatePassword(input.password);
  if (input.timezone && !isValidTimeZone(input.timezone)) {
    throw ApiError.validation([{ field: 'timezone', message: 'unknown IANA time zone' }], 'unknown time zone');
  }
  const role = getRoleByName(db, input.role);
  if (!role) throw ApiError.validation([{ field: 'role', message: `role "${input.role}" does not exist` }], `role "${input.role}" does not exist`);
  const groups = input.groups ?? null;
  if (groups) checkGroups(db, groups);
  const hash = await hashPassword(input.password);
  const id = db.transaction(() => {
    try {
      const id = insertUser(db, {
        username,
        password_hash: hash,
        role_id: role.id,
        scope_all: groups === null,
        must_change_password: input.must_change_password ?? false,
        timezone: input.timezone ?? null,
      });
      if (groups) replaceScopeGroups(db, id, groups);
      return id;
    } catch (err) {
      if (isUniqueViolation(err)) throw new ApiError('USERNAME_EXISTS', `a user named "${username}" already exists`);
      throw err;
    }
  })();
  void id;
  return getUser(db, username)!;
}

function toUser(db: DB, row: UserRow & { role_name?: string }): User {
  return {
    id: row.id,
    username: row.username,
    role: row.role_name ?? getRoleById(db, row.role_id)?.name ?? '',
    scope: row.scope_all ? 'all' : listScopeGroupIds(db, row.id),
    timezone: row.timezone,
    disabled: row.disabled === 1,
    must_change_password: row.must_change_password === 1,
    created_at: row.created_at,
  };
}

export function getUser(db: DB, username: string): User | undefined {
  const row = getUserByUsername(db, username);
  return row && toUser(db, row);
}

export function listUsers(db: DB): User[] {
  return listUserRows(db).map((r) => toUser(db, r));
}

function requireUser(db: DB, username: string): UserRow {
  const row = getUserByUsername(db, username);
  if (!row) throw ApiError.notFound(`user "${username}"`);
  return row;
}

export function setUserDisabled(db: DB, username: string, disabled: boolean): User {
  const row = requireUser(db, username);
  updateUserFields(db, row.id, { disabled: disabled ? 1 : 0 });
  return toUser(db, { ...row, disabled: disabled ? 1 : 0 });
}

export async function setUserPassword(db: DB, username: string, password: string, opts: { mustChange?: boolean } = {}): Promise<void> {
  const row = requireUser(db, username);
  validatePassword(password);
  updateUserFields(db, row.id, { password_hash: await hashPassword(password), must_change_password: opts.mustChange ? 1 : 0 });
}

export function setUserRole(db: DB, username: string, roleName: string): User {
  const row = requireUser(db, username);
  const role = getRoleByName(db, roleName);
  if (!role) throw ApiError.validation([{ field: 'role', message: `role "${roleName}" does not exist` }], `role "${roleName}" does not exist`);
  updateUserFields(db, row.id, { role_id: role.id });
  return toUser(db, { ...row, role_id: role.id });
}

export function setUserScope(db: DB, username: string, groups: number[] | null): User {
  const row = requireUser(db, username);
  if (groups) checkGroups(db, groups);
  db.transaction(() => {
    updateUserFields(db, row.id, { scope_all: groups === null ? 1 : 0 });
    replaceScopeGroups(db, row.id, groups ?? []);
  })();
  return toUser(db, { ...row, scope_all: groups === null ? 1 : 0 });
}

/**
 * First start: the administrator role and an `admin` user. Returns the generated password when the user
 * was created now (to be printed once), null when it already existed.
 */
export async function ensureFirstAdmin(db: DB, password?: string): Promise<string | null> {
  ensureBuiltinRoles(db);
  if (getUserByUsername(db, 'admin')) return null;
  const pw = password ?? generatePassword();
  try {
    await createUser(db, { username: 'admin', password: pw, role: ADMINISTRATOR_ROLE, must_change_password: password === undefined });
  } catch (err) {
    // Another process (CLI and server starting together) created it between our check and insert.
    if (err instanceof ApiError && err.code === 'USERNAME_EXISTS') return null;
    throw err;
  }
  return pw;
}

export function setUserTimezone(db: DB, username: string, timezone: string | null): User {
  const row = requireUser(db, username);
  if (timezone && !isValidTimeZone(timezone)) {
    throw ApiError.validation([{ field: 'timezone', message: 'unknown IANA time zone' }], 'unknown time zone');
  }
  updateUserFields(db, row.id, { timezone: timezone || null });
  return toUser(db, { ...row, timezone: timezone || null });
}

// Verified when the username is unknown, so that a wrong name takes as long as a wrong password.
let dummyHash: Promise<string> | undefined;

export type PasswordCheck =
  | { result: 'ok'; userId: number; username: string; mustChangePassword: boolean }
  | { result: 'disabled'; userId: number; username: string }
  | { result: 'bad' };

/** Check a username and password (web login). A disabled user is told so only after giving the right password. */
export async function checkUserPassword(db: DB, username: string, password: string): Promise<PasswordCheck> {
  const row = username.length <= 64 ? getUserByUsername(db, username.trim()) : undefined;
  if (!row || password.length > 1024) {
    await verifyPassword(await (dummyHash ??= hashPassword(generatePassword())), password.slice(0, 1024));
    return { result: 'bad' };
  }
  if (!(await verifyPassword(row.password_hash, password))) return { result: 'bad' };
  if (row.disabled === 1) return { result: 'disabled', userId: row.id, username: row.username };
  return { result: 'ok', userId: row.id, username: row.username, mustChangePassword: row.must_change_password === 1 };
}
