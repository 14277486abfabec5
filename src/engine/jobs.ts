// Everything one device backup needs (address, decrypted credential, template), and what a backup learns about the device.
import type { DB } from '../db/open';
import { getDecryptedCredential } from '../features/credentials/credentials.service';
import { getDeviceRow, setDeviceHostKey, setDeviceReachability } from '../features/devices/devices.store';
import { getTemplateSpec } from '../features/templates/templates.service';
import type { SecretBox } from '../identity/secrets';
import type { TemplateSpec } from './templates/types';
import type { CollectTarget } from './types';

export interface BackupJob {
  deviceId: number;
  deviceName: string;
  enabled: boolean;
  templateId: number;
  template: TemplateSpec;
  target: CollectTarget;
}

export function loadBackupJob(db: DB, secrets: SecretBox, deviceId: number): BackupJob | undefined {
  const device = getDeviceRow(db, deviceId);
  if (!device) return undefined;
  const template = getTemplateSpec(db, device.template_id);
  const credential = getDecryptedCredential(db, secrets, device.credential_id);
  if (!template || !credential) return undefined;
  return {
    deviceId: device.id,
    deviceName: device.name,
    enabled: device.enabled === 1,
    templateId: device.template_id,
    template,
    target: {
      host: device.hostname,
      port: device.port,
      protocol: device.protocol,
      ...credential,
      known_host_key: device.host_key,
      accept_host_key_change: device.accept_host_key_change === 1,
    },
  };
}

/** Record what a backup attempt learnt about the device: reachability and (first or accepted) host key. */
export function recordDeviceContact(
  db: DB,
  job: Pick<BackupJob, 'deviceId' | 'target'>,
  c: { reachability: 'reachable' | 'unreachable' | null; error: string | null; hostKey: string | null },
  at = Date.now(),
): void {
  if (c.reachability) setDeviceReachability(db, job.deviceId, c.reachability, c.error, at);
  const known = job.target.known_host_key;
  // The first key seen is recorded; a different one replaces it only when the change was accepted for this run.
  if (c.hostKey && (!known || (known !== c.hostKey && job.target.accept_host_key_change))) setDeviceHostKey(db, job.deviceId, c.hostKey);
}

/** Device ids selected by a run: one device, a group with its subgroups, or every enabled device. */
export function selectDeviceIds(db: DB, sel: { deviceId?: number; groupId?: number; all?: boolean }): number[] {
  if (sel.deviceId !== undefined) return db.prepare('SELECT id FROM devices WHERE id = ?').pluck().all(sel.deviceId) as number[];
  if (sel.groupId !== undefined) {
    return db
      .prepare(
        `WITH RECURSIVE g(id) AS (SELECT ? UNION SELECT dg.id FROM device_groups dg JOIN g ON dg.parent_id = g.id)
         SELECT d.id FROM devices d WHERE d.group_id IN (SELECT id FROM g) AND d.enabled = 1 ORDER BY d.id`,
      )
      .pluck()
      .all(sel.groupId) as number[];
  }
  return db.prepare('SELECT id FROM devices WHERE enabled = 1 ORDER BY id').pluck().all() as number[];
}
