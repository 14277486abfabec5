// The runner's capture pipeline: the session in a session worker thread (output packed into UTF-8 chunks as it arrives), then strip, redact, fingerprint, hash and gzip in a capture worker thread, all within a memory budget.
import { createWorkerPool, defaultPoolSize, OffThreadBusyError } from '../../runtime/worker-pool';
import { DEFAULTS_ASSET } from '../../templates/defaults';
import { BUILTIN_FOLDER } from '../../templates/files';
import type { RedactionKey } from '../../templates/redact';
import type { TemplateSpec } from '../../templates/types';
import type { PreparedCapture } from '../../features/backups/backups.service';
import { captureParts, capturedButFailed, emptyCapture, redaction, type CapturedParts } from '../collect';
import { byteLength } from '../captured-output';
import { CollectError, type CollectFailure, type CollectLimits, type CollectTarget } from '../types';
import { MemoryBudget } from './memory-budget';
import type { CaptureAnswer, CaptureTask } from './capture-task';
import { captureInThread } from './session-pool';
import { ENGINE_WORKER_ASSET, ENGINE_WORKER_ENTRY } from './session-messages';

/** Name of the capture worker bundle among the executable's assets (build/build.mjs writes it); session workers share it. */
export const CAPTURE_WORKER_ASSET = ENGINE_WORKER_ASSET;

/**
 * Memory a capture holds at its peak, per byte of captured output: its UTF-8 chunks, then in the worker the text,
 * its lines before and after redaction, the stored text and its bytes (measured: about 6-7x for a 30 MB configuration).
 */
export const CAPTURE_MEMORY_FACTOR = 8;
/** A post-processing still running after this long has gone wrong (a pathological pattern): the backup fails. */
const PROCESS_HARD_MS = 15 * 60_000;

const pool = createWorkerPool({
  asset: CAPTURE_WORKER_ASSET,
  entry: ENGINE_WORKER_ENTRY,
  size: defaultPoolSize(),
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

let budget: MemoryBudget | null = null;
/** The process's one budget for captures in flight ([backup] capture_memory_mb); every runner shares it. */
export function captureBudget(limitMb: number): MemoryBudget {
  if (!budget || budget.limit !== limitMb * 1024 * 1024) budget = new MemoryBudget(limitMb * 1024 * 1024);
  return budget;
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

export type StorageCollectResult = (Omit<CapturedParts, 'parts'> & { prepared: PreparedCapture }) | CollectFailure;

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
    const { parts, ...rest } = captured;
    try {
      // What arrived is already counted (about the bytes held); the worker needs the rest of the factor.
      await share.reserve(byteLength(parts) * (CAPTURE_MEMORY_FACTOR - 1));
      const r = redaction(template, opts.redact_key);
      const task: CaptureTask = {
        parts,
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
      const answer = await pool.run<CaptureAnswer>({ kind: 'capture', ...task }, PROCESS_HARD_MS, { transfer });
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
