// A small bounded pool of worker threads for CPU-heavy requests (search, diff), each task with a hard deadline.
import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { ApiError } from '../../errors';
import { WORKER_ASSETS, assetsForWorker, isExecutable, readAsset, repoRoot } from '../../runtime/assets';
import { DEFAULTS_ASSET } from '../../templates/defaults';
import { BUILTIN_FOLDER } from '../../templates/files';

/** Name of the worker bundle among the executable's assets (build/build.mjs writes it). */
export const WORKER_ASSET = 'workers/compute-worker.cjs';
const WORKER_ENTRY = 'src/web/workers/compute-worker.ts';

/** At most two workers: the appliance is one process on small machines, and the event loop needs a core too. */
export const POOL_SIZE = Math.max(1, Math.min(2, availableParallelism() - 1));
/** Tasks waiting for a worker; beyond this the request is refused rather than queued without end. */
const MAX_QUEUED = 64;

export type OffThreadTask = { kind: string } & Record<string, unknown>;
export type WorkerMessage =
  { id: number; type: 'progress'; value: unknown } | { id: number; type: 'done'; value: unknown } | { id: number; type: 'error'; message: string };

/** The task ran past its hard deadline; its worker was terminated. */
export class OffThreadTimeout extends Error {}
/** Too many tasks are waiting. */
/** The pool's queue is full: 503, so a client (or a flood of them) is told to come back rather than queued without bound. */
export class OffThreadBusy extends ApiError {
  constructor(message: string) {
    super('SERVICE_UNAVAILABLE', message);
  }
}

interface Job {
  id: number;
  task: OffThreadTask;
  hardMs: number;
  onProgress?: (value: unknown) => void;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | null;
  timer: NodeJS.Timeout | null;
}

let code: string | null = null;
let loading: Promise<string> | null = null;

/**
 * The worker's code: an asset of the executable, or in development the entry bundled once by esbuild (a dev
 * dependency; its async API runs in esbuild's own process, so bundling does not hold the event loop either).
 */
function loadWorkerCode(): Promise<string> {
  loading ??= (async () => {
    if (isExecutable()) return (code = readAsset(WORKER_ASSET).toString('utf8'));
    const root = repoRoot();
    const esbuild = createRequire(path.join(root, 'package.json'))('esbuild') as typeof import('esbuild');
    const out = await esbuild.build({
      entryPoints: [path.join(root, WORKER_ENTRY)],
      bundle: true,
      platform: 'node',
      target: 'node24',
      format: 'cjs',
      write: false,
      tsconfig: path.join(root, 'tsconfig.json'),
      logLevel: 'silent',
    });
    return (code = out.outputFiles[0].text);
  })();
  return loading;
}

const slots: Slot[] = [];
const queue: Job[] = [];
let nextId = 1;

/** The shipped files every worker gets (about 250 KB of template text), read once. */
let workerAssets: Record<string, string> | undefined;

function spawn(workerCode: string): Slot {
  // The template library (patterns of built-ins run as JavaScript, others as RE2) is read from shipped files the worker cannot reach itself.
  workerAssets ??= assetsForWorker([BUILTIN_FOLDER], [DEFAULTS_ASSET]);
  const worker = new Worker(workerCode, { eval: true, stdout: false, stderr: false, workerData: { [WORKER_ASSETS]: workerAssets } });
  const slot: Slot = { worker, job: null, timer: null };
  worker.unref();
  worker.on('message', (m: WorkerMessage) => {
    const job = slot.job;
    if (!job || m.id !== job.id) return;
    if (m.type === 'progress') return job.onProgress?.(m.value);
    finish(slot);
    if (m.type === 'done') job.resolve(m.value);
    else job.reject(new Error(m.message));
  });
  worker.on('error', (err: Error) => {
    const job = slot.job;
    discard(slot);
    job?.reject(err);
  });
  worker.on('exit', () => {
    const job = slot.job;
    discard(slot);
    job?.reject(new Error('worker exited'));
  });
  slots.push(slot);
  return slot;
}

/** Job done: the slot is free again, and the worker may no longer keep the process alive. */
function finish(slot: Slot): void {
  if (slot.timer) clearTimeout(slot.timer);
  slot.timer = null;
  slot.job = null;
  slot.worker.unref();
  pump();
}

function discard(slot: Slot): void {
  if (slot.timer) clearTimeout(slot.timer);
  slot.timer = null;
  slot.job = null;
  const i = slots.indexOf(slot);
  if (i >= 0) slots.splice(i, 1);
  pump();
}

function pump(): void {
  if (code === null) return; // runOffThread pumps again once the code is loaded
  while (queue.length > 0) {
    const slot = slots.find((s) => s.job === null) ?? (slots.length < POOL_SIZE ? spawn(code) : null);
    if (!slot) return;
    const job = queue.shift() as Job;
    slot.job = job;
    slot.worker.ref();
    slot.timer = setTimeout(() => {
      // Past its hard deadline: the only way to stop a thread that is busy computing.
      discard(slot);
      void slot.worker.terminate();
      job.reject(new OffThreadTimeout(`${job.task.kind} did not finish within ${job.hardMs} ms`));
    }, job.hardMs);
    slot.worker.postMessage({ id: job.id, task: job.task });
  }
}

/**
 * Runs `task` on a pool worker (src/web/workers/compute-worker.ts dispatches on `kind`). Rejects with
 * OffThreadTimeout when it runs past `hardMs` (the worker is terminated and replaced), OffThreadBusy when
 * too many tasks wait. `onProgress` receives the worker's partial results as they come.
 */
export function runOffThread<T>(task: OffThreadTask, hardMs: number, onProgress?: (value: unknown) => void): Promise<T> {
  if (queue.length >= MAX_QUEUED) return Promise.reject(new OffThreadBusy('too many searches and diffs are waiting; try again shortly'));
  return new Promise<T>((resolve, reject) => {
    queue.push({ id: nextId++, task, hardMs, onProgress, resolve: resolve as (v: unknown) => void, reject });
    if (code !== null) return pump();
    loadWorkerCode().then(pump, (err: unknown) => {
      loading = null;
      for (const job of queue.splice(0)) job.reject(err instanceof Error ? err : new Error(String(err)));
    });
  });
}
