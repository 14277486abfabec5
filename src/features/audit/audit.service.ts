// The audit trail: one row per state change, written by the service that made it, in the same transaction.
import type { DB } from '../../db/open';
import { doorOf, type Actor } from '../../identity/actor';
import type { Principal, Scope } from '../../identity/principal';
import { authorize } from '../../identity/policy';
import { AUDIT_OPS } from './audit.policy';
import {
  countAudit,
  deleteAuditBefore,
  devicesInGroups,
  insertAuditRow,
  jobItemsInGroups,
  listAuditActions,
  listAuditPage,
  type AuditFilter,
  type AuditRow,
} from './audit.store';
import { NAMED_KINDS, recordNames, type NamedKind } from './audit-names.store';
import { ID_FIELDS, TARGET_ID, type AuditNames } from './audit-view';

export type { AuditFilter, AuditRow };
export type { AuditNames };

/** Changed fields: before/after values, or "changed" for a secret (its value never reaches the trail). */
export type AuditChanges = Record<string, { before: unknown; after: unknown } | 'changed'>;

export interface AuditEntry {
  /** e.g. device.create, user.password_reset, backup.run */
  action: string;
  /** What was acted on, e.g. "device 12", "user alice". */
  target: string;
  changes?: AuditChanges;
  /** Other facts worth keeping (names, counts); never a secret. */
  details?: Record<string, unknown>;
}

/**
 * Write one audit row for the actor. Call it inside the transaction of the change it records, so both commit
 * or neither does.
 */
export function recordAudit(db: DB, actor: Actor, e: AuditEntry, at = Date.now()): void {
  const d = doorOf(actor);
  insertAuditRow(db, {
    at,
    userId: actor.principal.userId > 0 ? actor.principal.userId : null,
    actor: actor.principal.username,
    action: e.action,
    target: e.target,
    details: JSON.stringify(e.details ?? {}),
    door: d.door,
    doorRef: d.ref,
    requestId: actor.requestId,
    changes: JSON.stringify(e.changes ?? {}),
  });
}

/** An event with no signed-in actor (a failed login): who it names, from where. */
export function recordAnonymousAudit(
  db: DB,
  e: AuditEntry & { actorName: string; userId?: number | null; door: 'web' | 'api' | 'ldap' | 'oidc'; requestId?: string | null },
  at = Date.now(),
): void {
  insertAuditRow(db, {
    at,
    userId: e.userId ?? null,
    actor: e.actorName.slice(0, 64) || '(empty)',
    action: e.action,
    target: e.target,
    details: JSON.stringify(e.details ?? {}),
    door: e.door,
    doorRef: null,
    requestId: e.requestId ?? null,
    changes: JSON.stringify(e.changes ?? {}),
  });
}

/**
 * The fields of `after` whose values differ from `before`, as before/after pairs; `secret` fields appear only as
 * "changed" (and only when given a new value).
 */
export function changesBetween<T extends object>(
  before: T | null,
  after: Partial<T>,
  opts: { secret?: readonly string[]; ignore?: readonly string[] } = {},
): AuditChanges {
  const out: AuditChanges = {};
  const b = (before ?? {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries(after as Record<string, unknown>)) {
    if (v === undefined || opts.ignore?.includes(k)) continue;
    if (opts.secret?.includes(k)) {
      out[k] = 'changed';
      continue;
    }
    if (JSON.stringify(b[k]) !== JSON.stringify(v)) out[k] = { before: b[k] ?? null, after: v };
  }
  return out;
}

export interface AuditPage {
  items: AuditRow[];
  total: number;
}

/**
 * One page of the trail, newest first, with the total under the same filter. A reader with a limited device-group
 * scope does not see rows about devices outside it (names, addresses and credentials of devices they cannot read).
 */
export function listAudit(db: DB, scope: Scope, filter: AuditFilter, page: number, limit: number): AuditPage {
  if (scope.all) return db.transaction(() => ({ total: countAudit(db, filter), items: listAuditPage(db, filter, (page - 1) * limit, limit) }))();
  const groups = [...scope.groupIds];
  const f: AuditFilter = { ...filter, deviceGroups: groups };
  return db.transaction(() => ({
    total: countAudit(db, f),
    items: listAuditPage(db, f, (page - 1) * limit, limit).map((r) => withinScope(db, r, groups)),
  }))();
}

/**
 * A row that lists devices (a backup run of a group, of several devices or of all), as a scoped reader sees it: only
 * the ids of devices in their scope, the count of those, and a target that names no group outside the scope.
 */
function withinScope(db: DB, row: AuditRow, groups: readonly number[]): AuditRow {
  let details: Record<string, unknown>;
  try {
    details = JSON.parse(row.details) as Record<string, unknown>;
  } catch {
    return row;
  }
  if (!Array.isArray(details.device_ids)) return row;
  const listed = details.device_ids.filter((id): id is number => typeof id === 'number');
  const inScope = devicesInGroups(db, listed, groups);
  const ids = listed.filter((id) => inScope.has(id));
  const count = (typeof details.job === 'string' ? jobItemsInGroups(db, details.job, groups) : null) ?? ids.length;
  const group = /^group (\d+)$/.exec(row.target);
  const target = group && groups.includes(Number(group[1])) ? row.target : `${count} device${count === 1 ? '' : 's'} in your scope`;
  return { ...row, target, details: JSON.stringify({ ...details, devices: count, device_ids: ids, scope: 'only devices in your scope are shown' }) };
}

/**
 * The names of the devices, groups, credentials and templates a page of rows mentions by id (targets such as "device 18",
 * and the group_id/credential_id/template_id changes), where they still exist and the reader may see them.
 */
export function auditNames(db: DB, scope: Scope, rows: readonly AuditRow[]): AuditNames {
  const wanted = new Map<NamedKind, Set<number>>(NAMED_KINDS.map((k) => [k, new Set<number>()]));
  for (const r of rows) {
    const m = TARGET_ID.exec(r.target);
    if (m) wanted.get(m[1] as NamedKind)?.add(Number(m[2]));
    for (const [field, kind] of Object.entries(ID_FIELDS)) {
      const c = changeOf(r.changes, field);
      for (const v of [c?.before, c?.after]) if (typeof v === 'number') wanted.get(kind)?.add(v);
    }
  }
  const groups = scope.all ? null : [...scope.groupIds];
  const found = new Map(NAMED_KINDS.map((k) => [k, recordNames(db, k, [...(wanted.get(k) ?? [])], groups)]));
  return (kind, id) => found.get(kind)?.get(id);
}

function changeOf(json: string, field: string): { before?: unknown; after?: unknown } | undefined {
  try {
    const c = (JSON.parse(json) as Record<string, unknown>)[field];
    return c !== null && typeof c === 'object' ? c : undefined;
  } catch {
    return undefined;
  }
}

export function auditActions(db: DB): string[] {
  return listAuditActions(db);
}

/** Retention: delete the rows older than `before` (ms); returns how many went. */
export function pruneAudit(db: DB, before: number): number {
  return db.transaction(() => deleteAuditBefore(db, before)).immediate();
}

/** The trail as a door offers it (web page, CLI): the reader's own audit.view (AUDIT_OPS), then its scope. */
export function listAuditFor(db: DB, reader: Principal, filter: AuditFilter, page: number, limit: number): AuditPage {
  authorize(reader, AUDIT_OPS.list);
  return listAudit(db, reader.scope, filter, page, limit);
}
