// A byte budget for captures in flight: a capture is admitted before its bytes arrive and accounts them as they do; what does not fit waits its turn.

/** One admitted capture's share of the budget: the bytes it holds, growing as they arrive, given back at its end. */
export interface CaptureShare {
  /** Bytes that arrived and are held now (never waits: they are already here). */
  add(bytes: number): void;
  /**
   * More room for a step that needs it (post-processing), waiting until it fits next to everything in flight or no
   * other such step runs: one step always proceeds, so a capture larger than the whole budget runs, alone.
   */
  reserve(bytes: number): Promise<void>;
  /** The capture ended: everything it held is given back (a second call changes nothing). */
  release(): void;
}

interface Reserver {
  bytes: number;
  share: Share;
  resolve: () => void;
}

interface Share extends CaptureShare {
  held: number;
  reserved: boolean;
}

export class MemoryBudget {
  private used = 0;
  /** Captures admitted and not released. */
  private active = 0;
  /** Shares holding a reserve() (post-processing in progress). */
  private reserving = 0;
  private readonly admitting: ((share: CaptureShare) => void)[] = [];
  private readonly reservers: Reserver[] = [];

  constructor(readonly limit: number) {}

  /** Bytes held or reserved now (for /metrics and tests). */
  get inUse(): number {
    return this.used;
  }

  /** Captures and steps waiting for room. */
  get queued(): number {
    return this.admitting.length + this.reservers.length;
  }

  /**
   * Resolves once a new capture may start: the bytes in flight are under the limit, or no capture is in flight (so
   * one always runs). First come, first served.
   */
  admit(): Promise<CaptureShare> {
    return new Promise((resolve) => {
      this.admitting.push(resolve);
      this.pump();
    });
  }

  private share(): Share {
    const share: Share = {
      held: 0,
      reserved: false,
      add: (bytes) => {
        if (released) return;
        share.held += bytes;
        this.used += bytes;
      },
      reserve: (bytes) =>
        new Promise<void>((resolve) => {
          if (released) return resolve();
          this.reservers.push({ bytes, share, resolve });
          this.pump();
        }),
      release: () => {
        if (released) return;
        released = true;
        this.used -= share.held;
        this.active--;
        if (share.reserved) this.reserving--;
        const waiting = this.reservers.findIndex((r) => r.share === share);
        if (waiting >= 0) this.reservers.splice(waiting, 1)[0].resolve();
        this.pump();
      },
    };
    let released = false;
    return share;
  }

  private pump(): void {
    // Steps of captures in flight first: they end captures, which gives memory back.
    while (this.reservers.length > 0) {
      const next = this.reservers[0];
      const others = this.reserving - (next.share.reserved ? 1 : 0);
      if (others > 0 && this.used + next.bytes > this.limit) break;
      this.reservers.shift();
      next.share.held += next.bytes;
      this.used += next.bytes;
      if (!next.share.reserved) this.reserving++;
      next.share.reserved = true;
      next.resolve();
    }
    while (this.admitting.length > 0 && (this.active === 0 || this.used < this.limit)) {
      this.active++;
      (this.admitting.shift() as (share: CaptureShare) => void)(this.share());
    }
  }
}

/** A V8 heap ceiling of one worker thread (its `resourceLimits`), MB. */
export interface HeapCeiling {
  maxOldGenerationSizeMb: number;
  maxYoungGenerationSizeMb: number;
}

/**
 * A session thread's heap: its sessions' state and churn (SSH packets, the terminal model, the lines not yet packed);
 * the captured output itself is packed into buffers outside the heap (counted as the captures' bytes). Measured with
 * four 30 MB captures at once on each of two threads: 160 MB held (87 used) without a ceiling, at most 42 with it.
 */
export const SESSION_HEAP: HeapCeiling = { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 24 };

/**
 * A capture worker's heap must hold the post-processing of the largest capture allowed ([backup] max_output_mb): the
 * text, its lines before and after redaction, the stored text, the fingerprints' lines. Measured (26 Nov 2026): a 30 MB
 * configuration needs more than 128 MB of old generation and fits in 160; 6 MB fit in 48.
 */
const CAPTURE_HEAP_BASE_MB = 16;
const CAPTURE_HEAP_PER_OUTPUT_MB = 6;
/** Smaller young generations cost time, not memory: a 30 MB post-processing took 62 s with 16 MB, 40 s with 32 (load 15). */
const CAPTURE_YOUNG_MB = 32;

export interface MemoryPlan {
  sessionHeap: HeapCeiling;
  captureHeap: HeapCeiling;
  /** Capture workers whose heaps fit in the budget (at least one). */
  captureWorkers: number;
  /** What is left of the budget for the captures' own bytes in flight (MemoryBudget's limit), bytes. */
  captureBytes: number;
}

const MB = 1024 * 1024;

function heapMb(c: HeapCeiling): number {
  return c.maxOldGenerationSizeMb + c.maxYoungGenerationSizeMb;
}

/**
 * How [backup] capture_memory_mb is spent: first the heap ceilings of the engine's worker threads (the session threads,
 * then as many capture workers as fit, up to `maxCaptureWorkers`, at least one), then the captures' bytes in flight. So
 * the threads' heaps and the captures together stay within the budget: a smaller budget admits fewer bytes at once,
 * down to one capture at a time, and never lets the sum exceed it.
 */
export function memoryPlan(backup: { capture_memory_mb: number; max_output_mb: number }, o: { sessionThreads: number; maxCaptureWorkers: number }): MemoryPlan {
  const captureHeap: HeapCeiling = {
    maxOldGenerationSizeMb: CAPTURE_HEAP_BASE_MB + CAPTURE_HEAP_PER_OUTPUT_MB * backup.max_output_mb,
    maxYoungGenerationSizeMb: CAPTURE_YOUNG_MB,
  };
  const afterSessions = backup.capture_memory_mb - o.sessionThreads * heapMb(SESSION_HEAP);
  // A second worker only where a capture of the largest size still fits beside the heaps.
  const fit = Math.floor((afterSessions - backup.max_output_mb) / heapMb(captureHeap));
  const captureWorkers = Math.max(1, Math.min(o.maxCaptureWorkers, fit));
  const captureBytes = Math.max(0, afterSessions - captureWorkers * heapMb(captureHeap)) * MB;
  return { sessionHeap: SESSION_HEAP, captureHeap, captureWorkers, captureBytes };
}
