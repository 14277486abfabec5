// Imports configurations as successful backups (audited): one file, or the whole history of an Oxidized or RANCID git repository.
import type { DB } from '../../db/open';
import { deviceNameRows, getDeviceRow } from '../devices/devices.store';
import { backupExistsAt } from './backups.store';
import { getTemplateSpec } from '../templates/templates.service';
import { ApiError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import { BACKUP_OPS } from './backups.policy';
import { recordAudit } from '../audit/audit.service';
import { openGitRepository, SAFE_LOG_FLAGS } from './git-reader';
import { sha256Hex, type SnapshotStore } from '../../store/snapshots';
import { finishBackupSync, startBackup } from './backup-record.service';
import type { RedactionKey } from '../../templates/redact';
import { storedText } from '../../templates/stored-text';
import { markersRestored, understoodLines } from './import-tools';
import type { TemplateSpec } from '../../templates/types';
import { decodeConfigBytes, type SourceEncoding } from '../../lib/decode';
import { judgeStoredVersion } from '../compliance/compliance.service';

interface DeviceForImport {
  id: number;
  name: string;
  template_id: number;
  ignore_patterns: string[];
  /** The template's clean-up rules, applied as to a live capture (storedText). */
  rules: Pick<TemplateSpec, 'strip_patterns' | 'redact_patterns'>;
  /** False for a template with `redact: false` (it stores secrets as received). */
  redacts: boolean;
}

export interface ImportOptions {
  /**
   * The appliance's redaction key when `[backup] redact_secrets` is on (SecretBox.redactionKey), as a live backup gets
   * it: imported text then has its secrets replaced by the same keyed tokens. Absent or null: stored as read.
   */
  redact_key?: RedactionKey | null;
}

function loadDevice(db: DB, deviceId: number): DeviceForImport {
  const row = getDeviceRow(db, deviceId);
  if (!row) throw ApiError.notFound(`device ${deviceId}`);
  const spec = getTemplateSpec(db, row.template_id);
  return {
    id: row.id,
    name: row.name,
    template_id: row.template_id,
    ignore_patterns: spec?.ignore_patterns ?? [],
    rules: { strip_patterns: spec?.strip_patterns ?? [], redact_patterns: spec?.redact_patterns ?? [] },
    redacts: spec?.redact === true,
  };
}

/**
 * Normalised imported text as a live backup of the device would store it: the old tool's additions understood
 * (import-tools.ts), then the template's strip and redact rules through storedText, the function live captures go
 * through, so the first live backup after an import differs only where the configuration does.
 */
function storedForm(device: DeviceForImport, clean: string, key: RedactionKey | null | undefined): string {
  const redactKey = key && device.redacts ? key : null;
  const text = storedText(understoodLines(clean), device.rules, redactKey ? { redact: true, key: redactKey } : { redact: false });
  return markersRestored(text, redactKey);
}

/** Stored form of imported text: LF line endings, no trailing spaces, exactly one final newline. */
export function normaliseImportedText(text: string): string {
  const lines = text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => l.trimEnd());
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.length ? lines.join('\n') + '\n' : '';
}

function storeImported(db: DB, store: SnapshotStore, device: DeviceForImport, clean: string, startedAt: number, encoding: SourceEncoding | null) {
  const started = startBackup(db, device.id, device.template_id, 'import', startedAt);
  return finishBackupSync(db, store, started, { ok: true, text: clean, ignorePatterns: device.ignore_patterns, imported: true, encoding }, startedAt);
}

/**
 * The stored form of a file's bytes: decoded first (UTF-16, a byte-order mark, bytes that are not UTF-8: lib/decode.ts,
 * the decoder live backups use), then normalised and redacted, so odd bytes never let a secret through.
 */
function importedForm(
  device: DeviceForImport,
  bytes: Uint8Array | string,
  key: RedactionKey | null | undefined,
): { clean: string; encoding: SourceEncoding | null } {
  const { text, encoding } = decodeConfigBytes(bytes);
  return { clean: storedForm(device, normaliseImportedText(text), key), encoding };
}

