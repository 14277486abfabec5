// Login throttling in memory: after 5 failures for a username (20 for an address), an exponentially growing lockout window.
// An address may be shared by a whole office behind NAT, so it gets more room than one account.
const FREE_FAILURES = { u: 5, a: 20 } as const;
const BASE_LOCK_MS = 30_000;
const MAX_LOCK_MS = 15 * 60_000;
// A quiet key is forgotten after this long, so the map cannot grow without bound from one-off typos.
const FORGET_AFTER_MS = 60 * 60_000;
const MAX_ENTRIES = 50_000;

export interface Reservation {
  username: string;
  keys: string[];
}

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

  /** Milliseconds the attempt must wait (0: may try now). */
  retryAfter(username: string, address: string, now = Date.now()): number {
    let wait = 0;
    for (const k of this.keys(username, address)) {
      const e = this.entries.get(k);
      if (e && e.lockedUntil > now) wait = Math.max(wait, e.lockedUntil - now);
    }
    return wait;
  }

  /**
   * Take an attempt before any password is verified: it counts as a failure at once, so that attempts running in
   * parallel (argon2 is asynchronous) all see each other. Returns the wait (attempt refused) or a reservation that
   * `succeeded` refunds. Without the reservation, 100 parallel guesses were all let through to the check.
   */
  reserve(username: string, address: string, now = Date.now()): { wait: number } | { wait: 0; reservation: Reservation } {
    const wait = this.retryAfter(username, address, now);
    if (wait > 0) return { wait };
    this.recordFailure(username, address, now);
    return { wait: 0, reservation: { username, keys: this.keys(username, address) } };
  }

  /** The reserved attempt was a right password: undo its failure (and a lock it alone caused), clear the username. */
  succeeded(r: Reservation): void {
    this.refund(r);
    this.recordSuccess(r.username);
  }

  /**
   * Undo the reserved attempt's failure without clearing the username: a right password that still owes its second
   * factor (clearing would give a guesser of codes a fresh count with every password).
   */
  refund(r: Reservation): void {
    for (const k of r.keys) {
      const cur = this.entries.get(k);
      if (!cur) continue;
      cur.failures = Math.max(0, cur.failures - 1);
      // A lock is set only when a reservation reaches the free count; below it again, no lock stands.
      if (cur.failures < FREE_FAILURES[k[0] as 'u' | 'a']) cur.lockedUntil = 0;
      if (cur.failures === 0) this.entries.delete(k);
    }
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
