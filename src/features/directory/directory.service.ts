// Directory sign-in and re-check: the mapping turned into role and scope, directory users created and kept in step, each step audited (door ldap).
import type { Logger } from 'pino';
import type { DB } from '../../db/open';
import type { LdapConfig, LdapMapping } from '../../config/ldap-config';
import { changesBetween, recordAnonymousAudit } from '../audit/audit.service';
import { getRoleById, getRoleByName } from '../roles/roles.store';
import { deleteUserSessions, listScopeGroupIds, replaceScopeGroups } from '../users/users.store';
import { DirectoryUnavailableError, authenticateDirectoryUser, lookupDirectoryUser, type DirectoryUser } from './directory.ldap';
import { matchMapping, type MappingMatch } from './directory.mapping';
import { getUserSourceRow, groupIdsNamed, insertDirectoryUser, listDirectoryUsersInUse, updateDirectoryUser, type DirectoryUserRow } from './directory.store';

export { DirectoryUnavailableError };

/** What the mapping gives a directory user: a role and a scope (null: all groups), or why it gives nothing. */
export type DirectoryAccess =
  | { ok: true; match: MappingMatch; roleId: number; role: string; groups: number[] | null }
  | { ok: false; reason: 'no_mapping' | 'disabled' | 'not_found' | 'mapping_invalid'; detail: string; match?: MappingMatch };

/** Evaluate the mapping for what the directory said about a user (shared by sign-in, re-check and `auth test-ldap`). */
export function accessFor(db: DB, cfg: LdapConfig, user: DirectoryUser | null): DirectoryAccess {
  if (!user) return { ok: false, reason: 'not_found', detail: 'not found by user_filter under user_base' };
  if (user.disabled) return { ok: false, reason: 'disabled', detail: 'the account is disabled in the directory' };
  const match = matchMapping(cfg.map, user.groups);
  if (!match) return { ok: false, reason: 'no_mapping', detail: "none of the user's groups is in [[auth.ldap.map]]" };
  return accessOfMatch(db, match);
}

/** The role and scope a matched mapping entry gives, or why that entry cannot be used (shared with OIDC's mapping). */
export function accessOfMatch(db: DB, match: MappingMatch): DirectoryAccess {
  const role = getRoleByName(db, match.mapping.role);
  if (!role) return { ok: false, reason: 'mapping_invalid', detail: `map[${match.index}]: role "${match.mapping.role}" does not exist`, match };
  if (match.mapping.scope.includes('all')) return { ok: true, match, roleId: role.id, role: role.name, groups: null };
  const groups: number[] = [];
  for (const name of match.mapping.scope) {
    const ids = groupIdsNamed(db, name);
    if (ids.length !== 1) {
      const why = ids.length ? `names ${ids.length} device groups` : 'is no device group';
      return { ok: false, reason: 'mapping_invalid', detail: `map[${match.index}]: scope "${name}" ${why}`, match };
    }
    groups.push(ids[0]);
  }
  return { ok: true, match, roleId: role.id, role: role.name, groups: [...new Set(groups)].sort((a, b) => a - b) };
}

export type DirectorySignIn =
  | { result: 'ok'; userId: number; username: string }
  | { result: 'bad' }
  | { result: 'disabled'; userId: number | null; username: string }
  | { result: 'refused'; detail: string }
  | { result: 'unavailable'; message: string };

const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

interface AuditContext {
  address: string;
  requestId: string | null;
  /** Where the referrals the directory returned (and that were not followed) are reported. */
  log?: Pick<Logger, 'info'>;
}

/** One line naming the referrals a directory returned and that were ignored (never followed). */
export function logReferrals(log: Pick<Logger, 'info'> | undefined, username: string, referrals: readonly string[]): void {
  if (referrals.length) log?.info({ username, referrals }, 'directory: referrals to other servers ignored (not followed)');
}

