// Entry of a pool worker thread: runs one search, diff, notification's diffs or snapshot read at a time for the main thread (see pool.ts).
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { computeNotificationDiffs, type NotificationDiffsTask } from '../../features/notifications/notification-diffs';
import { diffTask, readTask } from '../diff';
import type { WorkerMessage } from './pool';
import { runSearch, type SearchTask } from './search-task';
import { readSnapshotText } from './snapshot-text';

type Request =
  | { id: number; task: { kind: 'search' } & SearchTask }
  | { id: number; task: { kind: 'read' } & Parameters<typeof readTask>[0] }
  | { id: number; task: { kind: 'diff' } & Parameters<typeof diffTask>[0] }
  | { id: number; task: { kind: 'notification-diffs' } & NotificationDiffsTask };

const port = parentPort;
if (port) {
  // Background work: on Linux this lowers this thread only (setpriority on the calling task), so on a small
  // machine the event loop that answers requests and drives backups gets the CPU first.
  try {
    setPriority(10);
  } catch {
    /* not permitted or not supported: run at normal priority */
  }
  port.on('message', (req: Request) => {
    const send = (m: WorkerMessage) => port.postMessage(m);
    try {
      if (req.task.kind === 'search') {
        const value = runSearch(req.task, (hit) => send({ id: req.id, type: 'progress', value: hit }));
        send({ id: req.id, type: 'done', value });
      } else if (req.task.kind === 'read') {
        send({ id: req.id, type: 'done', value: readTask(req.task) });
      } else if (req.task.kind === 'diff') {
        send({ id: req.id, type: 'done', value: diffTask(req.task) });
      } else if (req.task.kind === 'notification-diffs') {
        const root = req.task.snapshotsRoot;
        send({ id: req.id, type: 'done', value: computeNotificationDiffs(req.task, (hash) => readSnapshotText(root, hash)) });
      } else {
        send({ id: req.id, type: 'error', message: 'unknown task' });
      }
    } catch (err) {
      send({ id: req.id, type: 'error', message: err instanceof Error ? err.message : String(err) });
    }
  });
}
