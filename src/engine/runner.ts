// Runs device backups: a bounded worker pool, one backup per device at a time, retries with backoff, results recorded.
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config';
import type { DB } from '../db/open';
import { finishBackup, type StartedBackup } from '../features/backups/backup-record.service';
import type { SecretBox } from '../identity/secrets';
import type { SnapshotStore } from '../store/snapshots';
import { closeAsFailed, recordingFailure } from '../features/backups/unclosed-backups';
import { noteWriteOk } from '../features/maintenance/storage-health';
import { captureBudget, collectForStorage, type StorageCollectResult } from './capture/capture-pool';
import { isBackupRunning, loadBackupPlan, recordDeviceContact, startEngineBackup, type BackupTrigger } from '../features/backups/backup-engine.service';
import { leaveZonedToCollectors } from '../features/collectors/collector-work.service';
import { TRANSIENT_FAILURES, UNREACHABLE_FAILURES, type CollectLimits, type FailureType } from './types';

export interface RunnerDeps {
  db: DB;
  secrets: SecretBox;
  snapshots: SnapshotStore;
  config: Readonly<AppConfig>;
  log?: Logger | null;
}

export interface DeviceRunResult {
  deviceId: number;
  deviceName: string;
  backupId: string | null;
  success: boolean;
  changed: boolean;
  /** The device's first stored version (never also "changed"). */
  first: boolean;
  failure: FailureType | 'SKIPPED' | null;
  message: string | null;
  attempts: number;
  durationMs: number;
}

export interface RunOptions {
  trigger: BackupTrigger;
  /** Who changed the device, when its change message named them (event backups). */
  changedBy?: string | null;
  /** Spread start times over 0..jitter ms so a whole fleet does not connect in the same second. */
  jitterMs?: number;
  signal?: AbortSignal;
  onResult?: (r: DeviceRunResult, done: number, total: number) => void;
  /** What a device's backup is doing beyond connecting and reading, e.g. "retrying: connection refused". */
  onProgress?: (deviceId: number, text: string) => void;
  /** A transient failure is retried: `attempt` is the one that failed, `reason` its failure in words. */
  onRetry?: (deviceId: number, attempt: number, reason: string) => void;
  /**
   * Asked as the pool takes each device, just before it starts: false leaves it out (a job item cancelled while
   * queued); it gets no result. Jobs also mark their item running here.
   */
  beforeStart?: (deviceId: number) => boolean;
  /** A signal that cancels this one device's backup (a cancelled job item), on top of `signal`. */
  deviceSignal?: (deviceId: number) => AbortSignal | undefined;
}

/** Who listens to every backup the runner makes, whoever asked for it (the appliance's metrics, src/app/services.ts). */
export interface RunObserver {
  backupFinished(r: DeviceRunResult, trigger: BackupTrigger): void;
}

/** How a run retries a transient failure: how many more attempts, and the wait before attempt n+1 (n from 1). */
export interface RetryPlan {
  retries: number;
  waitMs(attempt: number): number;
}

/**
 * The schedule retries with the configured backoff (30 s, 60 s, ... by default): nobody is waiting, and a device
 * that is rebooting gets time to come back. A backup someone asked for ("Back up now", `backup run`) retries at
 * most once, at once: the person waiting learns about a closed port in seconds, not after minutes of backoff.
 */
export function retryPlan(trigger: BackupTrigger, config: Readonly<AppConfig>): RetryPlan {
  const b = config.backup;
  if (trigger === 'schedule') return { retries: b.retries, waitMs: (attempt) => b.retry_backoff * 1000 * 2 ** (attempt - 1) };
  return { retries: Math.min(1, b.retries), waitMs: () => 0 };
}

/** "CONNECTION_REFUSED" → "connection refused", for progress lines. */
export function failureWords(failure: FailureType): string {
  return failure.toLowerCase().replace(/_/g, ' ');
}

export function limitsFromConfig(config: Readonly<AppConfig>): CollectLimits {
  const b = config.backup;
  return {
    connect_timeout_ms: b.connect_timeout * 1000,
    login_timeout_ms: b.login_timeout * 1000,
    command_timeout_ms: b.command_timeout * 1000,
    overall_timeout_ms: b.device_timeout * 1000,
    max_output_bytes: b.max_output_mb * 1024 * 1024,
  };
}