function audit(db: DB, ctx: AuditContext, actorName: string, userId: number | null, action: string, details: Record<string, unknown> = {}) {
  recordAnonymousAudit(db, { actorName, userId, door: 'ldap', action, target: `address ${ctx.address}`, requestId: ctx.requestId, details });
}

/** Apply the mapping's role and scope to a directory user (creating them at first sign-in); returns the audit changes. */
export function applyAccess(
  db: DB,
  row: DirectoryUserRow | undefined,
  username: string,
  dn: string,
  access: Extract<DirectoryAccess, { ok: true }>,
  source: 'ldap' | 'oidc' = 'ldap',
) {
  const scopeAll = access.groups === null;
  if (!row) {
    const id = insertDirectoryUser(db, { username, dn, role_id: access.roleId, scope_all: scopeAll, source });
    replaceScopeGroups(db, id, access.groups ?? []);
    return { id, created: true, changes: changesBetween(null, { role: access.role, scope: access.groups ?? 'all' }) };
  }
  const before = { role: getRoleById(db, row.role_id)?.name ?? '', scope: row.scope_all ? 'all' : listScopeGroupIds(db, row.id) };
  const changes = changesBetween(before as { role: string; scope: unknown }, { role: access.role, scope: access.groups ?? 'all' });
  updateDirectoryUser(db, row.id, { dn, role_id: access.roleId, scope_all: scopeAll });
  replaceScopeGroups(db, row.id, access.groups ?? []);
  return { id: row.id, created: false, changes };
}

/**
 * Sign in a user the directory knows (the caller has already let a local user of that name sign in locally).
 * Every outcome is audited with the door `ldap`; the password is never recorded.
 */
export async function signInWithDirectory(db: DB, cfg: LdapConfig, username: string, password: string, ctx: AuditContext): Promise<DirectorySignIn> {
  let user: DirectoryUser | 'bad';
  try {
    user = USERNAME.test(username) ? await authenticateDirectoryUser(cfg, username, password) : 'bad';
  } catch (err) {
    const message = err instanceof DirectoryUnavailableError ? err.message : `the directory cannot be reached (${(err as Error).message})`;
    audit(db, ctx, username, null, 'login.directory_error', { error: message });
    return { result: 'unavailable', message };
  }
  if (user === 'bad') {
    audit(db, ctx, username, null, 'login.failure');
    return { result: 'bad' };
  }
  logReferrals(ctx.log, username, user.referrals);
  const row = getUserSourceRow(db, username);
  // The name belongs to a user of the OIDC door: the directory must not take that account over (nor the other way).
  if (row?.source === 'oidc') {
    audit(db, ctx, row.username, row.id, 'login.refused_name_taken', { dn: user.dn, reason: 'the name belongs to an oidc account' });
    return { result: 'refused', detail: 'the name belongs to an oidc account' };
  }
  const access = accessFor(db, cfg, user);
  if (row && row.disabled === 1 && row.directory_disabled === 0) {
    audit(db, ctx, row.username, row.id, 'login.refused_disabled', { dn: user.dn });
    return { result: 'disabled', userId: row.id, username: row.username };
  }
  if (!access.ok) {
    const action = access.reason === 'disabled' ? 'login.refused_disabled' : 'login.refused_no_mapping';
    audit(db, ctx, username, row?.id ?? null, action, { dn: user.dn, reason: access.detail, groups: user.groups.slice(0, 50) });
    return access.reason === 'disabled' ? { result: 'disabled', userId: row?.id ?? null, username } : { result: 'refused', detail: access.detail };
  }
  const dn = user.dn;
  return db
    .transaction((): DirectorySignIn => {
      const applied = applyAccess(db, getUserSourceRow(db, username), username, dn, access);
      if (row?.directory_disabled === 1) updateDirectoryUser(db, row.id, { disabled: false, directory_disabled: false });
      const details = { dn, group: access.match.group, mapping: access.match.index, created: applied.created, enabled_again: row?.directory_disabled === 1 };
      recordAnonymousAudit(db, {
        actorName: username,
        userId: applied.id,
        door: 'ldap',
        action: 'login.success',
        target: `address ${ctx.address}`,
        requestId: ctx.requestId,
        details,
        changes: applied.changes,
      });
      return { result: 'ok', userId: applied.id, username: row?.username ?? username };
    })
    .immediate();
}

