// Queries of the line index of the newest configurations (schema 0029; docs/search-index.md): its upkeep and its lookups.
import type { DB } from '../../db/open';
import { prepareCached } from '../../db/statements';

/**
 * The upkeep's own connection commits with synchronous=NORMAL: the index is derived data, and a power loss may take its
 * last commits (each of which also keeps its devices listed stale) but never tears one.
 */
export function commitIndexWithoutFsync(db: DB): void {
  db.pragma('synchronous = NORMAL');
}

export interface StaleDeviceRow {
  device_id: number;
  seq: number;
  /** The device's newest successful version now; null when it has none or the device is gone. */
  hash: string | null;
  /** The version its index entry holds (undefined: no entry). */
  indexed_hash: string | null | undefined;
  /** The device still exists. */
  present: boolean;
}

/** Up to `limit` devices listed as stale, with their newest successful version and the one indexed. */
export function listStaleDevices(db: DB, limit: number): StaleDeviceRow[] {
  const rows = prepareCached(
    db,
    `SELECT s.device_id, s.seq,
            (SELECT b.config_snapshot_hash FROM backups b WHERE b.device_id = s.device_id AND b.success = 1 AND b.config_snapshot_hash IS NOT NULL
              ORDER BY b.started_at DESC, b.id DESC LIMIT 1) AS hash,
            d.hash AS indexed_hash, d.device_id IS NOT NULL AS has_entry, EXISTS (SELECT 1 FROM devices WHERE id = s.device_id) AS present
       FROM search_stale s LEFT JOIN search_docs d ON d.device_id = s.device_id
      ORDER BY s.device_id LIMIT ?`,
  ).all(limit) as (Omit<StaleDeviceRow, 'present'> & { has_entry: number; present: number })[];
  return rows.map(({ has_entry, present, ...r }) => ({ ...r, indexed_hash: has_entry ? r.indexed_hash : undefined, present: present === 1 }));
}

export function countStaleDevices(db: DB): number {
  return prepareCached(db, 'SELECT count(*) FROM search_stale').pluck().get() as number;
}

/** Drop the device from the stale list unless it changed again since `seq` was read. */
export function clearStale(db: DB, deviceId: number, seq: number): void {
  prepareCached(db, 'DELETE FROM search_stale WHERE device_id = ? AND seq = ?').run(deviceId, seq);
}

/**
 * Replace a device's entry: its postings go, the lines no other device holds go, the new lines and postings come.
 * `scan`: the version is too big to index (no lines given); the search reads its file (listStaleDeviceIds).
 */
export function replaceDeviceEntry(db: DB, deviceId: number, hash: string | null, lines: readonly string[] | null, opts: { scan?: boolean } = {}): void {
  const old = prepareCached(db, 'SELECT line_ids FROM search_docs WHERE device_id = ?').pluck().get(deviceId) as string | undefined;
  if (old !== undefined) {
    const unpost = prepareCached(db, 'DELETE FROM search_postings WHERE line_id = ? AND device_id = ?');
    const orphan = prepareCached(db, 'SELECT NOT EXISTS (SELECT 1 FROM search_postings WHERE line_id = ?)').pluck();
    const dropLine = prepareCached(db, 'DELETE FROM search_lines WHERE id = ?');
    const dropFts = prepareCached(db, 'DELETE FROM search_lines_fts WHERE rowid = ?');
    for (const id of JSON.parse(old) as number[]) {
      unpost.run(id, deviceId);
      if (orphan.get(id)) {
        dropLine.run(id);
        dropFts.run(id);
      }
    }
  }
  if (lines === null) {
    prepareCached(db, 'DELETE FROM search_docs WHERE device_id = ?').run(deviceId);
    return;
  }
  const find = prepareCached(db, 'SELECT id FROM search_lines WHERE text = ?').pluck();
  const addLine = prepareCached(db, 'INSERT INTO search_lines (text) VALUES (?)');
  const addFts = prepareCached(db, 'INSERT INTO search_lines_fts (rowid, folded) VALUES (?, ?)');
  const post = prepareCached(db, 'INSERT OR IGNORE INTO search_postings (line_id, device_id) VALUES (?, ?)');
  const ids: number[] = [];
  for (const text of lines) {
    let id = find.get(text) as number | undefined;
    if (id === undefined) {
      id = Number(addLine.run(text).lastInsertRowid);
      addFts.run(id, text.toLowerCase());
    }
    post.run(id, deviceId);
    ids.push(id);
  }
  prepareCached(
    db,
    `INSERT INTO search_docs (device_id, hash, line_ids, scan) VALUES (?, ?, ?, ?)
     ON CONFLICT (device_id) DO UPDATE SET hash = excluded.hash, line_ids = excluded.line_ids, scan = excluded.scan`,
  ).run(deviceId, hash, JSON.stringify(ids), opts.scan ? 1 : 0);
}

/** The FTS5 query of lower-cased pieces that must all occur: each a quoted phrase (quotes doubled). */
function ftsQuery(terms: readonly string[]): string {
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(' AND ');
}

/** How many distinct lines hold every piece (bounded: counting stops at `cap`). */
export function countCandidateLines(db: DB, terms: readonly string[], cap: number): number {
  return prepareCached(db, 'SELECT count(*) FROM (SELECT rowid FROM search_lines_fts WHERE search_lines_fts MATCH ? LIMIT ?)')
    .pluck()
    .get(ftsQuery(terms), cap) as number;
}