/**
 * One worker's view of a run's signal, aborted with it. A run's signal is shared by every worker (and by all the
 * scheduler's runs, or all of a job executor's jobs); each worker's waits, connects and sessions listen on it at
 * once, so with `concurrency` above 10 Node printed MaxListenersExceededWarning for a run doing nothing wrong.
 * AbortSignal.any keeps no listener on its source: the shared signal holds none, a worker's own a handful.
 */
export function workerSignal(signal: AbortSignal | undefined): AbortSignal | undefined {
  return signal ? AbortSignal.any([signal]) : undefined;
}

/**
 * Waits `ms`, or less when `signal` aborts. The abort listener goes when the wait ends either way: a run's signal is
 * shared by every worker (jitter, retries, the loop-lag hold's 10 ms ticks), and listeners left behind piled up on it
 * (MaxListenersExceededWarning on stderr, in plain text inside serve's JSON log, with 100+ devices).
 */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Backpressure from the event loop: the runner shares its thread with the HTTP server, and an SSH session's start
 * (key exchange, host-key check) is the costliest thing it does there. While the loop runs late, new sessions wait
 * a moment (at most MAX_HOLD_MS per device, so a run always progresses); sessions already open carry on.
 */
class LoopLag {
  private static readonly TICK_MS = 10;
  private static readonly LATE_MS = 8;
  private static readonly MAX_HOLD_MS = 500;
  private lag = 0;
  private timer: NodeJS.Timeout | null = null;
  private users = 0;

