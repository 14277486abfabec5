// Entry of a compliance worker thread: judges batches of stored versions for the compliance service (compliance-pool.ts).
import { serveWorkerTasks } from '../../runtime/worker-pool';
import { runJudgeTask, type JudgeTask } from './compliance-task';

serveWorkerTasks({
  judge: (task) => ({ value: runJudgeTask(task as unknown as JudgeTask) }),
});
