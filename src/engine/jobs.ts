// Everything one device backup needs (address, decrypted credential, template), and what a backup learns about the device.
import type { DB } from '../db/open';
import { credentialCoversGroup } from '../features/credentials/credential-usage.store';
import { getDecryptedCredential, type DecryptedCredential } from '../features/credentials/credentials.service';
import { getDeviceHold } from '../features/devices/device-holds.store';
import { deleteHostKeyOffer, getHostKeyOffer, putHostKeyOffer } from '../features/devices/host-keys.store';
import { getDeviceRow, setDeviceHostKey } from '../features/devices/devices.store';
import { recordReachability } from '../features/notifications/notifications.service';
import { getTemplateSpec } from '../features/templates/templates.service';
import type { SecretBox } from '../identity/secrets';
import type { TemplateSpec } from './templates/types';
import type { CollectTarget, FailureType } from './types';

export interface BackupJob {
  deviceId: number;
  deviceName: string;
  enabled: boolean;
  templateId: number;
  template: TemplateSpec;
  target: CollectTarget;
}

/**
 * The job of one device, or undefined when the device or its template is gone. The credential is decrypted
 * only when its usage scope covers the device's group; when it does not, or the master key cannot open it,
 * the target carries no secret and a `refused` failure, so the backup fails as data and nothing is sent. The same
 * for a held device (its address or credential chosen by a user not entitled to the credential, not yet approved).
 */
export function loadBackupJob(db: DB, secrets: SecretBox, deviceId: number): BackupJob | undefined {
  const device = getDeviceRow(db, deviceId);
  if (!device) return undefined;
  const template = getTemplateSpec(db, device.template_id);
  if (!template) return undefined;
  const address = { host: device.hostname, port: device.port, protocol: device.protocol };
  const job = { deviceId: device.id, deviceName: device.name, enabled: device.enabled === 1, templateId: device.template_id, template };
  if (!credentialCoversGroup(db, device.credential_id, device.group_id)) {
    const where = device.group_id === null ? 'ungrouped devices' : `devices in group ${device.group_id}`;
    return { ...job, target: { ...address, username: '', refused: { failure: 'CREDENTIAL_NOT_PERMITTED', message: `Credential ${device.credential_id} may not be used by ${where}; no login was attempted.` } } };
  }
  const hold = getDeviceHold(db, device.id);
  if (hold) {
    const name = hold.credential_name ?? String(device.credential_id);
    const message = `held: address or credential changed by ${hold.held_by}, not yet approved by a user entitled to credential ${name}; no login was attempted.`;
    return { ...job, target: { ...address, username: '', refused: { failure: 'CREDENTIAL_NOT_PERMITTED', message } } };
  }
  let credential: DecryptedCredential | undefined;
  try {
    credential = getDecryptedCredential(db, secrets, device.credential_id);
  } catch {
    const message = `Credential ${device.credential_id} cannot be decrypted with this appliance's master key (was master.key replaced?); no login was attempted.`;
    return { ...job, target: { ...address, username: '', refused: { failure: 'CREDENTIAL_UNREADABLE', message } } };
  }
  if (!credential) return undefined;
  const offer = getHostKeyOffer(db, device.id);
  return {
    ...job,
    target: {
      ...address,
      ...credential,
      known_host_key: device.host_key,
      accepted_host_key: offer?.approved_at ? offer.fingerprint : null,
    },
  };
}

/**
 * Record what a backup attempt learnt about the device: reachability and host key. The first key seen is
 * recorded; a different one only when it is the exact fingerprint a user approved (the approval is then used
 * up). A refused changed key is kept as the device's offer, for a user to look at and accept.
 */
export function recordDeviceContact(
  db: DB,
  job: Pick<BackupJob, 'deviceId' | 'target'>,
  c: { reachability: 'reachable' | 'unreachable' | null; error: string | null; hostKey: string | null; failure?: FailureType | null; backupId?: string | null },
  at = Date.now(),
): void {
  db.transaction(() => {
    if (c.reachability) recordReachability(db, job.deviceId, c.reachability, c.error, at);
    const known = job.target.known_host_key;
    if (!c.hostKey || c.hostKey === known) return;
    if (!known || c.hostKey === job.target.accepted_host_key) {
      setDeviceHostKey(db, job.deviceId, c.hostKey);
      deleteHostKeyOffer(db, job.deviceId);
    } else if (c.failure === 'HOST_KEY_CHANGED') {
      putHostKeyOffer(db, job.deviceId, c.hostKey, c.backupId ?? null, at);
    }
  })();
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
