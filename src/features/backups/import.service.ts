// Imports configurations as successful backups (audited): one file, or the whole history of an Oxidized or RANCID git repository.
import type { DB } from '../../db/open';
import { getDeviceRow } from '../devices/devices.store';
import { getTemplateSpec } from '../templates/templates.service';
import { ApiError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import { recordAudit } from '../audit/audit.service';
import { openGitRepository, SAFE_LOG_FLAGS } from './git-reader';
import { sha256Hex, type SnapshotStore } from '../../store/snapshots';
import { finishBackupSync, startBackup } from './backups.service';

interface DeviceForImport {
  id: number;
  name: string;
  template_id: number;
  ignore_patterns: string[];
}

function loadDevice(db: DB, deviceId: number): DeviceForImport {
  const row = getDeviceRow(db, deviceId);
  if (!row) throw ApiError.notFound(`device ${deviceId}`);
  return { id: row.id, name: row.name, template_id: row.template_id, ignore_patterns: getTemplateSpec(db, row.template_id)?.ignore_patterns ?? [] };
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

function storeImported(db: DB, store: SnapshotStore, device: DeviceForImport, clean: string, startedAt: number) {
  const started = startBackup(db, device.id, device.template_id, 'import', startedAt);
  return finishBackupSync(db, store, started, { ok: true, text: clean, ignorePatterns: device.ignore_patterns }, startedAt);
}

/** Records one configuration file as a successful backup of the device, with its audit row. */
export function importBackup(db: DB, actor: Actor, store: SnapshotStore, deviceId: number, text: string, startedAt = Date.now()) {
  authorize(actor, 'backups.run');
  const clean = normaliseImportedText(text);
  return db
    .transaction(() => {
      const device = loadDevice(db, deviceId);
      if (clean === '') throw ApiError.validation([{ field: 'file', message: 'the file is empty' }], 'nothing to import: the file is empty');
      const r = storeImported(db, store, device, clean, startedAt);
      recordAudit(db, actor, {
        action: 'backup.import',
        target: `device ${device.id}`,
        details: { name: device.name, backup_id: r.id, started_at: startedAt, changed: r.changed, size: Buffer.byteLength(clean) },
      });
      return r;
    })
    .immediate();
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
 * Replays a git repository's history, oldest first: one successful backup per commit that touched a device's
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
  opts: { trustOwner?: boolean; onProgress?: (p: GitImportProgress) => void } = {},
): GitImportProgress & { unmatched: string[] } {
  authorize(actor, 'backups.run');
  const git = openGitRepository(repoPath, { trustOwner: opts.trustOwner });
  const devices = new Map<string, number>();
  for (const r of db.prepare('SELECT id, name FROM devices').all() as { id: number; name: string }[]) devices.set(r.name.toLowerCase(), r.id);
  const log = git.run(['log', ...SAFE_LOG_FLAGS, '--reverse', '--format=%x00%H %ct', '--name-only', '--no-renames', '--diff-filter=AM', 'HEAD']);
  const commits = log
    .split('\0')
    .filter(Boolean)
    .map((block) => {
      const [head, ...files] = block.split('\n').filter(Boolean);
      const [hash, ct] = head.split(' ');
      return { hash, at: Number(ct) * 1000, files };
    });
  const exists = db.prepare('SELECT 1 FROM backups WHERE device_id = ? AND started_at = ? AND config_snapshot_hash = ?');
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
      const text = normaliseImportedText(git.run(['cat-file', 'blob', `${c.hash}:${file}`]));
      if (text === '' || exists.get(deviceId, c.at, sha256Hex(text))) {
        progress.skipped++;
        continue;
      }
      storeImported(db, store, loadDevice(db, deviceId), text, c.at);
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
