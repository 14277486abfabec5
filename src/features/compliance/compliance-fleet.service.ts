// What the API and the web show of compliance: a device's results, the fleet's counts and daily trend, a device's waivers; all in the actor's scope.
import path from 'node:path';
import type { DB } from '../../db/open';
import { ApiError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import type { SnapshotStore } from '../../store/snapshots';
import { recordAudit } from '../audit/audit.service';
import { getDevice, listDeviceIds } from '../devices/devices.service';
import { SEVERITIES, type Severity } from './compliance-rule.schemas';
import { loadRuleset, shippedPacks } from './compliance-rules.service';
import { addWaiver, checkCompliance, type DeviceCompliance, type ShownStatus } from './compliance.service';
import { rulesSettled } from './compliance-rule-admin.service';
import { COMPLIANCE_OPS } from './compliance.policy';
import { deleteWaiverRow, getWaiverRow, listDeviceWaiverRows, listTrendRows, type TrendRow, type WaiverRow } from './compliance.store';

export interface FleetFilter {
  groupId?: number | null;
  /** Template (platform) name. */
  template?: string;
  severity?: Severity;
  rule?: string;
}

/**
 * Each device in scope (and in the filter) with its newest version's results, narrowed to the filter's severity or rule.
 * A refusal is thrown at once (not a rejected promise), as every read service's.
 */
export function fleetCompliance(db: DB, store: SnapshotStore, actor: Actor, filter: FleetFilter = {}, now = Date.now()): Promise<DeviceCompliance[]> {
  authorize(actor, COMPLIANCE_OPS.summary);
  return judgedFleet(db, store, actor, filter, now);
}

async function judgedFleet(db: DB, store: SnapshotStore, actor: Actor, filter: FleetFilter, now: number): Promise<DeviceCompliance[]> {
  await rulesSettled(db);
  const devices = await checkCompliance(db, store, actor, { groupId: filter.groupId ?? null }, now);
  return devices
    .filter((d) => filter.template === undefined || d.template === filter.template)
    .map((d) => ({
      ...d,
      results: d.results.filter(
        (r) => (filter.severity === undefined || r.severity === filter.severity) && (filter.rule === undefined || r.rule_id === filter.rule),
      ),
    }));
}

type Counts = Record<Exclude<ShownStatus, 'not_applicable'>, number>;
const zero = (): Counts => ({ pass: 0, fail: 0, waived: 0 });

export interface FleetSummary {
  devices: { judged: number; compliant: number; non_compliant: number };
  by_status: Counts;
  by_severity: ({ severity: Severity } & Counts)[];
  by_rule: ({ rule_id: string; title: string; severity: Severity } & Counts)[];
}

/** Counts over the devices' results: a device is compliant when no rule fails (a waived failure does not count). */
export function summarize(devices: readonly DeviceCompliance[]): FleetSummary {
  const byStatus = zero();
  const bySeverity = new Map<Severity, Counts>(SEVERITIES.map((s) => [s, zero()]));
  const byRule = new Map<string, { rule_id: string; title: string; severity: Severity } & Counts>();
  let compliant = 0;
  for (const d of devices) {
    if (!d.results.some((r) => r.status === 'fail')) compliant++;
    for (const r of d.results) {
      if (r.status === 'not_applicable') continue;
      byStatus[r.status]++;
      (bySeverity.get(r.severity) as Counts)[r.status]++;
      let rule = byRule.get(r.rule_id);
      if (!rule) byRule.set(r.rule_id, (rule = { rule_id: r.rule_id, title: r.title, severity: r.severity, ...zero() }));
      rule[r.status]++;
    }
  }
  return {
    devices: { judged: devices.length, compliant, non_compliant: devices.length - compliant },
    by_status: byStatus,
    by_severity: [...bySeverity].map(([severity, c]) => ({ severity, ...c })).reverse(),
    by_rule: [...byRule.values()].sort((a, b) => b.fail - a.fail || a.rule_id.localeCompare(b.rule_id)),
  };
}

/** A device's newest stored version judged by the rules in force (no version yet: no results). 404 or 403 as the device reads. */
export function deviceCompliance(
  db: DB,
  store: SnapshotStore,
  actor: Actor,
  deviceId: number,
  now = Date.now(),
): Promise<{ device: { id: number; name: string }; result: DeviceCompliance | null }> {
  authorize(actor, COMPLIANCE_OPS.check);
  const { id, name } = getDevice(db, actor.principal.scope, deviceId);
  return (async () => {
    await rulesSettled(db);
    const [d] = await checkCompliance(db, store, actor, { device: String(deviceId) }, now);
    return { device: { id, name }, result: d ?? null };
  })();
}

const DAY = 86_400_000;

/** Daily counts of the devices in scope (optionally one group) over the last `days` UTC days, today included. */
export function complianceTrend(db: DB, actor: Actor, filter: { groupId?: number | null }, days = 30, now = Date.now()): TrendRow[] {
  authorize(actor, COMPLIANCE_OPS.summary);
  const ids = listDeviceIds(db, actor.principal.scope, filter.groupId == null ? {} : { group_id: filter.groupId });
  const todayEnd = Math.floor(now / DAY) * DAY + DAY;
  return listTrendRows(db, ids, todayEnd, Math.max(1, Math.min(days, 366)));
}

export interface Waiver extends WaiverRow {
  active: boolean;
}

export function listWaivers(db: DB, actor: Actor, deviceId: number, now = Date.now()): Waiver[] {
  authorize(actor, COMPLIANCE_OPS.waivers);
  getDevice(db, actor.principal.scope, deviceId);
  return listDeviceWaiverRows(db, deviceId).map((w) => ({ ...w, active: w.expires_at > now }));
}

/** A waiver for a rule that exists (in force, or in a shipped pack); the rest is addWaiver's. */
export function createWaiver(
  db: DB,
  store: SnapshotStore,
  actor: Actor,
  deviceId: number,
  input: { rule_id: string; reason: string; owner: string; expires_at: number },
  now = Date.now(),
): Waiver {
  authorize(actor, COMPLIANCE_OPS.waive);
  getDevice(db, actor.principal.scope, deviceId);
  const known = loadRuleset(db, path.dirname(store.root)).info.has(input.rule_id) || shippedPacks().some((p) => p.rules.some((r) => r.id === input.rule_id));
  if (!known) throw ApiError.validation([{ field: 'rule_id', message: `there is no compliance rule ${input.rule_id}` }], 'the waiver is incomplete');
  const id = addWaiver(db, actor, { device: String(deviceId), ...input }, now);
  return { ...(getWaiverRow(db, id) as WaiverRow), active: true };
}

/**
 * Removes a waiver (its failures count again at once); its device must be in the actor's scope (403), and be
 * `deviceId` when one is given (the web's device page). Audited.
 */
export function removeWaiver(db: DB, actor: Actor, waiverId: number, deviceId?: number): void {
  authorize(actor, COMPLIANCE_OPS.unwaive);
  db.transaction(() => {
    const w = getWaiverRow(db, waiverId);
    if (!w || (deviceId !== undefined && w.device_id !== deviceId)) throw ApiError.notFound(`waiver ${waiverId}`);
    getDevice(db, actor.principal.scope, w.device_id);
    deleteWaiverRow(db, waiverId);
    recordAudit(db, actor, { action: 'compliance.waiver_remove', target: `device ${w.device_id}`, details: { waiver_id: waiverId, rule_id: w.rule_id } });
  }).immediate();
}
