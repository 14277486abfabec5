// The worker side of the line index's upkeep: the distinct lines of snapshots, read and verified off the event loop.
import path from 'node:path';
import { SnapshotIntegrityError, SnapshotStore } from '../../../store/snapshots';

export interface IndexLinesTask {
  snapshotsRoot: string;
  hashes: string[];
}

/**
 * Per hash, its distinct lines as the search splits them; `oversized` when the version is too big to index (the search
 * reads its file instead); or a problem when the file is missing or damaged.
 */
export type IndexLinesDone = ({ hash: string; lines: string[] } | { hash: string; oversized: true } | { hash: string; problem: string })[];

/**
 * The most one version may bring to the index: its lines are written in one transaction, which holds the database's
 * write lock, so it must stay short (a backup being recorded waits for it). A bigger version (a large firewall's 30 MB)
 * is searched from its file.
 */
export const MAX_INDEXED_BYTES = 2_000_000;
export const MAX_INDEXED_LINES = 20_000;

/** Lines as the search sees them: split at each newline, the final newline ending the last line. */
export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Read past the searches' text cache (snapshot-text.ts): a backfill of every device would only churn it. */
export function indexLines(task: IndexLinesTask): IndexLinesDone {
  const store = new SnapshotStore(path.dirname(task.snapshotsRoot));
  return task.hashes.map((hash) => {
    try {
      const text = store.read(hash);
      if (text === null) return { hash, problem: 'snapshot file missing' };
      if (text.length > MAX_INDEXED_BYTES) return { hash, oversized: true as const };
      const lines = [...new Set(splitLines(text))];
      return lines.length > MAX_INDEXED_LINES ? { hash, oversized: true as const } : { hash, lines };
    } catch (err) {
      if (!(err instanceof SnapshotIntegrityError)) throw err;
      return { hash, problem: err.message };
    }
  });
}
