// Entry of a configs pool worker thread: runs one search, diff, line-index step, notification's diffs or snapshot read at a time for the main thread (see pool.ts).
import { serveWorkerTasks } from '../../../runtime/worker-pool';
import { computeNotificationDiffs, type NotificationDiffsTask } from '../../notifications/notification-diffs';
import { diffTask, readTask } from '../diff.service';
import { refreshIndexStep, type IndexRefreshTask } from './index-refresh';
import { runSearch, type SearchTask } from './search-task';
import { readSnapshotText } from './snapshot-text';

serveWorkerTasks({
  search: (task, progress) => ({ value: runSearch(task as unknown as SearchTask, progress) }),
  'index-refresh': (task) => ({ value: refreshIndexStep(task as unknown as IndexRefreshTask) }),
  read: (task) => ({ value: readTask(task as unknown as Parameters<typeof readTask>[0]) }),
  diff: (task) => ({ value: diffTask(task as unknown as Parameters<typeof diffTask>[0]) }),
  'notification-diffs': (task) => {
    const t = task as unknown as NotificationDiffsTask;
    return { value: computeNotificationDiffs(t, (hash) => readSnapshotText(t.snapshotsRoot, hash)) };
  },
});
