// `db check` for the snapshot store: every referenced snapshot exists and matches its hash; orphans are reported.
import type { DB } from '../../db/open';
import { SnapshotIntegrityError, type SnapshotStore } from '../../store/snapshots';
import type { CheckReport } from './maintenance.service';
import { findOrphanFiles } from './retention.service';
import { runningBackupCount, storedVersionHashes } from './maintenance.store';

export function checkSnapshots(db: DB, store: SnapshotStore): CheckReport {
  // Stored versions only: a running backup names its snapshot before the file is written (docs/snapshot-lifecycle.md).
  const referenced = storedVersionHashes(db);
  const missing: string[] = [];
  const corrupt: string[] = [];
  for (const hash of referenced) {
    try {
      if (store.read(hash) === null) missing.push(hash);
    } catch (err) {
      if (err instanceof SnapshotIntegrityError) corrupt.push(hash);
      else throw err;
    }
  }
  const orphans = findOrphanFiles(db, store);
  const running = runningBackupCount(db);
  const lines = [
    `snapshots referenced: ${referenced.length}`,
    missing.length ? `snapshots missing: ${missing.length} (${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''})` : 'snapshots missing: 0',
    corrupt.length ? `snapshots failing their hash: ${corrupt.length} (${corrupt.slice(0, 5).join(', ')})` : 'snapshots failing their hash: 0',
    `orphan snapshot files: ${orphans.unreferenced.length}${orphans.unreferenced.length ? ' (removed by `db prune` once untouched for [retention] orphan_grace_hours)' : ''}`,
    `leftover temporary files: ${orphans.temporary.length}`,
    `backups still marked running: ${running}`,
  ];
  // Orphans are harmless leftovers of an interrupted write; missing or corrupt snapshots are real damage.
  return { ok: missing.length === 0 && corrupt.length === 0, lines };
}
