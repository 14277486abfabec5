// Notification events: the outbox rows written inside the transaction of each event (finished backups, reachability
// changes, stale devices), and which devices count as stale.
import type { DB } from '../../db/open';
import { setDeviceReachability, type Reachability } from '../devices/devices.store';
import { toRuleInfo } from './notifications.service';
import {
  anyRule,
  backupChangedBy,
  clearStaleNotice,
  getDeviceFacts,
  getDeviceReachability,
  getFinishedBackupFacts,
  groupAncestry,
  insertOutbox,
  listRuleRows,
  previousSuccessfulHash,
  staleAmong,
  type DeviceFacts,
} from './notifications.store';
import type { BackupPart, EventItem, NotificationEvent, OutboxDiffRef } from './notifications.types';

function devicePart(db: DB, d: DeviceFacts) {
  const path = groupAncestry(db, d.group_id)
    .map((g) => g.name)
    .reverse()
    .join('/');
  return { id: d.id, name: d.name, hostname: d.hostname, group_path: path || null };
}

/** Write one outbox row per channel of every rule that wants this event for this device. */
function enqueue(
  db: DB,
  event: NotificationEvent,
  device: DeviceFacts,
  item: Omit<EventItem, 'event' | 'occurred_at' | 'device'>,
  at: number,
  diff: OutboxDiffRef | null,
): void {
  const rules = listRuleRows(db)
    .map(toRuleInfo)
    .filter((r) => r.events.includes(event));
  if (!rules.length) return;
  const ancestry = new Set(groupAncestry(db, device.group_id).map((g) => g.id));
  const full: EventItem = { event, occurred_at: new Date(at).toISOString(), device: devicePart(db, device), ...item };
  // A channel named by several matching rules gets the event once; with the diff if any of them asks for it.
  const wanted = new Map<number, { rule: number; diff: boolean }>();
  for (const r of rules) {
    if (r.group_ids.length && !r.group_ids.some((g) => ancestry.has(g))) continue;
    for (const c of r.channel_ids) {
      const w = wanted.get(c);
      wanted.set(c, { rule: w?.rule ?? r.id, diff: (w?.diff ?? false) || r.include_diff });
    }
  }
  for (const [channel, w] of wanted) {
    const withDiff = w.diff && diff !== null;
    insertOutbox(db, {
      channel_id: channel,
      rule_id: w.rule,
      event,
      device_id: device.id,
      include_diff: withDiff ? 1 : 0,
      item: JSON.stringify({ item: full, diff: withDiff ? diff : null }),
      occurred_at: at,
    });
  }
}

export interface BackupOutcomeInput {
  device: DeviceFacts;
  backup: {
    id: string;
    trigger: string;
    changed_by?: string | null;
    success: boolean;
    failure_type: string | null;
    error_message: string | null;
    changed: boolean;
    config_snapshot_hash: string | null;
    previous_snapshot_hash: string | null;
    template_id?: number | null;
  };
  at?: number;
}

/**
 * The notifications of a finished backup: config_changed (changed and successful, with changed_by when known),
 * backup_failed (failure type and message). Call inside the transaction that records the finished backup.
 */
export function enqueueBackupOutcome(db: DB, input: BackupOutcomeInput): void {
  const at = input.at ?? Date.now();
  const b = input.backup;
  if (b.success) clearStaleNotice(db, input.device.id);
  // Every finished backup passes here: with no rules, nothing more to read.
  if (!anyRule(db)) return;
  const changedBy = b.changed_by !== undefined ? b.changed_by : backupChangedBy(db, b.id);
  const part: BackupPart = { id: b.id, trigger: b.trigger, changed_by: changedBy, success: b.success, failure_type: b.failure_type };
  if (b.success && b.changed) {
    const who = changedBy ? ` by ${changedBy}` : '';
    enqueue(db, 'config_changed', input.device, { backup: part, summary: `Configuration of ${input.device.name} changed${who} (${b.trigger} backup).` }, at, {
      template_id: b.template_id ?? null,
      snapshot: b.config_snapshot_hash,
      previous_snapshot: b.previous_snapshot_hash,
    });
  } else if (!b.success) {
    const summary = `Backup of ${input.device.name} failed: ${b.failure_type ?? 'UNKNOWN'}${b.error_message ? `: ${b.error_message}` : ''}`;
    enqueue(db, 'backup_failed', input.device, { backup: part, summary: summary.slice(0, 2000) }, at, null);
  }
}

