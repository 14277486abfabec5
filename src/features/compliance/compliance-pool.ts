// The compliance worker pool: every judgement runs here, off the event loop that answers requests and records backups.
import { createWorkerPool, defaultPoolSize, OffThreadBusyError } from '../../runtime/worker-pool';
import type { JudgeAnswerItem, JudgeTask } from './compliance-task';

/** Name of the compliance worker bundle among the executable's assets (build/build.mjs writes it). */
export const COMPLIANCE_WORKER_ASSET = 'workers/compliance-worker.cjs';
/** A batch still running after this long has gone wrong: its versions are reported as not judged. */
const JUDGE_HARD_MS = 5 * 60_000;

const pool = createWorkerPool({
  asset: COMPLIANCE_WORKER_ASSET,
  entry: 'src/features/compliance/compliance-worker.ts',
  size: defaultPoolSize(),
  maxQueued: 1024,
  busy: () => new OffThreadBusyError('too many compliance judgements are waiting'),
});

export function judgeOffThread(task: JudgeTask): Promise<JudgeAnswerItem[]> {
  return pool.run<JudgeAnswerItem[]>({ kind: 'judge', ...task }, JUDGE_HARD_MS);
}
