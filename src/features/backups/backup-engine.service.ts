// The backup engine's data, through services: each device's backup plan (address, decrypted credential, template), due devices
// and schedules, what a backup learns about the device, running and interrupted backups.
import { withEngineSync, type DB } from '../../db/open';
import { credentialCoversGroup } from '../credentials/credential-usage.store';
import { getDecryptedCredential, type DecryptedCredential } from '../credentials/credentials.service';
import { getDeviceHold } from '../devices/device-holds.store';
import { deleteHostKeyOffer, getHostKeyOffer, putHostKeyOffer } from '../devices/host-keys.store';
import { getDeviceRow, setDeviceHostKey } from '../devices/devices.store';
import { recordReachability as recordReachabilityAndNotify } from '../notifications/notification-events.service';
import { getTemplateSpec } from '../templates/templates.service';
import type { SecretBox } from '../../identity/secrets';
import type { TemplateSpec } from '../../templates/types';
import type { CollectTarget, FailureType } from './failure-types';
import { closeInterruptedBackups as closeInterruptedBackupRows, runningBackupForDevice, type BackupTrigger } from './backups.store';
import { startBackup, type StartedBackup } from './backup-record.service';
import { enabledDeviceSchedules, groupScheduleRows, probeTargetRows, scheduleVersion, selectDeviceIdRows, type ProbeTargetRow } from './backup-engine.store';

export type { BackupTrigger } from './backups.store';
export type { ProbeTargetRow } from './backup-engine.store';

/** What one device's backup needs: its address with the credential (or why none is sent), and its template. */
export interface BackupPlan {
  deviceId: number;
  deviceName: string;
  enabled: boolean;
  templateId: number;
  template: TemplateSpec;
  target: CollectTarget;
}

/**
 * The backup plan of one device, or undefined when the device or its template is gone. The credential is decrypted
 * only when its usage scope covers the device's group; when it does not, or the master key cannot open it,
 * the target carries no secret and a `refused` failure, so the backup fails as data and nothing is sent. The same
 * for a held device (its address or credential chosen by a user not entitled to the credential, not yet approved).
 */
export function loadBackupPlan(db: DB, secrets: SecretBox, deviceId: number): BackupPlan | undefined {
  const device = getDeviceRow(db, deviceId);
  if (!device) return undefined;
  const template = getTemplateSpec(db, device.template_id);
  if (!template) return undefined;
  const address = { host: device.hostname, port: device.port, protocol: device.protocol };
  const plan = { deviceId: device.id, deviceName: device.name, enabled: device.enabled === 1, templateId: device.template_id, template };
  if (!credentialCoversGroup(db, device.credential_id, device.group_id)) {
    const where = device.group_id === null ? 'ungrouped devices' : `devices in group ${device.group_id}`;
    return {
      ...plan,
      target: {
        ...address,
        username: '',
        refused: { failure: 'CREDENTIAL_NOT_PERMITTED', message: `Credential ${device.credential_id} may not be used by ${where}; no login was attempted.` },
      },
    };
  }
  const hold = getDeviceHold(db, device.id);
  if (hold) {
    const name = hold.credential_name ?? String(device.credential_id);
    const message = `held: address or credential changed by ${hold.held_by}, not yet approved by a user entitled to credential ${name}; no login was attempted.`;
    return { ...plan, target: { ...address, username: '', refused: { failure: 'CREDENTIAL_NOT_PERMITTED', message } } };
  }
  let credential: DecryptedCredential | undefined;
  try {
    credential = getDecryptedCredential(db, secrets, device.credential_id);
  } catch {
    const message = `Credential ${device.credential_id} cannot be decrypted with this appliance's master key (was master.key replaced?); no login was attempted.`;
    return { ...plan, target: { ...address, username: '', refused: { failure: 'CREDENTIAL_UNREADABLE', message } } };
  }
  if (!credential) return undefined;
  const offer = getHostKeyOffer(db, device.id);
  return {
    ...plan,
    target: {
      ...address,
      ...credential,
      known_host_key: device.host_key,
      accepted_host_key: offer?.approved_at ? offer.fingerprint : null,
    },
  };
}

/** What storing a collector's result needs of a device: its template and known host keys, never its credential. */
export interface ResultPlan extends Pick<BackupPlan, 'deviceId' | 'deviceName' | 'templateId' | 'template'> {
  target: Pick<CollectTarget, 'known_host_key' | 'accepted_host_key'>;
}

/**
 * loadBackupPlan for a result that comes back from a collector (collectors-bench, #27): the credential was sealed to
 * the collector at lease time, so none is read or decrypted here. Undefined when the device or its template is gone.
 */
export function loadResultPlan(db: DB, deviceId: number): ResultPlan | undefined {
  const device = getDeviceRow(db, deviceId);
  if (!device) return undefined;
  const template = getTemplateSpec(db, device.template_id);
  if (!template) return undefined;
  const offer = getHostKeyOffer(db, device.id);
  return {
    deviceId: device.id,
    deviceName: device.name,
    templateId: device.template_id,
    template,
    target: { known_host_key: device.host_key, accepted_host_key: offer?.approved_at ? offer.fingerprint : null },
  };
}

/**
 * Record what a backup attempt learnt about the device: reachability and host key. The first key seen is
 * recorded; a different one only when it is the exact fingerprint a user approved (the approval is then used
 * up). A refused changed key is kept as the device's offer, for a user to look at and accept.
 */
