// Small bounded pools of worker threads (search and diff: src/features/configs/workers; capture post-processing: src/engine/capture), each task with a hard deadline.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parentPort, Worker, type ResourceLimits, type Transferable } from 'node:worker_threads';
import { availableParallelism, setPriority } from 'node:os';
import { runtimeEnv } from '../config/runtime-env';
import { WORKER_ASSETS, assetsForWorker, isExecutable, readAsset, repoRoot } from './assets';

export type OffThreadTask = { kind: string } & Record<string, unknown>;
export type WorkerMessage =
  { id: number; type: 'progress'; value: unknown } | { id: number; type: 'done'; value: unknown } | { id: number; type: 'error'; message: string };

/** The task ran past its hard deadline; its worker was terminated. */
export class OffThreadTimeout extends Error {}

/** Too many tasks are waiting for a worker. */
export class OffThreadBusyError extends Error {}

/** At most two workers: the appliance is one process on small machines, and the event loop needs a core too. */
export function defaultPoolSize(): number {
  return Math.max(1, Math.min(2, availableParallelism() - 1));
}

export interface WorkerPoolOptions {
  /** Name of the worker bundle among the executable's assets (build/build.mjs writes it). */
  asset: string;
  /** The worker's entry in the source tree, bundled once by esbuild in development. */
  entry: string;
  /** Workers at most (read at each dispatch when a function: a pool sized from the configuration). */
  size: number | (() => number);
  /** Tasks waiting for a worker; beyond this a task is refused with `busy()`. */
  maxQueued: number;
  busy: () => Error;
  /** Shipped folders and files every worker gets in workerData (assetsForWorker), read once. */
  assets?: { folders: readonly string[]; files: readonly string[] };
  /**
   * Heap ceilings of each new worker (read as it is spawned): its V8 heap stays within them, collecting sooner rather
   * than growing; a task that needs more ends its worker (ERR_WORKER_OUT_OF_MEMORY) and fails.
   */
  resourceLimits?: () => ResourceLimits | undefined;
}

interface Job {
  id: number;
  task: OffThreadTask;
  transfer: readonly Transferable[];
  hardMs: number;
  onProgress?: (value: unknown) => void;
  retire: boolean;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | null;
  timer: NodeJS.Timeout | null;
  /** Ending (retire): holds its place in the pool until its thread has exited, so two heaps never overlap. */
  retiring: boolean;
}

export interface RunOptions {
  /** Buffers moved to the worker rather than copied. */
  transfer?: readonly Transferable[];
  /** Receives the worker's partial results. */
  onProgress?: (value: unknown) => void;
  /** A big task: its worker ends once it is done (its heap given back to the system) and the next task gets a new one. */
  retire?: boolean;
}

export interface WorkerPool {
  /**
   * Runs `task` on a pool worker (its entry dispatches on `kind`, see serveWorkerTasks). Rejects with OffThreadTimeout
   * when it runs past `hardMs` (the worker is terminated and replaced), with `busy()` when too many tasks wait.
   */
  run<T>(task: OffThreadTask, hardMs: number, opts?: RunOptions): Promise<T>;
  /** Loads the worker's code now (in development: bundles it) rather than at the first task, which then starts at once. */
  warm(): void;
  /** The pool's live workers, a retiring one too until it has exited (for tests and measurements). */
  workers(): Worker[];
}

/**
 * The worker's code: an asset of the executable, or in development the entry bundled once by esbuild (a dev
 * dependency; its async API runs in esbuild's own process, so bundling does not hold the event loop either).
 */
export function loadWorkerCode(o: Pick<WorkerPoolOptions, 'asset' | 'entry'>): Promise<string> {
  // Two pools may share one entry (the engine's capture and session workers): it is read or bundled once.
  let code = loadedCode.get(o.entry);
  if (!code) {
    code = readWorkerCode(o);
    loadedCode.set(o.entry, code);
    code.catch(() => loadedCode.delete(o.entry));
  }
  return code;
}

const loadedCode = new Map<string, Promise<string>>();

async function readWorkerCode(o: Pick<WorkerPoolOptions, 'asset' | 'entry'>): Promise<string> {
  if (isExecutable()) return readAsset(o.asset).toString('utf8');
  // From source with the bundles made ahead (the test suite: some hundred processes would each bundle the same code).
  const prebuilt = runtimeEnv().workerBundles;
  if (prebuilt) return readFile(path.join(prebuilt, path.basename(o.asset)), 'utf8');
  const root = repoRoot();
  const esbuild = createRequire(path.join(root, 'package.json'))('esbuild') as typeof import('esbuild');
  // The executable's own esbuild settings and native plugins (ssh2's crypto binding from native.ts), not a copy of them.
  const shared = (await import(pathToFileURL(path.join(root, 'build/esbuild-node.mjs')).href)) as {
    NODE_BUNDLE: import('esbuild').BuildOptions;
    NATIVE_PLUGINS: import('esbuild').Plugin[];
  };
  const out = await esbuild.build({
    ...shared.NODE_BUNDLE,
    entryPoints: [path.join(root, o.entry)],
    write: false,
    logLevel: 'silent',
    plugins: shared.NATIVE_PLUGINS,
  });
  return out.outputFiles[0].text;
}

