// Back-pressure from the capture memory budget to a capture's device socket: while held, its socket reads nothing more, for a bounded time at once.
import type { ReadGate } from '../transports/tcp';
import { DEFAULT_LIMITS, type CollectLimits } from '../types';

/** A held socket still reads one turn at least this often, at most a quarter of the command timeout: the device's idle timer never runs out because of a hold. */
const MAX_HOLD_MS = 2_000;

/** The gate of a capture under these limits: a hold lasts a quarter of its command timeout, 2 s at most. */
export function gateFor(limits: Partial<CollectLimits> | undefined): CaptureGate {
  const command = limits?.command_timeout_ms ?? DEFAULT_LIMITS.command_timeout_ms;
  return new CaptureGate(Math.max(1, Math.min(MAX_HOLD_MS, Math.floor(command / 4))));
}

/** One capture's gate: held or open, as the memory budget says (directly, or by 'hold'/'go' messages to its session thread). */
export class CaptureGate implements ReadGate {
  private held = false;
  private waiters: (() => void)[] = [];

  constructor(private readonly maxHold: number) {}

  get isHeld(): boolean {
    return this.held;
  }

  set(held: boolean): void {
    this.held = held;
    if (!held) this.open();
  }

  /** null while open; else resolves when opened, or after the hold bound (one more turn is read, then it may hold again). */
  whenOpen(): Promise<void> | null {
    if (!this.held) return null;
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.maxHold);
      timer.unref?.();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.waiters.push(done);
    });
  }

  private open(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}
