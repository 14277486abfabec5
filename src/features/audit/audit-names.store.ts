// Queries naming the records audit rows refer to by id (devices, groups, credentials, templates), for the audit page.
import type { DB } from '../../db/open';

/** The tables a kind of record lives in: a fixed list, so no table name ever comes from input. */
const TABLES = { device: 'devices', group: 'device_groups', credential: 'credentials', template: 'templates' } as const;
export type NamedKind = keyof typeof TABLES;
export const NAMED_KINDS = Object.keys(TABLES) as NamedKind[];

/**
 * The names of those of `ids` that still exist. `groups` (devices only): a scoped reader's groups, so a device outside
 * them keeps its id; null: every device.
 */
export function recordNames(db: DB, kind: NamedKind, ids: readonly number[], groups: readonly number[] | null = null): Map<number, string> {
  if (ids.length === 0) return new Map();
  const scoped = kind === 'device' && groups !== null;
  const rows = db
    .prepare(
      `SELECT id, name FROM ${TABLES[kind]} WHERE id IN (SELECT value FROM json_each(?))${scoped ? ' AND group_id IN (SELECT value FROM json_each(?))' : ''}`,
    )
    .all(...[JSON.stringify(ids), ...(scoped ? [JSON.stringify(groups)] : [])]) as { id: number; name: string }[];
  return new Map(rows.map((r) => [r.id, r.name]));
}
