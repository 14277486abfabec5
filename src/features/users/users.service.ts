// Users: create, list, disable, change password, role and device-group scope, each checked and audited; the first administrator.
import type { DB } from '../../db/open';
import { ApiError, isUniqueViolation } from '../../errors';
import { ADMINISTRATOR_ROLE } from '../../identity/permissions';
import { MIN_PASSWORD_LENGTH, generatePassword, hashPassword, verifyPassword } from '../../identity/password';
import { getRoleById, getRoleByName, type RoleRow } from '../roles/roles.store';
import { changesBetween, recordAudit } from '../audit/audit.service';
import { SYSTEM_ACTOR, type Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import { USER_OPS } from './users.policy';
import {
  holdingOf,
  isFull,
  requireFullAdminRemains,
  requireGrantable,
  requireNotAbove,
  requireNotSelf,
  rolePermissions,
  scopeOfGroups,
  type Holding,
} from './users.policy';
import { ensureBuiltinRoles } from '../roles/roles.service';
import { isValidTimeZone } from '../../config/config';
import { hasControlCharacters } from '../../lib/names';
import {
  deleteUserSessions,
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
  source: 'local' | 'ldap' | 'oidc';
}

export function validatePassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw ApiError.validation(
      [{ field: 'password', message: `must be at least ${MIN_PASSWORD_LENGTH} characters` }],
      `password must be at least ${MIN_PASSWORD_LENGTH} characters`,
    );
  }
  if (password.length > 1024) throw ApiError.validation([{ field: 'password', message: 'too long' }], 'password too long');
}

