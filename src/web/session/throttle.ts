// Login throttling in memory: after 5 failures for a username (20 for an address), an exponentially growing lockout window.
// An address may be shared by a whole office behind NAT, so it gets more room than one account.
const FREE_FAILURES = { u: 5, a: 20 } as const;
const BASE_LOCK_MS = 30_000;
const MAX_LOCK_MS = 15 * 60_000;
// A quiet key is forgotten after this long, so the map cannot grow without bound from one-off typos.
const FORGET_AFTER_MS = 60 * 60_000;
const MAX_ENTRIES = 50_000;

interface Entry {
  failures: number;
  lockedUntil: number;
  lastFailure: number;
}

export class LoginThrottle {
  private readonly entries = new Map<string, Entry>();

  private keys(username: string, address: string): string[] {
    return [`u:${username.trim().toLowerCase()}`, `a:${address}`];
  }

  /** Milliseconds the attempt must wait (0: may try now). Checked before any password is verified. */
  retryAfter(username: string, address: string, now = Date.now()): number {
    let wait = 0;
    for (const k of this.keys(username, address)) {
      const e = this.entries.get(k);
      if (e && e.lockedUntil > now) wait = Math.max(wait, e.lockedUntil - now);
    }
    return wait;
  }

  recordFailure(username: string, address: string, now = Date.now()): void {
    if (this.entries.size > MAX_ENTRIES) this.prune(now);
    for (const k of this.keys(username, address)) {
      const e = this.entries.get(k) ?? { failures: 0, lockedUntil: 0, lastFailure: 0 };
      if (now - e.lastFailure > FORGET_AFTER_MS) e.failures = 0;
      e.failures++;
      e.lastFailure = now;
      const free = FREE_FAILURES[k[0] as 'u' | 'a'];
      if (e.failures >= free) e.lockedUntil = now + Math.min(MAX_LOCK_MS, BASE_LOCK_MS * 2 ** (e.failures - free));
      this.entries.set(k, e);
    }
  }

  /** A successful login clears its username; the address keeps its record (one host guessing many users). */
  recordSuccess(username: string): void {
    this.entries.delete(`u:${username.trim().toLowerCase()}`);
  }

  private prune(now: number): void {
    for (const [k, e] of this.entries) if (now - e.lastFailure > FORGET_AFTER_MS && e.lockedUntil <= now) this.entries.delete(k);
  }
}
