// The pool of worker threads for CPU-heavy reads of stored configurations (search, diff, large reads) used by the web and the API: src/runtime/worker-pool.ts with its worker and limits.
import { ApiError } from '../../../errors';
import { createWorkerPool, defaultPoolSize, type OffThreadTask } from '../../../runtime/worker-pool';
import { DEFAULTS_ASSET } from '../../../templates/defaults';
import { BUILTIN_FOLDER } from '../../../templates/files';

export { OffThreadTimeout, type OffThreadTask, type WorkerMessage } from '../../../runtime/worker-pool';

/** Name of the worker bundle among the executable's assets (build/build.mjs writes it). */
export const WORKER_ASSET = 'workers/compute-worker.cjs';

export const POOL_SIZE = defaultPoolSize();
/** Tasks waiting for a worker; beyond this the request is refused rather than queued without end. */
const MAX_QUEUED = 64;

/** The pool's queue is full: 503, so a client (or a flood of them) is told to come back rather than queued without bound. */
export class OffThreadBusy extends ApiError {
  constructor(message: string) {
    super('SERVICE_UNAVAILABLE', message);
  }
}

const pool = createWorkerPool({
  asset: WORKER_ASSET,
  entry: 'src/features/configs/workers/compute-worker.ts',
  size: POOL_SIZE,
  maxQueued: MAX_QUEUED,
  busy: () => new OffThreadBusy('too many searches and diffs are waiting; try again shortly'),
  // The template library (patterns of built-ins run as JavaScript, others as RE2) is read from shipped files the worker cannot reach itself.
  assets: { folders: [BUILTIN_FOLDER], files: [DEFAULTS_ASSET] },
});

/**
 * Runs `task` on a pool worker (src/features/configs/workers/compute-worker.ts dispatches on `kind`). Rejects with
 * OffThreadTimeout when it runs past `hardMs` (the worker is terminated and replaced), OffThreadBusy when
 * too many tasks wait. `onProgress` receives the worker's partial results as they come.
 */
export function runOffThread<T>(task: OffThreadTask, hardMs: number, onProgress?: (value: unknown) => void): Promise<T> {
  return pool.run<T>(task, hardMs, { onProgress });
}