export interface RecheckResult {
  checked: number;
  disabled: string[];
  updated: string[];
  /** Set when the directory could not be asked: nobody was changed (sessions run on until it answers again). */
  unavailable?: string;
  /** Referrals the directory returned during the run, ignored (not followed). */
  referrals: string[];
}

/**
 * Look every directory user with a live session or API key up again with the service account. Gone, disabled, or
 * matching no mapping: the user is disabled (sessions deleted, API keys refused from the next request). A changed
 * mapping result is applied. Each change is audited with the door `ldap`.
 */
export async function recheckDirectoryUsers(db: DB, cfg: LdapConfig, now = Date.now()): Promise<RecheckResult> {
  const result: RecheckResult = { checked: 0, disabled: [], updated: [], referrals: [] };
  for (const row of listDirectoryUsersInUse(db, now)) {
    let user: DirectoryUser | null;
    try {
      user = await lookupDirectoryUser(cfg, row.username);
    } catch (err) {
      result.unavailable = (err as Error).message;
      return result;
    }
    result.checked++;
    for (const r of user?.referrals ?? []) if (!result.referrals.includes(r) && result.referrals.length < 20) result.referrals.push(r);
    settleRecheck(db, row, accessFor(db, cfg, user), user?.dn ?? '', 'ldap', result, now);
  }
  return result;
}

/**
 * One re-checked user: no access any more (gone, disabled, no mapping) disables them (sessions deleted, API keys refused
 * from the next request); a changed mapping result is applied. Each change is audited with the door that checked.
 */
export function settleRecheck(db: DB, row: DirectoryUserRow, access: DirectoryAccess, dn: string, door: 'ldap' | 'oidc', result: RecheckResult, now: number) {
  db.transaction(() => {
    if (!access.ok) {
      updateDirectoryUser(db, row.id, { disabled: true, directory_disabled: true }, now);
      const ended = deleteUserSessions(db, row.id);
      recordAnonymousAudit(db, {
        actorName: 'directory',
        userId: row.id,
        door,
        action: 'user.disable',
        target: `user ${row.username}`,
        requestId: null,
        details: { reason: access.detail, sessions_ended: ended, address: `${door === 'ldap' ? 'directory' : 'provider'} re-check`, requestId: null },
        changes: changesBetween({ disabled: false }, { disabled: true }),
      });
      result.disabled.push(row.username);
      return;
    }
    const applied = applyAccess(db, row, row.username, dn, access, door);
    if (Object.keys(applied.changes).length === 0) return;
    recordAnonymousAudit(db, {
      actorName: 'directory',
      userId: row.id,
      door,
      action: 'user.update',
      target: `user ${row.username}`,
      requestId: null,
      details: { group: access.match.group, mapping: access.match.index },
      changes: applied.changes,
    });
    result.updated.push(row.username);
  }).immediate();
}

/** Whether a username belongs to a local user (who signs in with the local password, never through the directory). */
export function isLocalUser(db: DB, username: string): boolean {
  const row = getUserSourceRow(db, username);
  return row !== undefined && row.source === 'local';
}

/** Mapping entries naming a role or device group this database lacks (serve warns at start; sign-in refuses them). */
export function mappingProblems(db: DB, map: readonly LdapMapping[], section: 'ldap' | 'oidc' = 'ldap'): string[] {
  const p: string[] = [];
  map.forEach((m, i) => {
    if (!getRoleByName(db, m.role)) p.push(`auth.${section}.map[${i}]: role "${m.role}" does not exist`);
    for (const g of m.scope)
      if (g !== 'all' && groupIdsNamed(db, g).length !== 1) p.push(`auth.${section}.map[${i}]: scope "${g}" must name exactly one device group`);
  });
  return p;
}
