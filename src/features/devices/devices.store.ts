// Queries for devices: scoped, filtered pages in SQL; single rows; writes; what the backup runner records about a device.
import type { DB } from '../../db/open';
import { explainQueryPlan } from '../../db/statements';
import type { Scope } from '../../identity/principal';
import { containsPattern, prepareCached } from './sql';

export type Protocol = 'ssh' | 'telnet';
export type Reachability = 'reachable' | 'unreachable' | 'unknown';

export interface DeviceRow {
  id: number;
  name: string;
  hostname: string;
  port: number;
  protocol: Protocol;
  group_id: number | null;
  credential_id: number;
  template_id: number;
  enabled: number;
  description: string;
  schedule: string | null;
  host_key: string | null;
  accept_host_key_change: number;
  reachability: Reachability;
  reachability_checked_at: number | null;
  reachability_error: string | null;
  last_backup_id: string | null;
  /** The last backup's start and outcome (1 ok, 0 failed), kept with last_backup_id (schema 0028); null for none. */
  last_backup_started_at: number | null;
  last_backup_success: number | null;
  created_at: number;
  updated_at: number;
  /** When the device was retired (ms), null while in service (schema 0023). */
  retired_at: number | null;
  retired_by: string | null;
  /** The remote zone whose collectors back it up; null: none of its own (schema 0026; written by collectors.service). */
  zone: string | null;
}

/** A device row with the summary of its last backup (null columns when there is none); the row itself since 0028. */
export type DeviceViewRow = DeviceRow;

export interface Device {
  id: number;
  name: string;
  hostname: string;
  port: number;
  protocol: Protocol;
  group_id: number | null;
  credential_id: number;
  template_id: number;
  enabled: boolean;
  description: string;
  schedule: string | null;
  accept_host_key_change: boolean;
  host_key: string | null;
  reachability: { status: Reachability; checked_at: number | null; error: string | null };
  last_backup: { id: string; started_at: number; success: boolean } | null;
  created_at: number;
  updated_at: number;
  /** Retired: kept with its history, never backed up; null while in service. */
  retired: { at: number; by: string | null } | null;
  zone: string | null;
}

export function toDevice(row: DeviceViewRow): Device {
  return {
    id: row.id,
    name: row.name,
    hostname: row.hostname,
    port: row.port,
    protocol: row.protocol,
    group_id: row.group_id,
    credential_id: row.credential_id,
    template_id: row.template_id,
    enabled: row.enabled === 1,
    description: row.description,
    schedule: row.schedule,
    accept_host_key_change: row.accept_host_key_change === 1,
    host_key: row.host_key,
    reachability: { status: row.reachability, checked_at: row.reachability_checked_at, error: row.reachability_error },
    last_backup:
      row.last_backup_id !== null && row.last_backup_started_at !== null
        ? { id: row.last_backup_id, started_at: row.last_backup_started_at, success: row.last_backup_success === 1 }
        : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
    retired: row.retired_at === null ? null : { at: row.retired_at, by: row.retired_by },
    zone: row.zone,
  };
}

export interface DeviceFilter {
  /** Case-insensitive substring of the name or hostname. */
  q?: string;
  /** This group and all its subgroups. */
  group_id?: number;
  enabled?: boolean;
  protocol?: Protocol;
  reachability?: Reachability;
  /** Stale: enabled, and no successful backup since this time (ms); see [backup] stale_after_hours. */
  stale_before?: number;
  /** Enabled devices with no successful backup at all (added, never backed up or never successfully). */
  never_backed_up?: boolean;
  /** Devices of this template (platform); the web list's filter. */
  template_id?: number;
  /** Devices whose newest backup failed; the web list's filter. */
  last_failed?: boolean;
  /** true: only devices with a last backup; false: only those never backed up (the two parts of the list by last backup). */
  backed_up?: boolean;
  /** true: only retired devices; false: only devices in service; unset: both. */
  retired?: boolean;
}

/** The orders a device list can take (the web list's column headers); the API lists by name. */
export const DEVICE_SORTS = ['name', 'address', 'group', 'platform', 'last_backup'] as const;
export type DeviceSort = (typeof DEVICE_SORTS)[number];
export interface DeviceOrder {
  sort: DeviceSort;
  desc: boolean;
}

/** Sort key of each order, from this fixed table only. Ties go by name then id, so pages never overlap. */
const SORT_KEYS: Record<Exclude<DeviceSort, 'last_backup'>, string> = {
  name: 'd.name',
  address: 'lower(d.hostname)',
  group: '(SELECT g.name FROM device_groups g WHERE g.id = d.group_id) COLLATE NOCASE',
  platform: '(SELECT t.name FROM templates t WHERE t.id = d.template_id) COLLATE NOCASE',
};