/** device_unreachable / device_recovered on a change of reachability. Call inside the transaction that records it. */
export function enqueueReachabilityChange(db: DB, deviceId: number, before: string | null, after: string, error: string | null, at = Date.now()): void {
  if (before === after || !anyRule(db)) return;
  const device = getDeviceFacts(db, deviceId);
  if (!device) return;
  if (after === 'unreachable') {
    enqueue(db, 'device_unreachable', device, { backup: null, summary: `${device.name} is unreachable${error ? `: ${error}` : ''}`.slice(0, 2000) }, at, null);
  } else if (after === 'reachable' && before === 'unreachable') {
    enqueue(db, 'device_recovered', device, { backup: null, summary: `${device.name} is reachable again.` }, at, null);
  }
}

/** backup_stale for one device (once per episode; the caller has checked and recorded the notice). */
export function enqueueStale(db: DB, deviceId: number, lastSuccess: number | null, hours: number, at = Date.now()): void {
  const device = getDeviceFacts(db, deviceId);
  if (!device) return;
  const since = lastSuccess ? `since ${new Date(lastSuccess).toISOString()}` : 'ever';
  enqueue(db, 'backup_stale', device, { backup: null, summary: `${device.name} has had no successful backup ${since} (more than ${hours} h).` }, at, null);
}

/** enqueueBackupOutcome for a backup record just completed (the one-line hook of finishBackup, inside its transaction). */
export function enqueueFinishedBackup(db: DB, backupId: string, at = Date.now()): void {
  const b = getFinishedBackupFacts(db, backupId);
  if (!b) return;
  if (!anyRule(db)) {
    if (b.success === 1) clearStaleNotice(db, b.device_id);
    return;
  }
  const device = getDeviceFacts(db, b.device_id);
  if (!device) return;
  enqueueBackupOutcome(db, {
    device,
    at,
    backup: {
      id: b.id,
      trigger: b.trigger,
      success: b.success === 1,
      failure_type: b.failure_type,
      error_message: b.error_message,
      changed: b.changed === 1,
      config_snapshot_hash: b.config_snapshot_hash,
      previous_snapshot_hash: b.success === 1 ? previousSuccessfulHash(db, b.device_id, b.id) : null,
      template_id: b.template_id,
    },
  });
}

/** Whether any notification rule wants compliance events (judging skips comparing with the previous results otherwise). */
export function complianceEventsWanted(db: DB): boolean {
  return (
    anyRule(db) &&
    listRuleRows(db)
      .map(toRuleInfo)
      .some((r) => r.events.includes('compliance_failed') || r.events.includes('compliance_recovered'))
  );
}

/**
 * compliance_failed (rules that started failing with this version) or compliance_recovered (rules passing again), with
 * the rules and their first failing lines in the summary (lines of the stored text, redacted as it was stored). Call
 * inside the transaction that saves the judgement.
 */
export function enqueueComplianceChange(db: DB, backupId: string, event: 'compliance_failed' | 'compliance_recovered', summary: string, at = Date.now()): void {
  const b = getFinishedBackupFacts(db, backupId);
  const device = b && getDeviceFacts(db, b.device_id);
  if (!b || !device) return;
  const part: BackupPart = { id: b.id, trigger: b.trigger, changed_by: backupChangedBy(db, b.id), success: b.success === 1, failure_type: b.failure_type };
  enqueue(db, event, device, { backup: part, summary: `${device.name}: ${summary}`.slice(0, 2000) }, at, null);
}

/** Record a device's reachability and, in the same transaction, the unreachable / recovered notification of a change. */
export function recordReachability(db: DB, deviceId: number, status: Reachability, error: string | null, at = Date.now()): void {
  db.transaction(() => {
    const before = getDeviceReachability(db, deviceId);
    setDeviceReachability(db, deviceId, status, error, at);
    enqueueReachabilityChange(db, deviceId, before, status, error, at);
  }).immediate();
}

/** The time before which a device without a successful backup counts as stale. */
export function staleBefore(hours: number, now = Date.now()): number {
  return now - hours * 3_600_000;
}

/** Which of these devices are stale (the device list's badge). */
export function staleDevices(db: DB, ids: number[], hours: number, now = Date.now()): Set<number> {
  return staleAmong(db, ids, staleBefore(hours, now));
}