/** Records one configuration file (its bytes, decoded here) as a successful backup of the device, with its audit row. */
export function importBackup(
  db: DB,
  actor: Actor,
  store: SnapshotStore,
  deviceId: number,
  content: Uint8Array | string,
  startedAt = Date.now(),
  opts: ImportOptions = {},
) {
  authorize(actor, BACKUP_OPS.import);
  const r = db
    .transaction(() => {
      const device = loadDevice(db, deviceId);
      const { clean, encoding } = importedForm(device, content, opts.redact_key);
      if (clean === '') throw ApiError.validation([{ field: 'file', message: 'the file is empty' }], 'nothing to import: the file is empty');
      const r = storeImported(db, store, device, clean, startedAt, encoding);
      recordAudit(db, actor, {
        action: 'backup.import',
        target: `device ${device.id}`,
        details: { name: device.name, backup_id: r.id, started_at: startedAt, changed: r.changed, size: Buffer.byteLength(clean), encoding },
      });
      return r;
    })
    .immediate();
  // Committed with its audit row: judged in the background (complianceIdle waits for it).
  judgeStoredVersion(db, store, r.id);
  return r;
}

export type GitLayout = 'oxidized' | 'rancid';

/** The device name a repository path belongs to, or null when the path is not a device config in that layout. */
export function deviceNameForPath(file: string, layout: GitLayout): string | null {
  const parts = file.split('/');
  const base = parts[parts.length - 1];
  if (!base || base.startsWith('.')) return null;
  if (layout === 'rancid') {
    // <group>/configs/<device>
    return parts.length >= 2 && parts[parts.length - 2] === 'configs' ? base : null;
  }
  // Oxidized: <device> at the top, or <group>/<device> with groups; never its own metadata files.
  return /\.(md|txt|json|yml|yaml)$/i.test(base) || parts.length > 2 ? null : base;
}

export interface GitImportProgress {
  commitsDone: number;
  commitsTotal: number;
  imported: number;
  skipped: number;
}

/**
 * Replays a git repository's history, oldest first (redacted like a live backup when `redact_key` is given): one successful backup per commit that touched a device's
 * file, at the commit's time, devices matched by name (case-insensitive). A version already present for that
 * device at that time with the same hash is skipped, so running it again imports nothing twice. Git runs with a
 * fixed configuration (see git-reader.ts); a repository of another owner needs `trustOwner`. One audit row sums it up.
 */
export function importGitHistory(
  db: DB,
  actor: Actor,
  store: SnapshotStore,
  repoPath: string,
  layout: GitLayout,
  opts: ImportOptions & { trustOwner?: boolean; onProgress?: (p: GitImportProgress) => void } = {},
): GitImportProgress & { unmatched: string[] } {
  authorize(actor, BACKUP_OPS.import);
  const git = openGitRepository(repoPath, { trustOwner: opts.trustOwner });
  const devices = new Map<string, number>();
  for (const r of deviceNameRows(db)) devices.set(r.name.toLowerCase(), r.id);
  const log = git.run(['log', ...SAFE_LOG_FLAGS, '--reverse', '--format=%x00%H %ct', '--name-only', '--no-renames', '--diff-filter=AM', 'HEAD']);
  const commits = log
    .split('\0')
    .filter(Boolean)
    .map((block) => {
      const [head, ...files] = block.split('\n').filter(Boolean);
      const [hash, ct] = head.split(' ');
      return { hash, at: Number(ct) * 1000, files };
    });
  const unmatched = new Set<string>();
  const progress: GitImportProgress = { commitsDone: 0, commitsTotal: commits.length, imported: 0, skipped: 0 };
  for (const c of commits) {
    for (const file of c.files) {
      const name = deviceNameForPath(file, layout);
      if (!name) continue;
      const deviceId = devices.get(name.toLowerCase());
      if (deviceId === undefined) {
        unmatched.add(name);
        continue;
      }
      // cat-file prints the stored blob as it is: no textconv, filters or pager.
      const device = loadDevice(db, deviceId);
      const { clean: text, encoding } = importedForm(device, git.runBytes(['cat-file', 'blob', `${c.hash}:${file}`]), opts.redact_key);
      if (text === '' || backupExistsAt(db, deviceId, c.at, sha256Hex(text))) {
        progress.skipped++;
        continue;
      }
      judgeStoredVersion(db, store, storeImported(db, store, device, text, c.at, encoding).id);
      progress.imported++;
    }
    progress.commitsDone++;
    opts.onProgress?.(progress);
  }
  const result = { ...progress, unmatched: [...unmatched].sort() };
  db.transaction(() => {
    recordAudit(db, actor, {
      action: 'backup.import_git',
      target: `repository ${git.repo}`,
      details: {
        layout,
        commits: result.commitsTotal,
        imported: result.imported,
        skipped: result.skipped,
        unmatched: result.unmatched.length,
        trust_owner: opts.trustOwner === true,
      },
    });
  }).immediate();
  return result;
}
