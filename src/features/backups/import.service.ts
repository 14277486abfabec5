// Imports configurations as successful backups: one file, or the whole history of an Oxidized or RANCID git repository.
import { execFileSync } from 'node:child_process';
import type { DB } from '../../db/open';
import { changeFingerprint } from '../../engine/normalise';
import { getDeviceRow } from '../devices/devices.store';
import { getTemplateSpec } from '../templates/templates.service';
import { ApiError } from '../../errors';
import { sha256Hex, type SnapshotStore } from '../../store/snapshots';
import { finishBackup, startBackup } from './backups.service';

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
  const lines = text.replace(/\r\n?/g, '\n').split('\n').map((l) => l.trimEnd());
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.length ? lines.join('\n') + '\n' : '';
}

export function importBackup(db: DB, store: SnapshotStore, deviceId: number, text: string, startedAt = Date.now()) {
  const device = loadDevice(db, deviceId);
  const clean = normaliseImportedText(text);
  if (clean === '') throw ApiError.validation([{ field: 'file', message: 'the file is empty' }], 'nothing to import: the file is empty');
  const started = startBackup(db, device.id, device.template_id, 'import', startedAt);
  return finishBackup(db, store, started, { ok: true, text: clean, fingerprint: changeFingerprint(clean, device.ignore_patterns) }, startedAt);
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

function git(repo: string, args: string[]): string {
  // safe.directory: the repository is usually owned by another user (the old tool's), which git refuses by default.
  return execFileSync('git', ['-c', 'safe.directory=*', '-C', repo, ...args], { encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 });
}

/**
 * Replays a git repository's history, oldest first: one successful backup per commit that touched a device's
 * file, at the commit's time, devices matched by name (case-insensitive). A version already present for that
 * device at that time with the same hash is skipped, so running it again imports nothing twice.
 */
export function importGitHistory(
  db: DB,
  store: SnapshotStore,
  repo: string,
  layout: GitLayout,
  onProgress?: (p: GitImportProgress) => void,
): GitImportProgress & { unmatched: string[] } {
  try {
    git(repo, ['rev-parse', '--git-dir']);
  } catch {
    throw ApiError.validation([{ field: 'repo', message: 'not a git repository' }], `${repo} is not a git repository`);
  }
  const devices = new Map<string, number>();
  for (const r of db.prepare('SELECT id, name FROM devices').all() as { id: number; name: string }[]) devices.set(r.name.toLowerCase(), r.id);
  const log = git(repo, ['log', '--reverse', '--format=%x00%H %ct', '--name-only', '--no-renames', '--diff-filter=AM', 'HEAD']);
  const commits = log.split('\0').filter(Boolean).map((block) => {
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
      const text = normaliseImportedText(git(repo, ['show', `${c.hash}:${file}`]));
      if (text === '' || exists.get(deviceId, c.at, sha256Hex(text))) {
        progress.skipped++;
        continue;
      }
      importBackup(db, store, deviceId, text, c.at);
      progress.imported++;
    }
    progress.commitsDone++;
    onProgress?.(progress);
  }
  return { ...progress, unmatched: [...unmatched].sort() };
}