export function createWorkerPool(o: WorkerPoolOptions): WorkerPool {
  let code: string | null = null;
  let loading: Promise<string> | null = null;
  let workerAssets: Record<string, string> | undefined;
  const slots: Slot[] = [];
  const queue: Job[] = [];
  let nextId = 1;

  function spawn(workerCode: string): Slot {
    workerAssets ??= o.assets ? assetsForWorker(o.assets.folders, o.assets.files) : {};
    const worker = new Worker(workerCode, {
      eval: true,
      stdout: false,
      stderr: false,
      workerData: { [WORKER_ASSETS]: workerAssets },
      resourceLimits: o.resourceLimits?.(),
    });
    const slot: Slot = { worker, job: null, timer: null, retiring: false };
    worker.unref();
    worker.on('message', (m: WorkerMessage) => {
      const job = slot.job;
      if (!job || m.id !== job.id) return;
      if (m.type === 'progress') return job.onProgress?.(m.value);
      if (job.retire) retire(slot);
      else finish(slot);
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

  /** The worker ends and gives its heap back; its place is free once it has exited (the 'exit' handler discards it). */
  function retire(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.job = null;
    slot.retiring = true;
    void slot.worker.terminate();
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
    if (code === null) return; // run() pumps again once the code is loaded
    while (queue.length > 0) {
      const slot = slots.find((s) => s.job === null && !s.retiring) ?? (slots.length < (typeof o.size === 'number' ? o.size : o.size()) ? spawn(code) : null);
      if (!slot) return;
      const job = queue.shift() as Job;
      slot.job = job;
      slot.worker.ref();
      slot.timer = setTimeout(() => {
        // Past its hard deadline: the only way to stop a thread that is busy computing.
        retire(slot);
        job.reject(new OffThreadTimeout(`${job.task.kind} did not finish within ${job.hardMs} ms`));
      }, job.hardMs);
      slot.worker.postMessage({ id: job.id, task: job.task }, job.transfer);
    }
  }

  return {
    run<T>(task: OffThreadTask, hardMs: number, opts: RunOptions = {}): Promise<T> {
      if (queue.length >= o.maxQueued) return Promise.reject(o.busy());
      return new Promise<T>((resolve, reject) => {
        queue.push({
          id: nextId++,
          task,
          transfer: opts.transfer ?? [],
          hardMs,
          onProgress: opts.onProgress,
          retire: opts.retire ?? false,
          resolve: resolve as (v: unknown) => void,
          reject,
        });
        if (code !== null) return pump();
        load().then(pump, (err: unknown) => {
          for (const job of queue.splice(0)) job.reject(err instanceof Error ? err : new Error(String(err)));
        });
      });
    },
    workers: () => slots.map((s) => s.worker),
    warm() {
      load().catch(() => {
        /* run() reports it with the first task */
      });
    },
  };

  function load(): Promise<string> {
    loading ??= loadWorkerCode(o).then(
      (c) => (code = c),
      (err: unknown) => {
        loading = null;
        throw err;
      },
    );
    return loading;
  }
}

/** What a task handler returns: its value, and buffers inside it to move to the main thread rather than copy. */
export interface TaskAnswer {
  value: unknown;
  transfer?: Transferable[];
}

export type TaskHandler = (task: OffThreadTask, progress: (value: unknown) => void) => TaskAnswer;

/**
 * Background work: on Linux setPriority lowers the calling thread only (setpriority on the calling task), so on a
 * small machine the event loop that answers requests gets the CPU first. Called by a worker thread's entry.
 */
export function lowerThreadPriority(): void {
  try {
    setPriority(10);
  } catch {
    /* not permitted or not supported: run at normal priority */
  }
}

/**
 * The entry of a pool worker thread: runs one task at a time, dispatched on `kind`, at a lower priority
 * (lowerThreadPriority).
 */
export function serveWorkerTasks(handlers: Record<string, TaskHandler>): void {
  const port = parentPort;
  if (!port) return;
  lowerThreadPriority();
  port.on('message', (req: { id: number; task: OffThreadTask }) => {
    const send = (m: WorkerMessage, transfer?: Transferable[]) => port.postMessage(m, transfer);
    try {
      const handler = handlers[req.task.kind];
      if (!handler) return send({ id: req.id, type: 'error', message: 'unknown task' });
      const answer = handler(req.task, (value) => send({ id: req.id, type: 'progress', value }));
      send({ id: req.id, type: 'done', value: answer.value }, answer.transfer);
    } catch (err) {
      send({ id: req.id, type: 'error', message: err instanceof Error ? err.message : String(err) });
    }
  });
}
