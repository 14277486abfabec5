// Queries for device groups: rows with their path and device count, the tree, existence and ancestry checks.
import type { DB } from '../../db/open';
import type { Scope } from '../../identity/principal';
import { containsPattern, prepareCached } from '../devices/sql';

export interface GroupRow {
  id: number;
  name: string;
  parent_id: number | null;
  description: string;
  schedule: string | null;
  created_at: number;
  updated_at: number;
  /** The remote zone of its devices and subgroups without one of their own; null: inherit (schema 0026; written by collectors.service). */
  zone: string | null;
}

/** A group row with what the API derives from the tree: "A / B / C" and the devices in it and its subgroups. */
export interface GroupViewRow extends GroupRow {
  path: string;
  device_count: number;
}

export interface Group {
  id: number;
  name: string;
  parent_id: number | null;
  description: string;
  schedule: string | null;
  path: string;
  device_count: number;
  created_at: number;
  updated_at: number;
  zone: string | null;
}

export function toGroup(row: GroupViewRow): Group {
  return {
    id: row.id,
    name: row.name,
    parent_id: row.parent_id,
    description: row.description,
    schedule: row.schedule,
    path: row.path,
    device_count: row.device_count,
    created_at: row.created_at,
    updated_at: row.updated_at,
    zone: row.zone,
  };
}

export interface GroupFilter {
  /** Case-insensitive substring of the name. */
  q?: string;
  /** Direct children of this group; null: top-level groups only. */
  parent_id?: number | null;
}

/**
 * Adds path (ancestor names joined by " / ") and device_count to the rows of CTE `page`. `chain` walks up
 * to the root (depth-capped so a corrupt cycle cannot loop); `sub` walks down (UNION dedupes, which also stops
 * cycles). Only devices the caller's scope covers are counted, so a count never reveals devices it cannot list.
 */
const VIEW_SQL = (pageSql: string, scoped: boolean) => `
  WITH RECURSIVE
    page AS (${pageSql}),
    chain(root, parent_id, name, depth) AS (
      SELECT id, parent_id, name, 0 FROM page
      UNION ALL
      SELECT c.root, g.parent_id, g.name, c.depth + 1 FROM chain c JOIN device_groups g ON g.id = c.parent_id WHERE c.depth < 1000),
    sub(root, id) AS (
      SELECT id, id FROM page
      UNION
      SELECT s.root, g.id FROM sub s JOIN device_groups g ON g.parent_id = s.id),
    paths AS (SELECT root, group_concat(name, ' / ' ORDER BY depth DESC) AS path FROM chain GROUP BY root),
    counts AS (
      SELECT s.root, count(d.id) AS n FROM sub s LEFT JOIN devices d ON d.group_id = s.id
      ${scoped ? 'WHERE s.id IN (SELECT value FROM json_each(@scope_groups))' : ''}
      GROUP BY s.root)
  SELECT p.*, paths.path AS path, ifnull(counts.n, 0) AS device_count
    FROM page p JOIN paths ON paths.root = p.id LEFT JOIN counts ON counts.root = p.id
   ORDER BY p.id`;

/** Bind parameters of a scope: the JSON list of its group ids, or none for scope "all". */
function scopeParams(scope: Scope): Record<string, unknown> {
  return scope.all ? {} : { scope_groups: JSON.stringify([...scope.groupIds]) };
}

function filterSql(f: GroupFilter): { where: string; params: Record<string, unknown> } {
  const conds: string[] = [];
  const params: Record<string, unknown> = {};
  if (f.q) {
    conds.push(`name LIKE @q ESCAPE '\\'`);
    params.q = containsPattern(f.q);
  }
  if (f.parent_id === null) conds.push('parent_id IS NULL');
  else if (f.parent_id !== undefined) {
    conds.push('parent_id = @parent_id');
    params.parent_id = f.parent_id;
  }
  return { where: conds.length ? `WHERE ${conds.join(' AND ')}` : '', params };
}

export function countGroups(db: DB, f: GroupFilter): number {
  const { where, params } = filterSql(f);
  return (prepareCached(db, `SELECT count(*) AS n FROM device_groups ${where}`).get(params) as { n: number }).n;
}

/** One page of groups in id order, with path and the count of devices in `scope`. */
export function listGroupViewRows(db: DB, scope: Scope, f: GroupFilter, offset: number, limit: number): GroupViewRow[] {
  const { where, params } = filterSql(f);
  const sql = VIEW_SQL(`SELECT * FROM device_groups ${where} ORDER BY id LIMIT @limit OFFSET @offset`, !scope.all);
  return prepareCached(db, sql).all({ ...params, ...scopeParams(scope), limit, offset }) as GroupViewRow[];
}

