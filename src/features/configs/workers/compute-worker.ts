// Entry of a configs pool worker thread: runs one search, diff, notification's diffs or snapshot read at a time for the main thread (see pool.ts).
import { serveWorkerTasks } from '../../../runtime/worker-pool';
import { computeNotificationDiffs, type NotificationDiffsTask } from '../../notifications/notification-diffs';
import { diffTask, readTask } from '../diff.service';
import { runSearch, type SearchTask } from './search-task';
import { readSnapshotText } from './snapshot-text';

serveWorkerTasks({
  search: (task, progress) => ({ value: runSearch(task as unknown as SearchTask, progress) }),
  read: (task) => ({ value: readTask(task as unknown as Parameters<typeof readTask>[0]) }),
  diff: (task) => ({ value: diffTask(task as unknown as Parameters<typeof diffTask>[0]) }),
  'notification-diffs': (task) => {
    const t = task as unknown as NotificationDiffsTask;
    return { value: computeNotificationDiffs(t, (hash) => readSnapshotText(t.snapshotsRoot, hash)) };
  },
});