  start(): void {
    if (this.users++ > 0) return;
    let expected = Date.now() + LoopLag.TICK_MS;
    this.timer = setInterval(() => {
      const now = Date.now();
      // A smoothed lateness of the last few ticks: one slow turn does not hold the runner, a busy stretch does.
      this.lag = this.lag * 0.5 + Math.max(0, now - expected) * 0.5;
      expected = now + LoopLag.TICK_MS;
    }, LoopLag.TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (--this.users > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
    this.lag = 0;
  }

  get late(): boolean {
    return this.lag > LoopLag.LATE_MS;
  }

  /** Resolves when the loop is on time again, or after MAX_HOLD_MS. */
  async settle(signal?: AbortSignal): Promise<void> {
    const until = Date.now() + LoopLag.MAX_HOLD_MS;
    while (this.lag > LoopLag.LATE_MS && Date.now() < until && !signal?.aborted) await sleep(LoopLag.TICK_MS, signal);
  }
}

export class BackupRunner {
  /** Devices being backed up by this process right now. */
  private readonly active = new Set<number>();
  private readonly limits: CollectLimits;
  private readonly loopLag = new LoopLag();
  /** Devices of pending runs no worker has taken yet: the queue depth of /metrics. */
  private waiting = 0;

  constructor(
    private readonly deps: RunnerDeps,
    private readonly observer: RunObserver | null = null,
  ) {
    this.limits = limitsFromConfig(deps.config);
  }

  isRunning(deviceId: number): boolean {
    return this.active.has(deviceId);
  }

  /** Devices waiting in this runner's pool for a free worker. */
  queued(): number {
    return this.waiting;
  }

  /** Back up the given devices with the configured concurrency; resolves when all are done. */
  async run(deviceIds: readonly number[], opts: RunOptions): Promise<DeviceRunResult[]> {
    const queue = [...new Set(deviceIds)];
    const results: DeviceRunResult[] = [];
    let taken = 0;
    this.waiting += queue.length;
    const workers = Math.max(1, Math.min(this.deps.config.backup.concurrency, queue.length));
    let next = 0;
    const worker = async () => {
      const signal = workerSignal(opts.signal);
      const mine = { ...opts, signal };
      while (next < queue.length && !signal?.aborted) {
        const id = queue[next++];
        if (opts.jitterMs) await sleep(Math.floor(Math.random() * opts.jitterMs), signal);
        if (this.deps.config.performance.loop_lag_hold && this.loopLag.late) await this.loopLag.settle(signal);
        taken++;
        this.waiting--;
        if (opts.beforeStart && !opts.beforeStart(id)) continue;
        const r = await this.backupDevice(id, mine);
        results.push(r);
        opts.onResult?.(r, results.length, queue.length);
        // A device's end and the next one's start (records, credentials, template) run in one go otherwise, in the
        // same turn as the other workers' continuations: let waiting HTTP requests in between.
        await yieldToEventLoop();
      }
    };
    this.loopLag.start();
    try {
      await Promise.all(Array.from({ length: workers }, worker));
    } finally {
      this.loopLag.stop();
      // An aborted run leaves devices never taken: they leave the queue too.
      this.waiting -= queue.length - taken;
    }
    return results;
  }

  /** One device, with retries for transient failures. Never throws; a failure is a recorded result. */
  async backupDevice(deviceId: number, opts: RunOptions): Promise<DeviceRunResult> {
    const r = await this.backupDeviceNow(deviceId, opts);
    this.observer?.backupFinished(r, opts.trigger);
    return r;
  }

  private async backupDeviceNow(deviceId: number, opts: RunOptions): Promise<DeviceRunResult> {
    const { db, secrets, snapshots, config, log } = this.deps;
    const begun = Date.now();
    const plan = loadBackupPlan(db, secrets, deviceId);
    const base = { deviceId, deviceName: plan?.deviceName ?? String(deviceId), backupId: null, changed: false, first: false, attempts: 0 };
    if (!plan) return { ...base, success: false, failure: 'SKIPPED', message: `Device ${deviceId} does not exist.`, durationMs: 0 };
    // A device of a remote zone is out of this appliance's reach: its backup goes to its collector's queue (docs/collectors.md).
    if (opts.trigger !== 'import' && leaveZonedToCollectors(db, [deviceId], opts.trigger).length === 0) {
      return { ...base, success: false, failure: 'SKIPPED', message: 'Queued for the collector of its zone.', durationMs: 0 };
    }
    if (this.active.has(deviceId) || isBackupRunning(db, deviceId)) {
      return { ...base, success: false, failure: 'SKIPPED', message: 'A backup of this device is already running.', durationMs: 0 };
    }
    this.active.add(deviceId);
    const own = opts.deviceSignal?.(deviceId);
    const signal = own && opts.signal ? AbortSignal.any([opts.signal, own]) : (own ?? opts.signal);
    let started: StartedBackup | null = null;
    try {
      started = startEngineBackup(db, deviceId, plan.templateId, opts.trigger, opts.changedBy ?? null);
      let result: StorageCollectResult;
      let attempts = 0;
      const retry = retryPlan(opts.trigger, config);
      for (;;) {
        attempts++;
        result = await collectForStorage(plan.target, plan.template, this.limits, {
          redact_key: config.backup.redact_secrets ? secrets.redactionKey : null,
          signal,
          compress: snapshots.compresses,
          budget: captureBudget(config.backup, config.performance.session_threads),
          inThread: config.performance.session_threads,
        });
        if (result.ok || !TRANSIENT_FAILURES.has(result.failure) || attempts > retry.retries || signal?.aborted) break;
        const wait = retry.waitMs(attempts);
        log?.warn({ device_id: deviceId, failure: result.failure, attempt: attempts, retry_in_ms: wait }, 'backup attempt failed, retrying');
        const words = failureWords(result.failure);
        opts.onRetry?.(deviceId, attempts, words);
        opts.onProgress?.(deviceId, wait > 0 ? `retrying in ${Math.round(wait / 1000)} s: ${words}` : `retrying: ${words}`);
        await sleep(wait, signal);
      }
      const reachability = result.ok || result.reachable ? 'reachable' : UNREACHABLE_FAILURES.has(result.failure) ? 'unreachable' : null;
      const backupId = started.id;
      recordDeviceContact(db, plan, {
        reachability,
        error: result.ok ? null : result.message,
        hostKey: result.host_key,
        failure: result.ok ? null : result.failure,
        backupId,
      });
      const done = await finishBackup(
        db,
        snapshots,
        started,
        result.ok ? { ok: true, prepared: result.prepared, encoding: result.encoding } : { ok: false, failure: result.failure, message: result.message },
      );
      noteWriteOk(db);
      log?.info(
        {
          device_id: deviceId,
          backup_id: done.id,
          success: done.success,
          changed: done.changed,
          failure: result.ok ? undefined : result.failure,
          attempts,
          trigger: opts.trigger,
        },
        'backup finished',
      );
      return {
        ...base,
        backupId: done.id,
        success: done.success,
        changed: done.changed,
        first: done.first,
        failure: result.ok ? null : result.failure,
        message: result.ok ? null : result.message,
        attempts,
        durationMs: Date.now() - begun,
      };
    } catch (err) {
      log?.error({ err, device_id: deviceId }, 'backup crashed');
      // A snapshot that cannot be written (disk full ...) is a failure of this backup, said as such.
      const f = recordingFailure(db, err);
      if (started) await closeAsFailed(db, snapshots, started, f, log);
      return { ...base, success: false, ...f, durationMs: Date.now() - begun };
    } finally {
      this.active.delete(deviceId);
    }
  }
}
