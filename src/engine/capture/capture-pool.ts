// The runner's capture pipeline: capture on the event loop, then strip, redact, fingerprint, hash and gzip in a capture worker thread, within a memory budget.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { createWorkerPool, defaultPoolSize, OffThreadBusyError } from '../../runtime/worker-pool';
import { DEFAULTS_ASSET } from '../../templates/defaults';
import { BUILTIN_FOLDER } from '../../templates/files';
import type { RedactionKey } from '../../templates/redact';
import type { TemplateSpec } from '../../templates/types';
import type { PreparedCapture } from '../../features/backups/backups.service';
import { captureRaw, capturedButFailed, emptyCapture, redaction, type RawCapture } from '../collect';
import { CollectError, type CollectFailure, type CollectLimits, type CollectTarget } from '../types';
import { MemoryBudget } from './memory-budget';
import type { CaptureAnswer, CaptureTask } from './capture-task';

/** Name of the capture worker bundle among the executable's assets (build/build.mjs writes it). */
export const CAPTURE_WORKER_ASSET = 'workers/capture-worker.cjs';

/**
 * Memory a capture's post-processing holds at its peak, per character of captured output: the UTF-8 copy, the text,
 * its lines before and after redaction, the stored text and its bytes (measured: about 6-7x for a 30 MB configuration).
 */
export const CAPTURE_MEMORY_FACTOR = 8;
/** Pieces in which the captured text is encoded for the worker: each ~1-2 ms of the event loop, with a turn between. */
const PIECE_CHARS = 1 << 20;
/** A post-processing still running after this long has gone wrong (a pathological pattern): the backup fails. */
const PROCESS_HARD_MS = 15 * 60_000;

const pool = createWorkerPool({
  asset: CAPTURE_WORKER_ASSET,
  entry: 'src/engine/capture/capture-worker.ts',
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

/** The captured text as UTF-8 pieces with buffers of their own (to move to the worker), encoded between other work. */
async function encodeInPieces(raw: string): Promise<Uint8Array[]> {
  const parts: Uint8Array[] = [];
  for (let i = 0; i < raw.length;) {
    let end = Math.min(raw.length, i + PIECE_CHARS);
    // Never split a surrogate pair: each piece must be valid UTF-16 on its own.
    if (end < raw.length && (raw.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
    const b = Buffer.from(raw.slice(i, end), 'utf8');
    parts.push(b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b : new Uint8Array(b));
    i = end;
    if (i < raw.length) await yieldToLoop();
  }
  return parts;
}

export interface StorageCollectOptions {
  redact_key?: RedactionKey | null;
  signal?: AbortSignal;
  /** [storage] compress_snapshots (SnapshotStore.compresses). */
  compress: boolean;
  budget: MemoryBudget;
}

export type StorageCollectResult = (Omit<RawCapture, 'raw'> & { prepared: PreparedCapture }) | CollectFailure;

/**
 * collectConfig for the runner: the same capture, the same stored text and failures, but the post-processing (and
 * the text itself) never on the event loop. A big capture waits for room in the memory budget before it is handed to
 * a worker; a capture larger than the whole budget runs alone.
 */
export async function collectForStorage(
  target: CollectTarget,
  template: TemplateSpec,
  limits: Partial<CollectLimits> | undefined,
  opts: StorageCollectOptions,
): Promise<StorageCollectResult> {
  const captured = await captureRaw(target, template, limits, opts);
  if (!captured.ok) return captured;
  const { raw, ...rest } = captured;
  const release = await opts.budget.acquire(raw.length * CAPTURE_MEMORY_FACTOR);
  try {
    const parts = await encodeInPieces(raw);
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
    const answer = await pool.run<CaptureAnswer>({ kind: 'capture', ...task }, PROCESS_HARD_MS, { transfer: parts.map((p) => p.buffer as ArrayBuffer) });
    if (!answer.ok) return capturedButFailed(new CollectError(answer.failure, answer.message, true), target, captured);
    if (answer.empty) return capturedButFailed(emptyCapture(target), target, captured);
    return { ...rest, prepared: answer.prepared };
  } catch (err) {
    return capturedButFailed(err, target, captured);
  } finally {
    release();
  }
}
