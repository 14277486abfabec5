// Judging stored versions (each as it is stored, the fleet after a rule change), reading results with waivers applied, in the actor's scope.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { withEngineSync, type DB } from '../../db/open';
import { ApiError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import { COMPLIANCE_OPS } from './compliance.policy';
import type { SnapshotStore } from '../../store/snapshots';
import { recordAudit } from '../audit/audit.service';
import { getDevice, listDeviceIds } from '../devices/devices.service';
import type { Severity } from './compliance-rule.schemas';
import type { FailingLine } from './evaluate';
import { judgeOffThread } from './compliance-pool';
import type { JudgeAnswerItem, JudgeItem } from './compliance-task';
import { groupPaths, loadRuleset, type Ruleset } from './compliance-rules.service';
import { announceChanges, eventsWanted, previousFailures } from './compliance-events.service';
import { complianceIdle, pendingFor } from './compliance-pending';

export { complianceIdle };
import {
  getRunRow,
  getVersionRow,
  insertRun,
  insertWaiver,
  listActiveWaiverRows,
  listLatestVersionRows,
  listResultRows,
  saveJudgement,
  updateRun,
  type RunRow,
  type VersionRow,
  type WaiverRow,
  findDeviceIdByName,
  countViolationsByRule,
} from './compliance.store';

/**
 * Versions per task handed to a worker: big enough that the rule set and the messages cost little, small enough that
 * saving a batch's results (one transaction on the event loop, ~100 rows per version) stays a few milliseconds.
 */
const BATCH = 25;

const dataDirOf = (store: SnapshotStore) => path.dirname(store.root);

function itemsFor(db: DB, rows: readonly VersionRow[]): JudgeItem[] {
  const paths = groupPaths(db);
  return rows.map((r) => ({
    backup_id: r.backup_id,
    hash: r.config_snapshot_hash,
    ctx: { name: r.device_name, hostname: r.hostname, template: r.template, group_path: r.group_id === null ? '' : (paths.get(r.group_id) ?? ''), custom: {} },
  }));
}

/**
 * Judges `rows` with `ruleset` in the compliance workers (two batches in flight per worker at most) and saves each
 * batch's results in one transaction. Versions that cannot be judged (their snapshot is gone) are counted, not saved.
 */
async function judgeVersions(db: DB, store: SnapshotStore, rows: readonly VersionRow[], ruleset: Ruleset, progress?: (done: number) => void): Promise<number> {
  const items = itemsFor(db, rows);
  const byBackup = new Map(rows.map((r) => [r.backup_id, r]));
  let done = 0;
  let failed = 0;
  const batches: JudgeItem[][] = [];
  for (let i = 0; i < items.length; i += BATCH) batches.push(items.slice(i, i + BATCH));
  const work = async () => {
    for (let b = batches.shift(); b; b = batches.shift()) {
      const answers = await judgeOffThread({ ruleset: ruleset.digest, rules: ruleset.rules, data_dir: dataDirOf(store), items: b });
      const now = Date.now();
      // Results are derived data (judged again whenever missing): their commits need no fsync on the event loop.
      withEngineSync(db, () => saveBatch(answers, now));
      done += b.length;
      progress?.(done);
    }
  };
  const saveBatch = (answers: JudgeAnswerItem[], now: number) =>
    db
      .transaction(() => {
        const announce = eventsWanted(db);
        for (const a of answers) {
          const row = byBackup.get(a.backup_id) as VersionRow;
          if (!a.results) {
            failed++;
            continue;
          }
          if (announce) announceChanges(db, ruleset, row, previousFailures(db, row.device_id), a.results, now);
          saveJudgement(
            db,
            { backup_id: a.backup_id, device_id: row.device_id, ruleset: ruleset.digest, judged_at: now, replace: row.ruleset !== null },
            a.results,
          );
        }
      })
      .immediate();
  await Promise.all([work(), work(), work(), work()]);
  return failed;
}

/**
 * The hook of every stored version (backup-record.service finishBackups, imports): queued and judged in the background, after
 * the version's record has committed. Never throws and never waits: a judgement that fails leaves the version
 * unjudged (`compliance check` judges it then).
 */
export function judgeStoredVersion(db: DB, store: SnapshotStore, backupId: string): void {
  const p = pendingFor(db);
  p.ids.add(backupId);
  if (p.running) return;
  const q = p;
  q.running = (async () => {
    await Promise.resolve();
    while (q.ids.size) {
      const ids = [...q.ids];
      q.ids.clear();
      try {
        // The rules first: without any, the versions are not even read (a fleet run records hundreds a second).
        const ruleset = loadRuleset(db, dataDirOf(store));
        if (!ruleset.rules.length) continue;
        const rows = ids.map((id) => getVersionRow(db, id)).filter((r): r is VersionRow => r !== undefined);
        if (rows.length) await judgeVersions(db, store, rows, ruleset);
      } catch (err) {
        q.lastError = err instanceof Error ? err.message : String(err);
      }
    }
  })().finally(() => {
    q.running = null;
  });
}

export type ShownStatus = 'pass' | 'fail' | 'waived' | 'not_applicable';

export interface RuleOutcome {
  rule_id: string;
  title: string;
  severity: Severity;
  status: ShownStatus;
  failing: FailingLine[];
  remediation: string;
  waiver: { reason: string; owner: string; expires_at: number } | null;
}

export interface DeviceCompliance {
  device_id: number;
  device_name: string;
  group_path: string;
  template: string | null;
  backup_id: string;
  backed_up_at: number;
  results: RuleOutcome[];
}

/** The devices named by the actor's scope and an optional selection (a device id or name, a group path or id). */
function devicesInScope(db: DB, actor: Actor, sel: { device?: string; groupId?: number | null }): number[] {
  const scope = actor.principal.scope;
  if (sel.device !== undefined) {
    const id = /^\d+$/.test(sel.device) ? Number(sel.device) : findDeviceIdByName(db, sel.device);
    if (id === undefined) throw ApiError.notFound(`device ${sel.device}`);
    return [getDevice(db, scope, id).id];
  }
  return listDeviceIds(db, scope, sel.groupId == null ? {} : { group_id: sel.groupId });
}

/**
 * The compliance of each selected device's newest stored version, judging first what the rule set in force has not
 * judged yet. Results are those of the rules that apply; a failure with a waiver in force shows as waived.
 */
export async function checkCompliance(
  db: DB,
  store: SnapshotStore,
  actor: Actor,
  sel: { device?: string; groupId?: number | null } = {},
  now = Date.now(),
): Promise<DeviceCompliance[]> {
  authorize(actor, COMPLIANCE_OPS.check);
  const ids = devicesInScope(db, actor, sel);
  const ruleset = loadRuleset(db, dataDirOf(store));
  await complianceIdle(db);
  let rows = listLatestVersionRows(db, ids);
  const stale = rows.filter((r) => r.ruleset !== ruleset.digest);
  if (stale.length) {
    await judgeVersions(db, store, stale, ruleset);
    rows = listLatestVersionRows(db, ids);
  }
  return readCompliance(db, rows, ruleset, now);
}

function readCompliance(db: DB, rows: readonly VersionRow[], ruleset: Ruleset, now: number): DeviceCompliance[] {
  const paths = groupPaths(db);
  const waivers = new Map<string, WaiverRow>();
  for (const w of listActiveWaiverRows(db, now)) waivers.set(`${w.device_id}\0${w.rule_id}`, w);
  const results = new Map<string, RuleOutcome[]>();
  const byBackup = new Map(rows.filter((x) => x.ruleset === ruleset.digest).map((x) => [x.backup_id, x]));
  for (const r of listResultRows(db, [...byBackup.keys()])) {
    const info = ruleset.info.get(r.rule_id);
    if (!info) continue;
    const row = byBackup.get(r.backup_id) as VersionRow;
    const w = waivers.get(`${row.device_id}\0${r.rule_id}`);
    const list = results.get(r.backup_id) ?? [];
    list.push({
      rule_id: r.rule_id,
      title: info.rule.title,
      severity: info.rule.severity,
      status: w ? 'waived' : 'fail',
      failing: JSON.parse(r.failing) as FailingLine[],
      remediation: [info.rule.remediation.trim(), r.remediation].filter(Boolean).join('\n\n'),
      waiver: w ? { reason: w.reason, owner: w.owner, expires_at: w.expires_at } : null,
    });
    results.set(r.backup_id, list);
  }
  for (const row of byBackup.values()) {
    const list = results.get(row.backup_id) ?? [];
    for (const id of JSON.parse(row.passed_rules ?? '[]') as string[]) {
      const info = ruleset.info.get(id);
      if (info) list.push({ rule_id: id, title: info.rule.title, severity: info.rule.severity, status: 'pass', failing: [], remediation: '', waiver: null });
    }
    list.sort((a, b) => a.rule_id.localeCompare(b.rule_id));
    results.set(row.backup_id, list);
  }
  return rows.map((r) => ({
    device_id: r.device_id,
    device_name: r.device_name,
    group_path: r.group_id === null ? '' : (paths.get(r.group_id) ?? ''),
    template: r.template,
    backup_id: r.backup_id,
    backed_up_at: r.started_at,
    results: results.get(r.backup_id) ?? [],
  }));
}

export interface WaiverInput {
  device: string;
  rule_id: string;
  reason: string;
  owner: string;
  expires_at: number;
}

/** A waiver: the rule's failures on the device show as waived until `expires_at`. Audited. */
export function addWaiver(db: DB, actor: Actor, input: WaiverInput, now = Date.now()): number {
  authorize(actor, COMPLIANCE_OPS.waive);
  const [deviceId] = devicesInScope(db, actor, { device: input.device });
  const errors = [];
  if (!input.reason.trim()) errors.push({ field: 'reason', message: 'is required' });
  if (!input.owner.trim()) errors.push({ field: 'owner', message: 'is required' });
  if (!(input.expires_at > now)) errors.push({ field: 'expires_at', message: 'must be in the future' });
  if (errors.length) throw ApiError.validation(errors, 'the waiver is incomplete');
  return db
    .transaction(() => {
      const id = insertWaiver(db, {
        device_id: deviceId,
        rule_id: input.rule_id,
        reason: input.reason.trim(),
        owner: input.owner.trim(),
        expires_at: input.expires_at,
        created_by: actor.principal.username,
        created_at: now,
      });
      recordAudit(db, actor, {
        action: 'compliance.waiver_add',
        target: `device ${deviceId}`,
        details: { waiver_id: id, rule_id: input.rule_id, owner: input.owner, expires_at: input.expires_at, reason: input.reason },
      });
      return id;
    })
    .immediate();
}

/**
 * Re-judges every device's newest version with the rule set now in force (after a rule change), in the background:
 * `done` settles when it ends; the run's row (getComplianceRun) shows its progress meanwhile.
 */
export function rejudgeFleet(
  db: DB,
  store: SnapshotStore,
  reason: string,
  onProgress?: (done: number, total: number) => void,
): { id: string; total: number; done: Promise<RunRow> } {
  const rows = listLatestVersionRows(db, null);
  const ruleset = loadRuleset(db, dataDirOf(store));
  const id = randomUUID();
  insertRun(db, id, reason, rows.length, Date.now());
  const done = judgeVersions(db, store, rows, ruleset, (n) => {
    // Progress is a counter for the people watching: no fsync on the event loop for it.
    withEngineSync(db, () => updateRun(db, id, n, null));
    onProgress?.(n, rows.length);
  }).then(
    () => {
      updateRun(db, id, rows.length, { state: 'finished', error: null, at: Date.now() });
      return getRunRow(db, id) as RunRow;
    },
    (err: unknown) => {
      updateRun(db, id, 0, { state: 'failed', error: err instanceof Error ? err.message : String(err), at: Date.now() });
      return getRunRow(db, id) as RunRow;
    },
  );
  return { id, total: rows.length, done };
}

export function getComplianceRun(db: DB, actor: Actor, id: string): RunRow {
  authorize(actor, COMPLIANCE_OPS.check);
  const r = getRunRow(db, id);
  if (!r) throw ApiError.notFound(`compliance run ${id}`);
  return r;
}

/**
 * Violations on the devices' newest versions (waived ones left out) by rule and severity, for /metrics: the rules in
 * force only (a removed rule's old results are not counted). The whole fleet, as the other gauges.
 */
export function countViolations(db: DB, dataDir: string, now = Date.now()): { rule_id: string; severity: Severity; n: number }[] {
  const ruleset = loadRuleset(db, dataDir);
  return countViolationsByRule(db, now).flatMap((r) => {
    const info = ruleset.info.get(r.rule_id);
    return info ? [{ rule_id: r.rule_id, severity: info.rule.severity, n: r.n }] : [];
  });
}
