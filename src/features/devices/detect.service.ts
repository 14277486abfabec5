// Platform and credential detection's rules and records: who may detect, with which credentials in which order, and the audit row.
import type { DB } from '../../db/open';
import type { Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import type { SecretBox } from '../../identity/secrets';
import { recordAudit } from '../audit/audit.service';
import { credentialCoversGroup } from '../credentials/credential-usage.store';
import { credentialEntitlementGap } from '../credentials/credentials.policy';
import { getDecryptedCredential, listCredentials, type DecryptedCredential } from '../credentials/credentials.service';
import { detectableTemplates } from '../templates/templates.service';
import { DEVICE_OPS } from './devices.policy';
import { getDevice, type Device } from './devices.service';

export { detectableTemplates };

/** Where detection connects: a device's address, or one about to be added, with the group deciding which credentials may go there. */
export interface DetectAddress {
  host: string;
  port: number;
  protocol: 'ssh' | 'telnet';
  group_id: number | null;
  /** The device's recorded SSH host key: a different one is refused as in a backup. */
  known_host_key?: string | null;
}

/** A credential detection may try, decrypted for the engine only: never put it in a response or a log line. */
export interface DetectCredential {
  id: number;
  name: string;
  login: DecryptedCredential;
}

/** The device to detect, refused (403/404) outside the actor's scope or without devices.update. */
export function deviceForDetection(db: DB, actor: Actor, deviceId: number): Device {
  authorize(actor, DEVICE_OPS.detect);
  return getDevice(db, actor.principal.scope, deviceId);
}

/**
 * The credentials detection tries, in order: `first` (the device's own, or the one the user named), then every other
 * credential the actor is entitled to (credentials.view and a usage scope inside the actor's scope), by id; each must
 * cover the address's group (as a device there could use it). At most `maxTries`, so no account gets locked out.
 */
export function detectionCredentials(
  db: DB,
  actor: Actor,
  secrets: SecretBox,
  at: Pick<DetectAddress, 'group_id'>,
  first: number | null,
  maxTries: number,
): DetectCredential[] {
  const all = listCredentials(db, { page: 1, limit: 10_000 }).items;
  const ordered = [...all.filter((c) => c.id === first), ...all.filter((c) => c.id !== first)];
  const out: DetectCredential[] = [];
  for (const c of ordered) {
    if (out.length >= maxTries) break;
    if (credentialEntitlementGap(db, actor, c.id) !== null || !credentialCoversGroup(db, c.id, at.group_id)) continue;
    let login: DecryptedCredential | undefined;
    try {
      login = getDecryptedCredential(db, secrets, c.id);
    } catch {
      continue; // a credential the master key cannot open is skipped, as a backup would refuse it
    }
    if (login) out.push({ id: c.id, name: c.name, login });
  }
  return out;
}

/** The audit row of one detection: where, which credentials were tried (ids, never secrets), what was picked and why. */
export function recordDetection(
  db: DB,
  actor: Actor,
  target: string,
  details: { name: string; template: string | null; credential_id: number | null; tried: number[]; reason: string; applied: boolean },
): void {
  recordAudit(db, actor, { action: 'device.detect', target, details });
}
