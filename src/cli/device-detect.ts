// `confvault device detect ID|NAME|--all` and `device add --template auto --credential auto`: platform and credential detection from the console.
import type { Appliance } from '../app/bootstrap';
import { detectAt, detectDevice, type DetectResult } from '../engine/device-detect';
import { getInventoryDevice, listInventory } from '../features/devices/devices-csv.service';
import { loadInventoryRefs, type Resolved } from '../features/devices/devices-import-refs';
import { DEFAULT_PORT } from '../features/devices/devices.service';
import { SCOPE_ALL } from '../identity/principal';
import { UsageError, consoleActor, err, out } from './common';

export const DETECT_HELP = `detect   Finds each device's platform and credential: logs in with its own credential, then the
         others that may serve its group (at most backup.detect_max_tries), reads the banner and prompt,
         runs each template's read-only probe command once (show version, display version, ...) and
         scores every template's detect patterns. The pick becomes the device's template and credential
         (--dry-run: only printed). One line per device: id, name, template, credential, and why
         ("could not tell: ..." when nothing or two twins matched; the device is left as it was).
         --json: the whole result, with each matching pattern and line. Exits 1 when any device was
         not detected.`;

const AUTO = 'auto';

function refOrThrow(r: Resolved, flag: string): number {
  if ('error' in r) throw new UsageError(`device add: ${flag}: ${r.error}`);
  return r.id;
}

/**
 * `device add` with --template auto and/or --credential auto: detects at the address first and returns the fields
 * to create the device with (a named credential is tried first). Throws a one-sentence error when nothing was found.
 */
export async function autoDeviceFields<
  F extends { hostname?: string; port?: string; protocol?: string; group?: string; credential?: string; template?: string },
>(a: Appliance, f: F): Promise<F> {
  if (f.template !== AUTO && f.credential !== AUTO) return f;
  const refs = loadInventoryRefs(a.db);
  const protocol = f.protocol === 'telnet' ? 'telnet' : 'ssh';
  const port = f.port && /^\d{1,5}$/.test(f.port) ? Number(f.port) : DEFAULT_PORT[protocol];
  const group_id = f.group ? refOrThrow(refs.group(f.group), '--group') : null;
  const first = f.credential && f.credential !== AUTO ? refOrThrow(refs.credential(f.credential), '--credential') : null;
  const r = await detectAt(a, consoleActor(), { host: f.hostname ?? '', port, protocol, group_id }, first);
  if (r.template === null || r.credential_id === null) throw new Error(`device add: detection found no platform: ${r.reason}`);
  err(`detected: ${r.reason}`);
  return {
    ...f,
    template: f.template === AUTO ? r.template : f.template,
    credential: f.credential === AUTO ? String(r.credential_id) : f.credential,
  };
}

function line(id: number, name: string, r: DetectResult, a: Appliance): string {
  const refs = loadInventoryRefs(a.db);
  return [id, name, r.template ?? '-', r.credential_id === null ? '-' : refs.credentialName(r.credential_id), r.reason].join('\t');
}

/** Detects the devices named (an id or a name) or every device; prints one line each (or JSON) and returns the exit code. */
export async function runDeviceDetect(a: Appliance, target: { arg?: string; all: boolean; json: boolean; dryRun: boolean }): Promise<number> {
  if (target.all === (target.arg !== undefined)) throw new UsageError('device detect: give one device (ID or NAME) or --all');
  const devices = target.all ? listInventory(a.db, SCOPE_ALL, {}) : [getInventoryDevice(a.db, SCOPE_ALL, target.arg!)];
  const results = [];
  let missed = 0;
  for (const { id, name } of devices) {
    const r = await detectDevice(a, consoleActor(), id, { apply: !target.dryRun });
    if (r.template === null) missed++;
    results.push({ device_id: id, name, ...r });
    if (!target.json) out(line(id, name, r, a));
  }
  if (target.json) out(JSON.stringify(results, null, 2));
  if (missed) err(`${missed} of ${devices.length} device(s) not detected: left as they were`);
  return missed ? 1 : 0;
}
