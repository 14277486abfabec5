// A byte budget for work in flight: what does not fit waits its turn (first come, first served) instead of exceeding it.

interface Waiter {
  bytes: number;
  resolve: (release: () => void) => void;
}

export class MemoryBudget {
  private used = 0;
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(readonly limit: number) {}

  /** Bytes reserved now (for /metrics and tests). */
  get inUse(): number {
    return this.used;
  }

  /** Work waiting for room. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Resolves with a release function once `bytes` fit next to what is in flight. Work larger than the whole budget
   * runs once nothing else does, so it is never refused, only serialised. Waiters are served in order, so a big one
   * is not overtaken for ever by small ones.
   */
  acquire(bytes: number): Promise<() => void> {
    return new Promise((resolve) => {
      this.waiting.push({ bytes, resolve });
      this.pump();
    });
  }

  private pump(): void {
    while (this.waiting.length > 0) {
      const next = this.waiting[0];
      if (this.running > 0 && this.used + next.bytes > this.limit) return;
      this.waiting.shift();
      this.used += next.bytes;
      this.running++;
      let released = false;
      next.resolve(() => {
        if (released) return;
        released = true;
        this.used -= next.bytes;
        this.running--;
        this.pump();
      });
    }
  }
}
