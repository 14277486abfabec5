// Platform and credential detection (template / credential "auto"): try the candidate credentials in order, probe, score, and say why.
import type { AppConfig } from '../config/config';
import type { DB } from '../db/open';
import type { Actor } from '../identity/actor';
import type { SecretBox } from '../identity/secrets';
import { detectableTemplates, detectionCredentials, deviceForDetection, recordDetection, type DetectAddress } from '../features/devices/detect.service';
import { DEFAULT_PORT, updateDevice } from '../features/devices/devices.service';
import { loadInventoryRefs } from '../features/devices/devices-import-refs';
import { rowsToDetect, type ImportSource, type RowDetection } from '../features/devices/devices-import.service';
import { probeCommands, scoreTemplates, type DetectCandidate } from '../templates/detect';
import { probeDevice } from './detect-probe';
import { limitsFromConfig } from './runner';
import type { FailureType } from './types';

export interface DetectDeps {
  db: DB;
  secrets: SecretBox;
  config: Readonly<AppConfig>;
}

/** One login attempt: the credential (id and name, never a secret) and how it went. */
export interface DetectTry {
  credential_id: number;
  credential: string;
  ok: boolean;
  failure: FailureType | null;
  message: string | null;
}

export interface DetectResult {
  /** The template picked, or null ("could not tell", no login, unreachable): `reason` says which. */
  template: string | null;
  template_id: number | null;
  /** The credential that logged in (null when none did). */
  credential_id: number | null;
  reason: string;
  /** Every template that matched something, best first, each with the pattern and the line that matched. */
  candidates: DetectCandidate[];
  tries: DetectTry[];
}

/**
 * Detects the platform at an address: the candidate credentials in order (detectionCredentials: `first`, then the
 * others the actor may use there, at most backup.detect_max_tries), stopping at the first login; a failure other
 * than a refused login (unreachable, time-out) stops too, since another credential would fare no better.
 * Never throws for what the device does: every outcome is a result with a reason.
 */
export async function detectAt(deps: DetectDeps, actor: Actor, at: DetectAddress, first: number | null): Promise<DetectResult> {
  const { db, secrets, config } = deps;
  const templates = detectableTemplates(db);
  const credentials = detectionCredentials(db, actor, secrets, at, first, config.backup.detect_max_tries);
  const none = (reason: string, tries: DetectTry[] = []): DetectResult => ({
    template: null,
    template_id: null,
    credential_id: null,
    reason,
    candidates: [],
    tries,
  });
  if (credentials.length === 0) return none('could not tell: no credential you may use covers this device group');
  const probes = probeCommands(templates);
  const limits = limitsFromConfig(config);
  const tries: DetectTry[] = [];
  for (const c of credentials) {
    const r = await probeDevice({ host: at.host, port: at.port, protocol: at.protocol, known_host_key: at.known_host_key ?? null, ...c.login }, probes, limits);
    tries.push({ credential_id: c.id, credential: c.name, ok: r.ok, failure: r.ok ? null : r.failure, message: r.ok ? null : r.message });
    if (!r.ok) {
      if (r.failure === 'AUTH_FAILED') continue;
      return none(`could not tell: ${r.message}`, tries);
    }
    const verdict = scoreTemplates(templates, r);
    const picked = templates.find((t) => t.name === verdict.template);
    return { template: verdict.template, template_id: picked?.id ?? null, credential_id: c.id, reason: verdict.reason, candidates: verdict.candidates, tries };
  }
  return none(`could not tell: none of the ${tries.length} credential(s) tried was accepted (${tries.map((t) => t.credential).join(', ')})`, tries);
}

/**
 * Detects one device's platform and credential. With `apply` a pick becomes the device's template and credential
 * (through updateDevice, its rules and audit); nothing is changed when nothing was picked. Audited either way.
 */
export async function detectDevice(deps: DetectDeps, actor: Actor, deviceId: number, opts: { apply: boolean }): Promise<DetectResult & { applied: boolean }> {
  const device = deviceForDetection(deps.db, actor, deviceId);
  const at = { host: device.hostname, port: device.port, protocol: device.protocol, group_id: device.group_id, known_host_key: device.host_key };
  const result = await detectAt(deps, actor, at, device.credential_id);
  let applied = false;
  if (opts.apply && result.template_id !== null && result.credential_id !== null) {
    const patch = {
      ...(result.template_id !== device.template_id ? { template_id: result.template_id } : {}),
      ...(result.credential_id !== device.credential_id ? { credential_id: result.credential_id } : {}),
    };
    if (Object.keys(patch).length) updateDevice(deps.db, actor, device.id, patch);
    applied = true;
  }
  recordDetection(deps.db, actor, `device ${device.id}`, {
    name: device.name,
    template: result.template,
    credential_id: result.credential_id,
    tried: result.tries.map((t) => t.credential_id),
    reason: result.reason,
    applied,
  });
  return { ...result, applied };
}

/** Rows of one import detected at the same time (each row's own tries stay one after another, at most backup.detect_max_tries). */
export const IMPORT_DETECT_CONCURRENCY = 4;

/**
 * Detection for the rows of an import whose template, model or credential is "auto" (rowsToDetect), at most
 * IMPORT_DETECT_CONCURRENCY rows at a time: the row's named credential first when it has one. Names (group,
 * credential) resolve as the import's do. The map is in the order of the file's lines.
 */
export async function detectImportRows(deps: DetectDeps, actor: Actor, source: ImportSource): Promise<Map<number, RowDetection>> {
  const refs = loadInventoryRefs(deps.db);
  const rows = rowsToDetect(source);
  const found = new Map<number, RowDetection>();
  const detectRow = async (r: (typeof rows)[number]): Promise<RowDetection> => {
    const f = r.fields;
    const group = f.group?.trim() ? refs.group(f.group) : null;
    const named = f.credential?.trim() && f.credential.trim().toLowerCase() !== 'auto' ? refs.credential(f.credential) : null;
    if (group && 'error' in group) return { error: group.error };
    const protocol = f.protocol === 'telnet' ? 'telnet' : 'ssh';
    const port = f.port && /^\d{1,5}$/.test(f.port) ? Number(f.port) : DEFAULT_PORT[protocol];
    const at = { host: (f.hostname ?? f.name ?? '').trim(), port, protocol, group_id: group?.id ?? null } as const;
    const d = await detectAt(deps, actor, at, named && 'id' in named ? named.id : null);
    return d.template && d.credential_id !== null ? { template: d.template, credential: String(d.credential_id), reason: d.reason } : { error: d.reason };
  };
  let next = 0;
  const worker = async () => {
    while (next < rows.length) {
      const r = rows[next++];
      found.set(r.row, await detectRow(r));
    }
  };
  await Promise.all(Array.from({ length: Math.min(IMPORT_DETECT_CONCURRENCY, rows.length) }, worker));
  return new Map(rows.map((r) => [r.row, found.get(r.row) as RowDetection]));
}
