// The site's syslog forwarder: messages its listener receives go to the central in signed batches, rate-limited, spooled on disk while the central is away.
import { mkdirSync, readFileSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { EVENTS_MAX_BATCH, EVENTS_MAX_MESSAGE } from '../lib/collector-protocol';
import { CentralUnreachable, ProtocolMismatch, answerMessage, centralPost, type CentralAnswer, type ClientOptions } from './central-client';

/** One received message as forwarded: the sender's address, when it arrived (ms), the raw line. */
export interface ForwardedEvent {
  address: string;
  at: number;
  raw: string;
}

export interface ForwarderOptions {
  client: ClientOptions;
  dataDir: string;
  log: Logger;
  /** Messages taken a second, with a burst of as many; more are dropped and counted (default 1,000). */
  ratePerSecond?: number;
  /** A batch is sent when it holds this many messages or after flushMs (defaults: the protocol's 500, 1 s). */
  batchMax?: number;
  flushMs?: number;
  /** Bytes the spool may hold; past it the oldest batches are dropped and counted (default 32 MiB). */
  spoolBytes?: number;
  /** Wait after the central could not be reached (default 2 s). */
  retryMs?: number;
  now?: () => number;
}

export interface ForwarderCounters {
  received: number;
  /** Over the rate limit: dropped at once. */
  rate_dropped: number;
  /** Taken by the central (it decides which are change events of the zone's devices). */
  forwarded: number;
  /** Written to the spool because the central could not be reached. */
  spooled: number;
  /** The oldest spooled messages, dropped to keep the spool within its bound. */
  spool_dropped: number;
  /** Refused by the central (a 4xx other than 503): dropped. */
  refused: number;
}

export const EVENT_SPOOL_DIR = 'event-spool';

/**
 * Batches in `<data_dir>/event-spool`, one 0600 file each, named `<sequence>-<count>.json` so the bound can drop
 * the oldest and count what it dropped without reading them.
 */
class EventSpool {
  private seq = 0;
  constructor(
    readonly dir: string,
    private readonly maxBytes: number,
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    for (const f of this.files()) this.seq = Math.max(this.seq, Number(f.split('-')[0]));
  }

  files(): string[] {
    return readdirSync(this.dir)
      .filter((f) => /^\d{12}-\d+\.json$/.test(f))
      .sort();
  }

  /** Writes a batch; returns how many older messages were dropped to make room. */
  add(batch: readonly ForwardedEvent[]): number {
    const text = JSON.stringify(batch);
    let dropped = 0;
    const files = this.files();
    let size = files.reduce((n, f) => n + statSync(path.join(this.dir, f)).size, 0);
    for (const f of files) {
      if (size + text.length <= this.maxBytes) break;
      size -= statSync(path.join(this.dir, f)).size;
      unlinkSync(path.join(this.dir, f));
      dropped += Number(f.slice(13, -5));
    }
    if (text.length > this.maxBytes) return dropped + batch.length;
    const name = `${String(++this.seq).padStart(12, '0')}-${batch.length}.json`;
    const temp = path.join(this.dir, `.${name}.tmp`);
    writeFileSync(temp, text, { mode: 0o600 });
    renameSync(temp, path.join(this.dir, name));
    return dropped;
  }

  read(file: string): ForwardedEvent[] {
    return JSON.parse(readFileSync(path.join(this.dir, file), 'utf8')) as ForwardedEvent[];
  }

  remove(file: string): void {
    unlinkSync(path.join(this.dir, file));
  }
}

export class SyslogForwarder {
  readonly counters: ForwarderCounters = { received: 0, rate_dropped: 0, forwarded: 0, spooled: 0, spool_dropped: 0, refused: 0 };
  private queue: ForwardedEvent[] = [];
  private readonly spool: EventSpool;
  private tokens: number;
  private refilled: number;
  private wake: (() => void) | null = null;
  private rateDropsLogged = 0;
  private rateLoggedAt = -Infinity;
  private readonly rate: number;
  private readonly batchMax: number;
  private readonly now: () => number;

  constructor(private readonly o: ForwarderOptions) {
    this.rate = o.ratePerSecond ?? 1000;
    this.batchMax = Math.min(o.batchMax ?? EVENTS_MAX_BATCH, EVENTS_MAX_BATCH);
    this.now = o.now ?? Date.now;
    this.tokens = this.rate;
    this.refilled = this.now();
    this.spool = new EventSpool(path.join(o.dataDir, EVENT_SPOOL_DIR), o.spoolBytes ?? 32 * 1024 * 1024);
  }

  /** One message from the listener; cheap, runs for every datagram of a flood. */
  add(address: string, raw: string): void {
    this.counters.received++;
    const now = this.now();
    this.tokens = Math.min(this.rate, this.tokens + ((now - this.refilled) * this.rate) / 1000);
    this.refilled = now;
    if (this.tokens < 1) return void this.counters.rate_dropped++;
    this.tokens--;
    this.queue.push({ address, at: now, raw: raw.slice(0, EVENTS_MAX_MESSAGE) });
    // A full batch wakes the sender; while it is busy (a batch on its way, or waiting to retry an unreachable
    // central), the batch goes to the spool at once, so memory holds at most one batch.
    if (this.queue.length >= this.batchMax) {
      if (this.wake) this.wake();
      else this.spill(this.queue.splice(0, this.batchMax));
    }
  }

  /** Messages waiting in memory and in the spool (batches). */
  pending(): { queued: number; spooled_batches: number } {
    return { queued: this.queue.length, spooled_batches: this.spool.files().length };
  }

  /** Delivers until `signal` aborts; what is still in memory then goes to the spool, for the next run. */
  async run(signal: AbortSignal): Promise<void> {
    const flushMs = this.o.flushMs ?? 1000;
    const retryMs = this.o.retryMs ?? 2000;
    try {
      while (!signal.aborted) {
        const reached = (await this.deliverSpool()) && (await this.deliverQueue());
        if (!reached) this.spillAll();
        this.logRateDrops();
        await this.sleep(reached ? flushMs : retryMs, signal, reached);
      }
    } finally {
      this.spillAll();
    }
  }

  /** Spooled batches, oldest first; false (they stay) when the central could not be reached. */
  private async deliverSpool(): Promise<boolean> {
    for (const f of this.spool.files()) {
      if (!(await this.send(this.spool.read(f)))) return false;
      this.spool.remove(f);
    }
    return true;
  }

  private async deliverQueue(): Promise<boolean> {
    while (this.queue.length) {
      const batch = this.queue.splice(0, this.batchMax);
      if (!(await this.send(batch))) {
        this.spill(batch);
        return false;
      }
    }
    return true;
  }

  /** True when the batch is done with (taken, or refused for good); false when it should be kept for later. */
  private async send(batch: ForwardedEvent[]): Promise<boolean> {
    let a: CentralAnswer;
    try {
      a = await centralPost({ ...this.o.client, timeout_ms: 15_000 }, '/events', { events: batch });
    } catch (err) {
      if (!(err instanceof CentralUnreachable) && !(err instanceof ProtocolMismatch)) throw err;
      this.o.log.warn({ problem: err.message, messages: batch.length }, 'syslog events: central unreachable, spooling');
      return false;
    }
    if (a.status === 200) {
      this.counters.forwarded += batch.length;
      this.o.log.debug({ messages: batch.length, answer: a.body }, 'syslog events forwarded');
      return true;
    }
    // 503: the central is starting or busy; anything else (a refusal) would be refused again.
    if (a.status === 503) return false;
    this.counters.refused += batch.length;
    this.o.log.warn({ status: a.status, problem: answerMessage(a), messages: batch.length }, 'syslog events refused by the central, dropped');
    return true;
  }

  /** At most one line a minute for messages over the rate limit, never one per message. */
  private logRateDrops(): void {
    const now = this.now();
    if (this.counters.rate_dropped === this.rateDropsLogged || now - this.rateLoggedAt < 60_000) return;
    this.o.log.warn(
      { dropped: this.counters.rate_dropped - this.rateDropsLogged, total_dropped: this.counters.rate_dropped, per_second: this.rate },
      'syslog messages over the rate limit dropped',
    );
    this.rateDropsLogged = this.counters.rate_dropped;
    this.rateLoggedAt = now;
  }

  private spill(batch: ForwardedEvent[]): void {
    if (batch.length === 0) return;
    const dropped = this.spool.add(batch);
    this.counters.spooled += batch.length;
    if (dropped) {
      this.counters.spool_dropped += dropped;
      this.o.log.warn({ dropped, total_dropped: this.counters.spool_dropped }, 'syslog event spool full: oldest messages dropped');
    }
  }

  private spillAll(): void {
    while (this.queue.length) this.spill(this.queue.splice(0, this.batchMax));
  }

  /** Waits `ms`, or less when `wakeable` and a full batch arrives. */
  private sleep(ms: number, signal: AbortSignal, wakeable: boolean): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        this.wake = null;
        resolve();
      };
      const t = setTimeout(done, ms);
      if (wakeable) this.wake = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
