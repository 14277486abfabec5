// The worker side of the line index's upkeep: the distinct lines of snapshots, read and verified off the event loop.
import path from 'node:path';
import { SnapshotIntegrityError, SnapshotStore } from '../../../store/snapshots';

export interface IndexLinesTask {
  snapshotsRoot: string;
  hashes: string[];
}

/** Per hash, its distinct lines as the search splits them, or a problem when the file is missing or damaged. */
export type IndexLinesDone = ({ hash: string; lines: string[] } | { hash: string; problem: string })[];

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
      return text === null ? { hash, problem: 'snapshot file missing' } : { hash, lines: [...new Set(splitLines(text))] };
    } catch (err) {
      if (!(err instanceof SnapshotIntegrityError)) throw err;
      return { hash, problem: err.message };
    }
  });
}
