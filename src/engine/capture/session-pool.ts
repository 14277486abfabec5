// Device sessions off the event loop: a small pool of session worker threads, each driving many backups' sessions at once; the main thread gets byte counts and the captured parts.
import { Worker } from 'node:worker_threads';
import { WORKER_ASSETS, assetsForWorker } from '../../runtime/assets';
import { WORKER_NATIVE, nativeForWorker } from '../../runtime/native';
import { availableParallelism } from 'node:os';
import { loadWorkerCode } from '../../runtime/worker-pool';
import { DEFAULTS_ASSET } from '../../templates/defaults';
import { BUILTIN_FOLDER } from '../../templates/files';
import type { TemplateSpec } from '../../templates/types';
import type { CapturedParts } from '../collect';
import type { CollectFailure, CollectLimits, CollectTarget } from '../types';
import { SESSION_HEAP } from './memory-budget';
import { ENGINE_WORKER_ASSET, ENGINE_WORKER_ENTRY, ENGINE_WORKER_ROLE, SESSION_ROLE, type SessionReply, type SessionRequest } from './session-messages';

interface Capture {
  started: number;
  onReceived?: (bytes: number) => void;
  resolve: (r: CapturedParts | CollectFailure) => void;
}

/** One worker thread and the captures it is running. */
interface SessionThread {
  worker: Worker;
  captures: Map<number, Capture>;
  /** Bytes its devices sent since it started. */
  carried: number;
}

/** A session thread that has carried this much ends once idle, so its heap is given back; the next capture starts a new one. */
const RETIRE_AFTER_BYTES = 64 * 1024 * 1024;

/**
 * One thread per core, two at most: a session is mostly waiting on its device, but a big capture is CPU work (SSH
 * decryption, the terminal model) that one thread would carry alone; the event loop needs little of a core now.
 */
export const SESSION_THREADS = Math.max(1, Math.min(2, availableParallelism()));

const threads: SessionThread[] = [];
let code: Promise<string> | null = null;
let workerAssets: Record<string, string> | null = null;
let nextId = 1;

function loadCode(): Promise<string> {
  // The capture worker's bundle: one entry for both roles (capture-worker.ts), bundled or read once per process.
  code ??= loadWorkerCode({ asset: ENGINE_WORKER_ASSET, entry: ENGINE_WORKER_ENTRY }).catch((err: unknown) => {
    code = null;
    throw err;
  });
  return code;
}

/** Loads the session worker's code ahead of the first backup (`serve` at start), so that backup does not wait for it. */
export function warmSessionWorkers(): void {
  loadCode().catch(() => {
    /* the first capture reports it */
  });
}

/** A capture whose thread stopped under it (a crash: a bug, or memory exhausted) is a failure of that backup. */
function threadFailure(c: Capture): CollectFailure {
  return {
    ok: false,
    failure: 'INTERNAL',
    message: 'Internal error in the collection engine (the session worker thread stopped).',
    reachable: false,
    host_key: null,
    duration_ms: Math.round(performance.now() - c.started),
  };
}

function spawnThread(workerCode: string): SessionThread {
  // The template library (built-in patterns as JavaScript, the engine defaults) reads shipped files the worker cannot reach itself.
  workerAssets ??= assetsForWorker([BUILTIN_FOLDER], [DEFAULTS_ASSET]);
  const worker = new Worker(workerCode, {
    eval: true,
    stdout: false,
    stderr: false,
    workerData: { [WORKER_ASSETS]: workerAssets, [ENGINE_WORKER_ROLE]: SESSION_ROLE, [WORKER_NATIVE]: nativeForWorker() },
    // Within the ceiling the memory budget holds apart for it (memoryPlan): collected sooner rather than grown.
    resourceLimits: SESSION_HEAP,
  });
  const thread: SessionThread = { worker, captures: new Map(), carried: 0 };
  worker.unref();
  worker.on('message', (m: SessionReply) => {
    const c = thread.captures.get(m.id);
    if (!c) return;
    if (m.type === 'received') {
      thread.carried += m.bytes;
      return c.onReceived?.(m.bytes);
    }
    thread.captures.delete(m.id);
    if (thread.captures.size === 0) worker.unref();
    if (thread.captures.size === 0 && thread.carried >= RETIRE_AFTER_BYTES) retire(thread);
    const r = m.result;
    // The parts arrive as Uint8Arrays over the moved memory: Buffers over the same bytes, no copy.
    c.resolve(r.ok ? { ...r, parts: r.parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)) } : r);
  });
  const stopped = () => {
    const i = threads.indexOf(thread);
    if (i >= 0) threads.splice(i, 1);
    for (const c of thread.captures.values()) c.resolve(threadFailure(c));
    thread.captures.clear();
  };
  worker.on('error', stopped);
  worker.on('exit', stopped);
  threads.push(thread);
  return thread;
}

/** Out of the pool at once (no capture is given to it any more), ended: its heap is given back to the system. */
function retire(thread: SessionThread): void {
  const i = threads.indexOf(thread);
  if (i >= 0) threads.splice(i, 1);
  void thread.worker.terminate();
}

/** The thread with the fewest captures, a new one while the pool is not full and every thread is busy. */
function pickThread(workerCode: string): SessionThread {
  const least = threads.reduce<SessionThread | null>((a, t) => (!a || t.captures.size < a.captures.size ? t : a), null);
  if (least && (least.captures.size === 0 || threads.length >= SESSION_THREADS)) return least;
  return spawnThread(workerCode);
}

/**
 * captureParts (collect.ts) run in a session worker thread: connect, log in, drive the shell and capture, with the
 * same failures as data. Credentials reach the thread in memory only (structured clone). `onReceived` hears the
 * device's bytes in batches as they arrive; `signal` cancels the capture in its thread.
 */
export async function captureInThread(
  target: CollectTarget,
  template: TemplateSpec,
  limits: Partial<CollectLimits> | undefined,
  opts: { signal?: AbortSignal; onReceived?: (bytes: number) => void },
): Promise<CapturedParts | CollectFailure> {
  const started = performance.now();
  const workerCode = await loadCode();
  const thread = pickThread(workerCode);
  const id = nextId++;
  const abort = () => thread.worker.postMessage({ type: 'abort', id } satisfies SessionRequest);
  try {
    return await new Promise<CapturedParts | CollectFailure>((resolve) => {
      thread.captures.set(id, { started, onReceived: opts.onReceived, resolve });
      thread.worker.ref();
      thread.worker.postMessage({ type: 'capture', id, target, template, limits } satisfies SessionRequest);
      if (opts.signal?.aborted) abort();
      else opts.signal?.addEventListener('abort', abort, { once: true });
    });
  } finally {
    opts.signal?.removeEventListener('abort', abort);
  }
}