/** The distinct lines holding every piece, with their text, for the real matcher to check. */
export function listCandidateLines(db: DB, terms: readonly string[]): { id: number; text: string }[] {
  return prepareCached(db, 'SELECT l.id, l.text FROM search_lines_fts f JOIN search_lines l ON l.id = f.rowid WHERE search_lines_fts MATCH ?').all(
    ftsQuery(terms),
  ) as { id: number; text: string }[];
}

export interface IndexedDeviceFilter {
  /** The scope's groups; null: every device. */
  groupIds: readonly number[] | null;
  /** Only these devices (a group or template filter); null: no filter. */
  deviceIds: readonly number[] | null;
}

function filterSql(f: IndexedDeviceFilter): string {
  return `${f.groupIds === null ? '' : 'AND d.group_id IN (SELECT value FROM json_each(@groups))'}
     ${f.deviceIds === null ? '' : 'AND d.id IN (SELECT value FROM json_each(@only))'}`;
}

function deviceMatchSql(f: IndexedDeviceFilter): string {
  return `FROM devices d
   WHERE d.id IN (SELECT p.device_id FROM search_postings p WHERE p.line_id IN (SELECT value FROM json_each(@lines)))
     AND d.id NOT IN (SELECT device_id FROM search_stale) ${filterSql(f)}`;
}

function deviceMatchParams(lineIds: readonly number[], f: IndexedDeviceFilter): Record<string, unknown> {
  return {
    lines: JSON.stringify(lineIds),
    ...(f.groupIds === null ? {} : { groups: JSON.stringify(f.groupIds) }),
    ...(f.deviceIds === null ? {} : { only: JSON.stringify(f.deviceIds) }),
  };
}

/** How many indexed (not stale) devices hold one of the lines; without a filter, from the postings alone. */
export function countIndexedDevices(db: DB, lineIds: readonly number[], f: IndexedDeviceFilter): number {
  const unfiltered = f.groupIds === null && f.deviceIds === null;
  const sql = unfiltered
    ? `SELECT count(DISTINCT p.device_id) FROM search_postings p
        WHERE p.line_id IN (SELECT value FROM json_each(@lines)) AND p.device_id NOT IN (SELECT device_id FROM search_stale)`
    : `SELECT count(*) ${deviceMatchSql(f)}`;
  return prepareCached(db, sql).pluck().get(deviceMatchParams(lineIds, f)) as number;
}

/** The first `limit` of those devices by name. */
export function listIndexedDevices(db: DB, lineIds: readonly number[], f: IndexedDeviceFilter, limit: number): { id: number; name: string }[] {
  return prepareCached(db, `SELECT d.id, d.name ${deviceMatchSql(f)} ORDER BY d.name LIMIT @limit`).all({ ...deviceMatchParams(lineIds, f), limit }) as {
    id: number;
    name: string;
  }[];
}

/** Indexed devices with a version in the filter (what a search over the index has searched). */
export function countIndexedVersions(db: DB, f: IndexedDeviceFilter): number {
  const unfiltered = f.groupIds === null && f.deviceIds === null;
  return prepareCached(
    db,
    unfiltered
      ? 'SELECT count(*) FROM search_docs s WHERE s.hash IS NOT NULL AND s.scan = 0 AND s.device_id NOT IN (SELECT device_id FROM search_stale)'
      : `SELECT count(*) FROM devices d WHERE d.id IN (SELECT device_id FROM search_docs WHERE hash IS NOT NULL AND scan = 0)
          AND d.id NOT IN (SELECT device_id FROM search_stale) ${filterSql(f)}`,
  )
    .pluck()
    .get(unfiltered ? {} : deviceMatchParams([], f)) as number;
}

/** Stale devices in the filter (ids), and those whose version is too big to index: the search reads their files itself. */
export function listStaleDeviceIds(db: DB, f: IndexedDeviceFilter): number[] {
  return prepareCached(
    db,
    `SELECT d.id FROM devices d
      WHERE d.id IN (SELECT device_id FROM search_stale UNION ALL SELECT device_id FROM search_docs WHERE scan = 1) ${filterSql(f)}`,
  )
    .pluck()
    .all(deviceMatchParams([], f)) as number[];
}

export interface LatestVersionRow {
  device_id: number;
  device_name: string;
  backup_id: string;
  started_at: number;
  config_snapshot_hash: string;
}

/** The newest successful version of each of these devices (those with one), by name. */
export function listLatestVersionsOf(db: DB, deviceIds: readonly number[]): LatestVersionRow[] {
  return prepareCached(
    db,
    `SELECT x.device_id, x.device_name, b.id AS backup_id, b.started_at, b.config_snapshot_hash
       FROM (SELECT d.id AS device_id, d.name AS device_name,
                    (SELECT b.id FROM backups b WHERE b.device_id = d.id AND b.success = 1 AND b.config_snapshot_hash IS NOT NULL
                      ORDER BY b.started_at DESC, b.id DESC LIMIT 1) AS backup_id
               FROM devices d WHERE d.id IN (SELECT value FROM json_each(?))) x
       JOIN backups b ON b.id = x.backup_id
      ORDER BY x.device_name`,
  ).all(JSON.stringify(deviceIds)) as LatestVersionRow[];
}