export function recordDeviceContact(
  db: DB,
  plan: Pick<ResultPlan, 'deviceId' | 'target'>,
  c: { reachability: 'reachable' | 'unreachable' | null; error: string | null; hostKey: string | null; failure?: FailureType | null; backupId?: string | null },
  at = Date.now(),
): void {
  // An engine record: committed without an fsync on the event loop (see withEngineSync).
  withEngineSync(db, () => recordDeviceContactNow(db, plan, c, at));
}

function recordDeviceContactNow(
  db: DB,
  plan: Pick<ResultPlan, 'deviceId' | 'target'>,
  c: { reachability: 'reachable' | 'unreachable' | null; error: string | null; hostKey: string | null; failure?: FailureType | null; backupId?: string | null },
  at: number,
): void {
  db.transaction(() => {
    if (c.reachability) recordReachability(db, plan.deviceId, c.reachability, c.error, at);
    const known = plan.target.known_host_key;
    if (!c.hostKey || c.hostKey === known) return;
    if (!known || c.hostKey === plan.target.accepted_host_key) {
      setDeviceHostKey(db, plan.deviceId, c.hostKey);
      deleteHostKeyOffer(db, plan.deviceId);
    } else if (c.failure === 'HOST_KEY_CHANGED') {
      putHostKeyOffer(db, plan.deviceId, c.hostKey, c.backupId ?? null, at);
    }
  }).immediate();
}

/** Device ids selected by a run: one device, a group with its subgroups, or every enabled device. */
export function selectDeviceIds(db: DB, sel: { deviceId?: number; groupId?: number; all?: boolean }): number[] {
  return selectDeviceIdRows(db, sel);
}

/**
 * Each enabled device's effective schedule: its own, else the nearest group's up the tree, else the global one.
 * Linear: each group's inherited schedule is resolved once (memoised up the tree), then each device is one lookup.
 */
export function effectiveSchedules(db: DB, globalSchedule: string): Map<string, number[]> {
  const groups = new Map<number, { parent_id: number | null; schedule: string | null }>();
  for (const g of groupScheduleRows(db)) groups.set(g.id, g);
  const inherited = new Map<number, string>();
  const groupSchedule = (id: number): string => {
    const known = inherited.get(id);
    if (known !== undefined) return known;
    // Walk up to the first group with a schedule or a known answer; a cycle (never made by the services) ends the walk.
    const path: number[] = [];
    let expr = globalSchedule;
    for (let at: number | null = id; at !== null;) {
      const hit = inherited.get(at);
      if (hit !== undefined) {
        expr = hit;
        break;
      }
      const g = groups.get(at);
      if (!g || path.includes(at)) break;
      path.push(at);
      if (g.schedule !== null) {
        expr = g.schedule;
        break;
      }
      at = g.parent_id;
    }
    for (const p of path) inherited.set(p, expr);
    return expr;
  };
  const bySchedule = new Map<string, number[]>();
  const devices = enabledDeviceSchedules(db);
  for (let i = 0; i < devices.ids.length; i++) {
    const groupId = devices.groupIds[i];
    const expr = devices.schedules[i] ?? (groupId === null ? globalSchedule : groupSchedule(groupId));
    const ids = bySchedule.get(expr);
    if (ids) ids.push(devices.ids[i]);
    else bySchedule.set(expr, [devices.ids[i]]);
  }
  return bySchedule;
}

/**
 * effectiveSchedules kept between calls and read again only when a device or group changed what it depends on (the
 * schedule_version counter, schema 0030): the scheduler's minute re-read and its firings cost one row lookup while
 * nothing changed. The map returned is shared: callers must not change it.
 */
export function scheduleReader(db: DB, globalSchedule: string): () => ReadonlyMap<string, readonly number[]> {
  let kept: { version: number; schedules: Map<string, number[]> } | null = null;
  // One read transaction: the counter and the rows it stands for come from the same snapshot.
  const read = db.transaction(() => {
    const version = scheduleVersion(db);
    if (kept?.version !== version) kept = { version, schedules: effectiveSchedules(db, globalSchedule) };
    return kept.schedules;
  });
  return () => read();
}

/** Every enabled device's management address, for the reachability probe between backups. */
export function listProbeTargets(db: DB): ProbeTargetRow[] {
  return probeTargetRows(db);
}

/** What the reachability probe found for one device. */
export function recordReachability(db: DB, deviceId: number, status: 'reachable' | 'unreachable', error: string | null, at = Date.now()): void {
  recordReachabilityAndNotify(db, deviceId, status, error, at);
}

/** Whether a backup of the device is recorded as running (by this process or another one). */
export function isBackupRunning(db: DB, deviceId: number): boolean {
  return runningBackupForDevice(db, deviceId) !== undefined;
}

/** Close backups left running by a process that stopped: they are recorded as interrupted; returns how many. */
export function closeInterruptedBackups(db: DB, at: number, startedBefore = at): number {
  return closeInterruptedBackupRows(db, at, startedBefore);
}

/** Open the record of a backup the engine starts (an engine record: no fsync on the event loop, see withEngineSync). */
export function startEngineBackup(db: DB, deviceId: number, templateId: number, trigger: BackupTrigger, changedBy: string | null): StartedBackup {
  return withEngineSync(db, () => startBackup(db, deviceId, templateId, trigger, Date.now(), changedBy));
}
