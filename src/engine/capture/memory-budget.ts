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