/**
 * WHERE clause of a device list, built only from fixed fragments (so each combination of filters is one cached
 * statement). The scope is applied here, in SQL, so neither a page nor its total can include a device outside it.
 */
function filterSql(scope: Scope, f: DeviceFilter): { withSql: string; where: string; params: Record<string, unknown> } {
  const conds: string[] = [];
  const params: Record<string, unknown> = {};
  let withSql = '';
  if (!scope.all) {
    // Ungrouped devices (group_id NULL) never match IN, as spec 4.6 wants for scoped users.
    conds.push('d.group_id IN (SELECT value FROM json_each(@scope_groups))');
    params.scope_groups = JSON.stringify([...scope.groupIds]);
  }
  if (f.group_id !== undefined) {
    withSql = `WITH RECURSIVE subgroups(id) AS (
      SELECT @group_id UNION SELECT g.id FROM device_groups g JOIN subgroups s ON g.parent_id = s.id)`;
    conds.push('d.group_id IN (SELECT id FROM subgroups)');
    params.group_id = f.group_id;
  }
  if (f.q) {
    conds.push(`(d.name LIKE @q ESCAPE '\\' OR d.hostname LIKE @q ESCAPE '\\')`);
    params.q = containsPattern(f.q);
  }
  if (f.enabled !== undefined) {
    conds.push('d.enabled = @enabled');
    params.enabled = f.enabled ? 1 : 0;
  }
  if (f.protocol !== undefined) {
    conds.push('d.protocol = @protocol');
    params.protocol = f.protocol;
  }
  if (f.reachability !== undefined) {
    conds.push('d.reachability = @reachability');
    params.reachability = f.reachability;
  }
  if (f.stale_before !== undefined) {
    conds.push(
      `d.enabled = 1 AND COALESCE((SELECT MAX(sb.finished_at) FROM backups sb WHERE sb.device_id = d.id AND sb.success = 1), d.created_at) < @stale_before`,
    );
    params.stale_before = f.stale_before;
  }
  if (f.never_backed_up) {
    conds.push('d.enabled = 1 AND NOT EXISTS (SELECT 1 FROM backups nb WHERE nb.device_id = d.id AND nb.success = 1)');
  }
  if (f.template_id !== undefined) {
    conds.push('d.template_id = @template_id');
    params.template_id = f.template_id;
  }
  if (f.last_failed) conds.push('d.last_backup_success = 0');
  if (f.backed_up !== undefined) conds.push(f.backed_up ? 'd.last_backup_started_at IS NOT NULL' : 'd.last_backup_started_at IS NULL');
  if (f.retired !== undefined) conds.push(f.retired ? 'd.retired_at IS NOT NULL' : 'd.retired_at IS NULL');
  return { withSql, where: conds.length ? `WHERE ${conds.join(' AND ')}` : '', params };
}

const VIEW_COLUMNS = 'd.*';

export function countDevices(db: DB, scope: Scope, f: DeviceFilter): number {
  const { withSql, where, params } = filterSql(scope, f);
  return (prepareCached(db, `${withSql} SELECT count(*) AS n FROM devices d ${where}`).get(params) as { n: number }).n;
}

/**
 * One page of devices in the scope matching the filter, ordered by name (NOCASE, as the column is declared) or
 * by another key of SORT_KEYS. The page is cut on ids alone, then joined: when the plan has to sort (a scoped,
 * filtered or re-ordered list) it sorts (key, id) pairs rather than whole rows, which halves deep-page cost at
 * 10,000 devices. The last backup's start and outcome are columns of the row (0028).
 */
export function listDeviceViewRows(db: DB, scope: Scope, f: DeviceFilter, offset: number, limit: number, order?: DeviceOrder): DeviceViewRow[] {
  if (order?.sort === 'last_backup') return listByLastBackup(db, scope, f, offset, limit, order.desc);
  const { sql, params } = deviceListSql(scope, f, order);
  return prepareCached(db, sql).all({ ...params, limit, offset }) as DeviceViewRow[];
}

/**
 * By last backup, never backed up last in either direction, ties by name (unique): first the devices with a last
 * backup, in the order of the devices_last_backup index (no sort: page 500 of 100,000 devices 175 -> 1 ms in
 * process), then from the first page that reaches past them the others by name.
 */