function checkGroups(db: DB, groups: readonly number[]): void {
  const found = existingGroupIds(db, groups);
  const missing = groups.filter((g) => !found.has(g));
  if (missing.length) {
    throw ApiError.validation(
      missing.map((g) => ({ field: 'groups', message: `group ${g} does not exist` })),
      `unknown group id: ${missing.join(', ')}`,
    );
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

function roleOrInvalid(db: DB, name: string): RoleRow {
  const role = getRoleByName(db, name);
  if (!role) throw ApiError.validation([{ field: 'role', message: `role "${name}" does not exist` }], `role "${name}" does not exist`);
  return role;
}

/** Create a user: `users.create`, and only a role and scope the actor holds themselves. */
export async function createUser(db: DB, actor: Actor, input: CreateUserInput): Promise<User> {
  authorize(actor, USER_OPS.create);
  const username = input.username.trim();
  if (hasControlCharacters(input.username) || !/^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/.test(username)) {
    throw ApiError.validation([{ field: 'username', message: 'use 1-64 letters, digits, dot, dash, underscore or @' }], 'invalid username');
  }
  validatePassword(input.password);
  if (input.timezone && !isValidTimeZone(input.timezone)) {
    throw ApiError.validation([{ field: 'timezone', message: 'unknown IANA time zone' }], 'unknown time zone');
  }
  const role = roleOrInvalid(db, input.role);
  const groups = input.groups ?? null;
  if (groups) checkGroups(db, groups);
  requireGrantable(actor, { name: role.name, permissions: rolePermissions(db, role) }, groups);
  const hash = await hashPassword(input.password);
  const mustChange = input.must_change_password ?? false;
  db.transaction(() => {
    try {
      const id = insertUser(db, {
        username,
        password_hash: hash,
        role_id: role.id,
        scope_all: groups === null,
        must_change_password: mustChange,
        timezone: input.timezone ?? null,
      });
      if (groups) replaceScopeGroups(db, id, groups);
    } catch (err) {
      if (isUniqueViolation(err)) throw new ApiError('USERNAME_EXISTS', `a user named "${username}" already exists`);
      throw err;
    }
    recordAudit(db, actor, {
      action: 'user.create',
      target: `user ${username}`,
      changes: changesBetween(
        null,
        { role: role.name, scope: groups ?? 'all', timezone: input.timezone ?? null, must_change_password: mustChange, password: 'x' },
        { secret: ['password'] },
      ),
    });
  }).immediate();
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
    source: row.source,
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

/** A directory user's password, role and scope belong to the directory and its mapping, not to this appliance. */
export function requireLocalUser(row: UserRow, what: string): void {
  if (row.source !== 'local') {
    throw new ApiError('CONFLICT', `${row.username} signs in through the directory: their ${what} come from [auth.${row.source}] and its mapping`);
  }
}

/** The target user with what they hold, after the actor's checks for acting on them. */
export function targetFor(db: DB, actor: Actor, username: string, what: string): { row: UserRow; role: RoleRow; held: Holding } {
  const row = requireUser(db, username);
  const role = getRoleById(db, row.role_id)!;
  const held = holdingOf(db, row, role);
  requireNotAbove(actor, row, held, what);
  return { row, role, held };
}

/** Disable or enable a user; disabling ends their web sessions (their API keys stop on the next request). */
export function setUserDisabled(db: DB, actor: Actor, username: string, disabled: boolean): User {
  authorize(actor, USER_OPS.update);
  return db
    .transaction(() => {
      const { row, held } = targetFor(db, actor, username, disabled ? 'disable' : 'enable');
      if (disabled) requireNotSelf(actor, row.id, 'disable');
      if (disabled && row.disabled === 0 && isFull(held)) {
        requireFullAdminRemains(db, (u) => u.id !== row.id, `disabling ${row.username}`);
      }
      updateUserFields(db, row.id, { disabled: disabled ? 1 : 0 });
      const ended = disabled ? deleteUserSessions(db, row.id) : 0;
      recordAudit(db, actor, {
        action: disabled ? 'user.disable' : 'user.enable',
        target: `user ${row.username}`,
        changes: changesBetween({ disabled: row.disabled === 1 }, { disabled }),
        details: ended ? { sessions_ended: ended } : {},
      });
      return toUser(db, { ...row, disabled: disabled ? 1 : 0 });
    })
    .immediate();
}

/**
 * Set a user's password (an administrator's reset, or the CLI's passwd). Every web session of the user ends, but
 * `keepSession` (the actor's own, when resetting their own password).
 */
export async function setUserPassword(
  db: DB,
  actor: Actor,
  username: string,
  password: string,
  opts: { mustChange?: boolean; keepSession?: Buffer | null } = {},
): Promise<void> {
  authorize(actor, USER_OPS.update);
  requireLocalUser(targetFor(db, actor, username, 'reset the password of').row, 'password and sign-in');
  validatePassword(password);
  const hash = await hashPassword(password);
  db.transaction(() => {
    // Read again after the hash: the user may have changed meanwhile (the checks hold on the current row).
    const { row } = targetFor(db, actor, username, 'reset the password of');
    updateUserFields(db, row.id, { password_hash: hash, must_change_password: opts.mustChange ? 1 : 0 });
    const ended = deleteUserSessions(db, row.id, opts.keepSession ?? null);
    recordAudit(db, actor, {
      action: 'user.password_reset',
      target: `user ${row.username}`,
      changes: {
        password: 'changed',
        ...changesBetween({ must_change_password: row.must_change_password === 1 }, { must_change_password: opts.mustChange === true }),
      },
      details: { sessions_ended: ended },
    });
  }).immediate();
}

/** A user changes their own password, proving the current one; their other sessions end. */
export async function changeOwnPassword(
  db: DB,
  actor: Actor,
  input: { current: string; password: string; confirm: string },
  keepSession: Buffer | null,
): Promise<void> {
  const username = actor.principal.username;
  const check = await checkUserPassword(db, username, input.current);
  if (check.result !== 'ok') throw ApiError.validation([{ field: 'current', message: 'The current password is not right.' }]);
  if (input.password !== input.confirm) throw ApiError.validation([{ field: 'confirm', message: 'The two new passwords differ.' }]);
  if (input.password === input.current) throw ApiError.validation([{ field: 'password', message: 'Choose a password different from the current one.' }]);
  validatePassword(input.password);
  const hash = await hashPassword(input.password);
  db.transaction(() => {
    const row = requireUser(db, username);
    updateUserFields(db, row.id, { password_hash: hash, must_change_password: 0 });
    const ended = deleteUserSessions(db, row.id, keepSession);
    recordAudit(db, actor, {
      action: 'user.password_change',
      target: `user ${row.username}`,
      changes: { password: 'changed' },
      details: { sessions_ended: ended },
    });
  }).immediate();
}

/**
 * Change a user's role and/or device-group scope (undefined: unchanged). Only with `users.update`, never one's own,
 * never a user above the actor, only a role and groups the actor holds, and never the last full administrator's.
 * The user's web sessions end: they log in again under the new rights.
 */
export function updateUserAccess(db: DB, actor: Actor, username: string, change: { role?: string; groups?: number[] | null }): User {
  authorize(actor, USER_OPS.update);
  return db
    .transaction(() => {
      const { row, role: oldRole, held } = targetFor(db, actor, username, 'change');
      requireLocalUser(row, 'role and scope');
      requireNotSelf(actor, row.id, change.role !== undefined ? 'change the role of' : 'change the scope of');
      const role = change.role !== undefined ? roleOrInvalid(db, change.role) : oldRole;
      const oldGroups = row.scope_all ? null : listScopeGroupIds(db, row.id);
      const groups = change.groups !== undefined ? change.groups : oldGroups;
      if (groups) checkGroups(db, groups);
      requireGrantable(actor, { name: role.name, permissions: rolePermissions(db, role) }, groups);
      const after: Holding = { permissions: rolePermissions(db, role), scope: scopeOfGroups(db, groups) };
      if (isFull(held) && !isFull(after) && row.disabled === 0) {
        requireFullAdminRemains(db, (u) => u.id !== row.id, `changing the role or scope of ${row.username}`);
      }
      updateUserFields(db, row.id, { role_id: role.id, scope_all: groups === null ? 1 : 0 });
      replaceScopeGroups(db, row.id, groups ?? []);
      const changes = changesBetween({ role: oldRole.name, scope: oldGroups ?? 'all' }, { role: role.name, scope: groups ?? 'all' });
      const ended = Object.keys(changes).length ? deleteUserSessions(db, row.id) : 0;
      recordAudit(db, actor, { action: 'user.update', target: `user ${row.username}`, changes, details: ended ? { sessions_ended: ended } : {} });
      return toUser(db, { ...row, role_id: role.id, scope_all: groups === null ? 1 : 0 });
    })
    .immediate();
}

export function setUserRole(db: DB, actor: Actor, username: string, roleName: string): User {
  return updateUserAccess(db, actor, username, { role: roleName });
}

export function setUserScope(db: DB, actor: Actor, username: string, groups: number[] | null): User {
  return updateUserAccess(db, actor, username, { groups });
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
    await createUser(db, SYSTEM_ACTOR, { username: 'admin', password: pw, role: ADMINISTRATOR_ROLE, must_change_password: password === undefined });
  } catch (err) {
    // Another process (CLI and server starting together) created it between our check and insert.
    if (err instanceof ApiError && err.code === 'USERNAME_EXISTS') return null;
    throw err;
  }
  return pw;
}

/** A user's own time zone (their profile), or another's with `users.update` over a user not above the actor. */
export function setUserTimezone(db: DB, actor: Actor, username: string, timezone: string | null): User {
  const row = requireUser(db, username);
  if (row.id !== actor.principal.userId) {
    authorize(actor, USER_OPS.update);
    targetFor(db, actor, username, 'change the profile of');
  }
  if (timezone && !isValidTimeZone(timezone)) {
    throw ApiError.validation([{ field: 'timezone', message: 'unknown IANA time zone' }], 'unknown time zone');
  }
  const tz = timezone || null;
  return db
    .transaction(() => {
      updateUserFields(db, row.id, { timezone: tz });
      recordAudit(db, actor, {
        action: 'user.profile_update',
        target: `user ${row.username}`,
        changes: changesBetween({ timezone: row.timezone }, { timezone: tz }),
      });
      return toUser(db, { ...row, timezone: tz });
    })
    .immediate();
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
