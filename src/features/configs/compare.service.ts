// The diff the public API offers: two versions picked by id, or the newest of one or two devices, compared off the event loop.
import { ApiError } from '../../errors';
import type { AppServices } from '../../http/context';
import { authorize } from '../../identity/policy';
import type { Principal } from '../../identity/principal';
import { getBackupRowFor, listDeviceHistory } from '../backups/backups.service';
import { BACKUP_OPS } from '../backups/backups.policy';
import type { BackupRow } from '../backups/backups.store';
import { getDevice } from '../devices/devices.service';
import { getTemplateSpec } from '../templates/templates.service';
import { diffBackups, type UnifiedHunk } from './diff.service';

/** Which two versions: by backup id, or the newest two of a device, or the newest of two devices. */
export type ComparePick = { from: string; to: string } | { deviceId: number; otherDeviceId?: number };

export interface CompareSide {
  backup_id: string;
  device_id: number;
  device_name: string;
  started_at: number;
}

export interface CompareResult {
  from: CompareSide;
  to: CompareSide;
  identical: boolean;
  added: number;
  removed: number;
  /** Too different to align within the diff's bounds (DIFF_LIMITS): no hunks, the unified text replaces the whole file. */
  truncated: boolean;
  hunks: UnifiedHunk[];
  unified: string;
}

/** How far back the newest versions of a device are looked for (unchanged backups store the same version again). */
const HISTORY_LOOKBACK = 200;

type Row = BackupRow & { group_id?: number | null };
const usable = (r: Row) => r.success === 1 && r.config_snapshot_hash !== null;

function newestVersions(app: AppServices, reader: Principal, deviceId: number, distinct: number): Row[] {
  const rows = listDeviceHistory(app.db, reader.scope, deviceId, 1, HISTORY_LOOKBACK).items.filter(usable);
  const out: Row[] = [];
  for (const r of rows) {
    if (out.length === distinct) break;
    if (!out.some((o) => o.config_snapshot_hash === r.config_snapshot_hash)) out.push(r);
  }
  if (out.length < distinct) {
    throw new ApiError('CONFLICT', `Device ${deviceId} has ${out.length === 0 ? 'no stored version' : 'only one stored version'} to compare`);
  }
  return out;
}

function pickRows(app: AppServices, reader: Principal, pick: ComparePick): [Row, Row] {
  if ('from' in pick) {
    const a = getBackupRowFor(app.db, reader.scope, pick.from);
    const b = getBackupRowFor(app.db, reader.scope, pick.to);
    for (const r of [a, b]) if (!usable(r)) throw new ApiError('CONFLICT', `Backup ${r.id} has no stored configuration (a failed or running backup)`);
    return [a, b];
  }
  if (pick.otherDeviceId === undefined) {
    const [newest, before] = newestVersions(app, reader, pick.deviceId, 2);
    return [before, newest];
  }
  return [newestVersions(app, reader, pick.deviceId, 1)[0], newestVersions(app, reader, pick.otherDeviceId, 1)[0]];
}

/**
 * Two stored versions compared for a reader (devices.view and backups.view, both devices in scope): missing
 * records 404, out of scope 403, a version without text 409. `ignore`: drop the lines the devices' templates ignore.
 */
export function compareVersionsFor(app: AppServices, reader: Principal, pick: ComparePick, ignore: boolean): Promise<CompareResult> {
  // The checks throw at once (as every read service's do); only the comparison itself waits for a worker.
  authorize(reader, BACKUP_OPS.browse);
  const [a, b] = pickRows(app, reader, pick);
  const devices = [getDevice(app.db, reader.scope, a.device_id), getDevice(app.db, reader.scope, b.device_id)];
  const patterns = ignore ? [...new Set(devices.flatMap((d) => getTemplateSpec(app.db, d.template_id)?.ignore_patterns ?? []))] : [];
  return compareRows(app, a, b, devices, patterns);
}

async function compareRows(app: AppServices, a: Row, b: Row, devices: { name: string }[], patterns: string[]): Promise<CompareResult> {
  const names = { a: `a/${devices[0].name}`, b: `b/${devices[1].name}` };
  const r = await diffBackups(app, a, b, names, patterns, { unified: true });
  if (r === null) throw new ApiError('CONFLICT', 'One of the two versions has no readable stored text (logged on the appliance)');
  const side = (row: Row, i: number): CompareSide => ({
    backup_id: row.id,
    device_id: row.device_id,
    device_name: devices[i].name,
    started_at: row.started_at,
  });
  return {
    from: side(a, 0),
    to: side(b, 1),
    identical: r.identical,
    added: r.added,
    removed: r.removed,
    truncated: r.tooDifferent,
    hunks: r.hunks,
    unified: r.unified ?? '',
  };
}