function listByLastBackup(db: DB, scope: Scope, f: DeviceFilter, offset: number, limit: number, desc: boolean): DeviceViewRow[] {
  const part = (backed_up: boolean, orderBy: string, off: number, lim: number) => {
    const { sql, params } = pageSql(scope, { ...f, backed_up }, orderBy);
    return prepareCached(db, sql).all({ ...params, limit: lim, offset: off }) as DeviceViewRow[];
  };
  const first = part(true, lastBackupOrder(desc), offset, limit);
  if (first.length === limit) return first;
  const backedUp = first.length > 0 ? offset + first.length : countDevices(db, scope, { ...f, backed_up: true });
  return [...first, ...part(false, `d.name ${desc ? 'DESC' : 'ASC'}`, Math.max(0, offset - backedUp), limit - first.length)];
}

/** SQLite's plan for the very statement listDeviceViewRows runs first (the query-plan tests). */
export function explainDeviceList(db: DB, scope: Scope, f: DeviceFilter, order?: DeviceOrder): string[] {
  const { sql, params } =
    order?.sort === 'last_backup' ? pageSql(scope, { ...f, backed_up: true }, lastBackupOrder(order.desc)) : deviceListSql(scope, f, order);
  return explainQueryPlan(db, sql, [{ ...params, limit: 50, offset: 0 }]);
}

/** The order of the devices with a last backup, the one devices_last_backup gives. */
function lastBackupOrder(desc: boolean): string {
  return desc ? 'd.last_backup_started_at DESC, d.name DESC' : 'd.last_backup_started_at ASC, d.name ASC';
}

/** A page in an order an index gives (`orderBy` from fixed fragments only), cut on ids, then joined. */
function pageSql(scope: Scope, f: DeviceFilter, orderBy: string): { sql: string; params: Record<string, unknown> } {
  const { withSql, where, params } = filterSql(scope, f);
  const sql = `${withSql}
    SELECT ${VIEW_COLUMNS}
      FROM (SELECT d.id FROM devices d ${where} ORDER BY ${orderBy} LIMIT @limit OFFSET @offset) p
      JOIN devices d ON d.id = p.id
     ORDER BY ${orderBy}`;
  return { sql, params };
}

function deviceListSql(scope: Scope, f: DeviceFilter, order?: DeviceOrder): { sql: string; params: Record<string, unknown> } {
  // Names are unique (NOCASE): the name index gives either direction without a sort.
  if (!order || order.sort === 'name') return pageSql(scope, f, `d.name ${order?.desc ? 'DESC' : ''}`);
  if (order.sort === 'last_backup') throw new Error('deviceListSql: the list by last backup is listByLastBackup');
  const { withSql, where, params } = filterSql(scope, f);
  const dir = order.desc ? 'DESC' : 'ASC';
  // NULL keys (ungrouped) come last in either direction.
  const sql = `${withSql}
    SELECT ${VIEW_COLUMNS}
      FROM (SELECT d.id, ${SORT_KEYS[order.sort]} AS k, d.name AS n FROM devices d
              ${where}
             ORDER BY k IS NULL, k ${dir}, d.name ${dir}, d.id ${dir} LIMIT @limit OFFSET @offset) p
      JOIN devices d ON d.id = p.id
     ORDER BY p.k IS NULL, p.k ${dir}, p.n ${dir}, p.id ${dir}`;
  return { sql, params };
}

/** The ids of every device in the scope matching the filter (the configuration search's group and platform filters). */
export function listDeviceIdRows(db: DB, scope: Scope, f: DeviceFilter): number[] {
  const { withSql, where, params } = filterSql(scope, f);
  return prepareCached(db, `${withSql} SELECT d.id FROM devices d ${where}`).pluck().all(params) as number[];
}

/** Every template's id and name (the platform column and filter of the device list), by name. */
export function templateNameRows(db: DB): { id: number; name: string }[] {
  return prepareCached(db, 'SELECT id, name FROM templates ORDER BY name COLLATE NOCASE').all() as { id: number; name: string }[];
}

/** One device with its last-backup summary, regardless of scope (callers check it). */
export function getDeviceViewRow(db: DB, id: number): DeviceViewRow | undefined {
  return prepareCached(db, `SELECT ${VIEW_COLUMNS} FROM devices d WHERE d.id = ?`).get(id) as DeviceViewRow | undefined;
}

/** The device's own row (for the backup runner and checks), regardless of scope. */
export function getDeviceRow(db: DB, id: number): DeviceRow | undefined {
  return prepareCached(db, 'SELECT * FROM devices WHERE id = ?').get(id) as DeviceRow | undefined;
}

export type DeviceWritable = Pick<
  DeviceRow,
  'name' | 'hostname' | 'port' | 'protocol' | 'group_id' | 'credential_id' | 'template_id' | 'enabled' | 'description' | 'schedule' | 'accept_host_key_change'
