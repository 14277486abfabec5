// The runner's capture pipeline: the session in a session worker thread (output packed into UTF-8 chunks as it arrives), then strip, redact, fingerprint, hash and gzip in a capture worker thread, all within a memory budget.
import { createWorkerPool, defaultPoolSize, OffThreadBusyError } from '../../runtime/worker-pool';
import { DEFAULTS_ASSET } from '../../templates/defaults';
import { BUILTIN_FOLDER } from '../../templates/files';
import type { RedactionKey } from '../../templates/redact';
import type { TemplateSpec } from '../../templates/types';
import type { PreparedCapture } from '../../features/backups/backup-record.service';
import { captureParts, capturedButFailed, emptyCapture, redaction, type CapturedParts } from '../collect';
import { CollectError, type CollectFailure, type CollectLimits, type CollectTarget } from '../types';
import { MemoryBudget, memoryPlan, type MemoryPlan } from './memory-budget';
import type { CaptureAnswer, CaptureTask } from './capture-task';
import { captureInThread, SESSION_THREADS } from './session-pool';
import { ENGINE_WORKER_ASSET, ENGINE_WORKER_ENTRY } from './session-messages';

/** Name of the capture worker bundle among the executable's assets (build/build.mjs writes it); session workers share it. */
export const CAPTURE_WORKER_ASSET = ENGINE_WORKER_ASSET;

/**
 * Copies of a capture's bytes outside the capture worker's heap while it is post-processed (the joined bytes, the
 * stored text's bytes for the hash and gzip), beside the parts already counted; the text and its lines are in the
 * worker's heap, whose ceiling the budget holds apart (memoryPlan).
 */
const POST_PROCESS_COPIES = 2;
/** A capture at least this big ends its capture worker once post-processed, so that worker's heap is given back. */
const RETIRE_AFTER_BYTES = 8 * 1024 * 1024;
/** A post-processing still running after this long has gone wrong (a pathological pattern): the backup fails. */
const PROCESS_HARD_MS = 15 * 60_000;

/** How the budget is spent (captureBudget); the pool's size and its workers' heap ceilings follow it. */
let plan: MemoryPlan | null = null;

const pool = createWorkerPool({
  asset: CAPTURE_WORKER_ASSET,
  entry: ENGINE_WORKER_ENTRY,
  size: () => plan?.captureWorkers ?? defaultPoolSize(),
  resourceLimits: () => plan?.captureHeap,
  // Every capture in flight waits for the memory budget before it is queued here: the runner's concurrency bounds it.
  maxQueued: 4096,
  busy: () => new OffThreadBusyError('too many captures are waiting for post-processing'),
  // The template library (built-in patterns run as JavaScript, others as RE2) reads shipped files the worker cannot reach itself.
  assets: { folders: [BUILTIN_FOLDER], files: [DEFAULTS_ASSET] },
});

/** Loads the capture worker's code ahead of the first backup (`serve` at start), so that backup does not wait for it. */
export function warmCaptureWorkers(): void {
  pool.warm();
}

let budget: { key: string; budget: MemoryBudget } | null = null;

/**
 * The process's one budget for captures in flight ([backup] capture_memory_mb, less the worker threads' heap ceilings:
 * memoryPlan); every runner shares it. `sessionThreads`: [performance] session_threads.
 */
export function captureBudget(backup: { capture_memory_mb: number; max_output_mb: number }, sessionThreads: boolean): MemoryBudget {
  const key = `${backup.capture_memory_mb}/${backup.max_output_mb}/${sessionThreads}`;
  if (budget?.key !== key) {
    plan = memoryPlan(backup, { sessionThreads: sessionThreads ? SESSION_THREADS : 0, maxCaptureWorkers: defaultPoolSize() });
    budget = { key, budget: new MemoryBudget(plan.captureBytes) };
  }
  return budget.budget;
}

export interface StorageCollectOptions {
  redact_key?: RedactionKey | null;
  signal?: AbortSignal;
  /** [storage] compress_snapshots (SnapshotStore.compresses). */
  compress: boolean;
  budget: MemoryBudget;
  /** [performance] session_threads: the session itself runs in a session worker thread (session-pool.ts). */
  inThread: boolean;
}

export type StorageCollectResult = (Omit<CapturedParts, 'parts' | 'inflated_bytes'> & { prepared: PreparedCapture }) | CollectFailure;

/**
 * collectConfig for the runner: the same capture, the same stored text and failures, but the post-processing (and
 * the text itself) never on the event loop. A capture starts once the memory budget admits it and accounts the
 * device's bytes as they arrive (held as UTF-8 chunks, moved to the worker, never copied); its post-processing waits
 * for room next to the captures in flight. A capture larger than the whole budget runs alone.
 */
export async function collectForStorage(
  target: CollectTarget,
  template: TemplateSpec,
  limits: Partial<CollectLimits> | undefined,
  opts: StorageCollectOptions,
): Promise<StorageCollectResult> {
  const share = await opts.budget.admit();
  try {
    const capture = opts.inThread ? captureInThread : captureParts;
    const captured = await capture(target, template, limits, { signal: opts.signal, onReceived: (n) => share.add(n) });
    if (!captured.ok) return captured;
    const { parts, inflated_bytes, ...rest } = captured;
    try {
      // What arrived is already counted; the worker's heap is held apart (memoryPlan), its copies outside it are not.
      const bytes = inflated_bytes;
      await share.reserve(bytes * POST_PROCESS_COPIES);
      const r = redaction(template, opts.redact_key);
      const task: CaptureTask = {
        parts,
        inflated_bytes,
        template: {
          name: template.name,
          strip_patterns: template.strip_patterns,
          redact_patterns: template.redact_patterns,
          ignore_patterns: template.ignore_patterns,
        },
        redact_key: r.redact ? r.key : null,
        compress: opts.compress,
      };
      const transfer = parts.map((p) => p.buffer as ArrayBuffer);
      const retire = bytes >= RETIRE_AFTER_BYTES;
      const answer = await pool.run<CaptureAnswer>({ kind: 'capture', ...task }, PROCESS_HARD_MS, { transfer, retire });
      if (!answer.ok) return capturedButFailed(new CollectError(answer.failure, answer.message, true), target, captured);
      if (answer.empty) return capturedButFailed(emptyCapture(target), target, captured);
      return { ...rest, prepared: answer.prepared };
    } catch (err) {
      return capturedButFailed(err, target, captured);
    }
  } finally {
    share.release();
  }
}