export function getGroupViewRow(db: DB, scope: Scope, id: number): GroupViewRow | undefined {
  const sql = VIEW_SQL('SELECT * FROM device_groups WHERE id = @id', !scope.all);
  return prepareCached(db, sql).get({ id, ...scopeParams(scope) }) as GroupViewRow | undefined;
}

export function getGroupRow(db: DB, id: number): GroupRow | undefined {
  return prepareCached(db, 'SELECT * FROM device_groups WHERE id = ?').get(id) as GroupRow | undefined;
}

export function groupExists(db: DB, id: number): boolean {
  return prepareCached(db, 'SELECT 1 AS one FROM device_groups WHERE id = ?').get(id) !== undefined;
}

export type GroupTreeRow = Pick<GroupRow, 'id' | 'name' | 'parent_id' | 'description'>;

/** Every group, siblings in name order (the order the tree shows them in). */
export function listGroupTreeRows(db: DB): GroupTreeRow[] {
  return prepareCached(db, 'SELECT id, name, parent_id, description FROM device_groups ORDER BY name COLLATE NOCASE, id').all() as GroupTreeRow[];
}

/** Devices in `scope` directly in each group that has any (the devices_group index answers this without touching rows). */
export function directDeviceCounts(db: DB, scope: Scope): Map<number, number> {
  const where = scope.all ? 'group_id IS NOT NULL' : 'group_id IN (SELECT value FROM json_each(@scope_groups))';
  const sql = `SELECT group_id, count(*) AS n FROM devices WHERE ${where} GROUP BY group_id`;
  const rows = prepareCached(db, sql).all(scopeParams(scope)) as { group_id: number; n: number }[];
  return new Map(rows.map((r) => [r.group_id, r.n]));
}

export function insertGroup(db: DB, g: Pick<GroupRow, 'name' | 'parent_id' | 'description' | 'schedule'>, now = Date.now()): number {
  const info = prepareCached(
    db,
    `INSERT INTO device_groups (name, parent_id, description, schedule, created_at, updated_at)
     VALUES (@name, @parent_id, @description, @schedule, @now, @now)`,
  ).run({ ...g, now });
  return Number(info.lastInsertRowid);
}

export type GroupPatch = Partial<Pick<GroupRow, 'name' | 'parent_id' | 'description' | 'schedule'>>;

const PATCHABLE: readonly (keyof GroupPatch)[] = ['name', 'parent_id', 'description', 'schedule'];

export function updateGroupFields(db: DB, id: number, patch: GroupPatch, now = Date.now()): void {
  // Column names come from the fixed list above, never from input.
  const cols = PATCHABLE.filter((c) => patch[c] !== undefined);
  if (cols.length === 0) return;
  const set = cols.map((c) => `${c} = @${c}`).join(', ');
  const params: Record<string, unknown> = { id, now };
  for (const c of cols) params[c] = patch[c];
  prepareCached(db, `UPDATE device_groups SET ${set}, updated_at = @now WHERE id = @id`).run(params);
}

export function deleteGroupRow(db: DB, id: number): boolean {
  return prepareCached(db, 'DELETE FROM device_groups WHERE id = ?').run(id).changes > 0;
}

export function hasChildGroups(db: DB, id: number): boolean {
  return prepareCached(db, 'SELECT 1 AS one FROM device_groups WHERE parent_id = ? LIMIT 1').get(id) !== undefined;
}

export function hasDirectDevices(db: DB, id: number): boolean {
  return prepareCached(db, 'SELECT 1 AS one FROM devices WHERE group_id = ? LIMIT 1').get(id) !== undefined;
}

/** Whether `groupId` is `candidateId` itself or one of its ancestors (walking up from the candidate). */
export function isSelfOrAncestor(db: DB, groupId: number, candidateId: number): boolean {
  const row = prepareCached(
    db,
    `WITH RECURSIVE up(id, depth) AS (
       SELECT @candidate, 0
       UNION ALL
       SELECT g.parent_id, up.depth + 1 FROM device_groups g JOIN up ON g.id = up.id
        WHERE g.parent_id IS NOT NULL AND up.depth < 1000)
     SELECT 1 AS one FROM up WHERE id = @group LIMIT 1`,
  ).get({ candidate: candidateId, group: groupId });
  return row !== undefined;
}