>;

const WRITABLE: readonly (keyof DeviceWritable)[] = [
  'name',
  'hostname',
  'port',
  'protocol',
  'group_id',
  'credential_id',
  'template_id',
  'enabled',
  'description',
  'schedule',
  'accept_host_key_change',
];

export function insertDevice(db: DB, d: DeviceWritable, now = Date.now()): number {
  const info = prepareCached(
    db,
    `INSERT INTO devices (${WRITABLE.join(', ')}, created_at, updated_at)
     VALUES (${WRITABLE.map((c) => `@${c}`).join(', ')}, @now, @now)`,
  ).run({ ...d, now });
  return Number(info.lastInsertRowid);
}

/** Set the given columns. `resetReachability` marks the device unknown again (its address changed). */
export function updateDeviceFields(db: DB, id: number, patch: Partial<DeviceWritable>, opts: { resetReachability?: boolean } = {}, now = Date.now()): void {
  // Column names come from the fixed list above, never from input.
  const cols = WRITABLE.filter((c) => patch[c] !== undefined);
  if (cols.length === 0) return;
  const set = cols.map((c) => `${c} = @${c}`);
  if (opts.resetReachability) set.push(`reachability = 'unknown', reachability_checked_at = NULL, reachability_error = NULL`);
  const params: Record<string, unknown> = { id, now };
  for (const c of cols) params[c] = patch[c];
  prepareCached(db, `UPDATE devices SET ${set.join(', ')}, updated_at = @now WHERE id = @id`).run(params);
}

/** Deletes the device; its backup records go with it (ON DELETE CASCADE). Snapshot files are shared and stay. */
export function deleteDeviceRow(db: DB, id: number): boolean {
  return prepareCached(db, 'DELETE FROM devices WHERE id = ?').run(id).changes > 0;
}

export function credentialExists(db: DB, id: number): boolean {
  return prepareCached(db, 'SELECT 1 AS one FROM credentials WHERE id = ?').get(id) !== undefined;
}

export function templateExists(db: DB, id: number): boolean {
  return prepareCached(db, 'SELECT 1 AS one FROM templates WHERE id = ?').get(id) !== undefined;
}

/** Whether the template is a custom one (what it sends was written by a user, not shipped with the appliance). */
export function templateIsCustom(db: DB, id: number): boolean {
  return prepareCached(db, 'SELECT 1 AS one FROM templates WHERE id = ? AND builtin = 0').get(id) !== undefined;
}

/**
 * Record the outcome of a contact attempt (backup or probe). `error` is kept only for `unreachable`.
 * Does not touch updated_at, which tracks configuration edits, not observations.
 */
export function setDeviceReachability(db: DB, id: number, status: Reachability, error: string | null, at: number): void {
  prepareCached(db, 'UPDATE devices SET reachability = ?, reachability_error = ?, reachability_checked_at = ? WHERE id = ?').run(
    status,
    status === 'unreachable' ? error : null,
    at,
    id,
  );
}

/**
 * Record the SSH host key fingerprint the device presented, and clear accept_host_key_change: an accepted
 * change is accepted once. The caller decides when a key may be recorded (first contact, or an accepted change).
 */
export function setDeviceHostKey(db: DB, id: number, fingerprint: string): void {
  prepareCached(db, 'UPDATE devices SET host_key = ?, accept_host_key_change = 0 WHERE id = ?').run(fingerprint, id);
}

/** The schedule a device runs on, the nearest set one up its group chain: its own (depth 0), a group's, or none. */
export function deviceScheduleSourceRow(db: DB, deviceId: number): { schedule: string; depth: number; group_name: string | null } | undefined {
  return prepareCached(
    db,
    `WITH RECURSIVE chain(group_id, depth, schedule, group_name) AS (
       SELECT d.group_id, 0, d.schedule, NULL FROM devices d WHERE d.id = ?
       UNION ALL
       SELECT g.parent_id, c.depth + 1, g.schedule, g.name FROM chain c JOIN device_groups g ON g.id = c.group_id WHERE c.schedule IS NULL)
     SELECT schedule, depth, group_name FROM chain WHERE schedule IS NOT NULL ORDER BY depth LIMIT 1`,
  ).get(deviceId) as { schedule: string; depth: number; group_name: string | null } | undefined;
}

/** Every device's id and name (the git history import matches file names against them). */
export function deviceNameRows(db: DB): { id: number; name: string }[] {
  return db.prepare('SELECT id, name FROM devices').all() as { id: number; name: string }[];
}
