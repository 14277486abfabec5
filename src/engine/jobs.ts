// Runs backup jobs (schema/0017) with the process's BackupRunner: item states as devices start, retry and end; heartbeats; cancels; the server's pick-up of queued jobs.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { DB } from '../db/open';
import { beatJobs, claimJob, endJob, finishJobItem, jobWork, listQueuedJobs, retryJobItem, startJobItem } from '../features/backups/job-execution.service';
import { closeDeadJobs, interruptedJobsToOffer } from '../features/backups/jobs.service';
import { WritesWhenWritable } from '../features/backups/unclosed-backups';
import type { BackupRunner, DeviceRunResult, RunOptions } from './runner';

/** How often a process renews its jobs' heartbeat and looks for cancel requests (and `serve` for queued jobs). */
export const JOB_BEAT_MS = 1000;

export interface JobRunHooks {
  onResult?: RunOptions['onResult'];
  onProgress?: RunOptions['onProgress'];
}

/** One per process, over its runner (built by the composition root, or by the CLI's `backup run --wait`): runs the jobs this process owns. */
export class JobExecutor {
  /** Names this process in backup_jobs.owner while it runs a job. */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  /** Per running job: an abort controller per device being backed up. */
  private readonly running = new Map<string, Map<number, AbortController>>();
  private readonly done = new Map<string, Promise<DeviceRunResult[]>>();
  private readonly stopping = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  /**
   * Per job, its records the database refused (disk full): item ends, then the job's end, written in order at every
   * beat until it takes them. Meanwhile the job keeps its heartbeat, so nobody closes it as interrupted.
   */
  private readonly unwritten: WritesWhenWritable;

  constructor(
    private readonly db: DB,
    private readonly runner: Pick<BackupRunner, 'run'>,
    private readonly log: Logger | null = null,
  ) {
    this.unwritten = new WritesWhenWritable(db, log);
  }

  /** Run a job this process owns (requested with this owner, or claimed); resolves with the device results when it ends. */
  execute(jobId: string, hooks: JobRunHooks = {}): Promise<DeviceRunResult[]> {
    const p = this.executeNow(jobId, hooks);
    this.done.set(jobId, p);
    void p.finally(() => this.done.delete(jobId));
    return p;
  }

  private async executeNow(jobId: string, hooks: JobRunHooks): Promise<DeviceRunResult[]> {
    const { db } = this;
    const work = jobWork(db, jobId);
    if (!work) return [];
    const controllers = new Map<number, AbortController>();
    this.running.set(jobId, controllers);
    this.beat();
    try {
      return await this.runner.run(work.deviceIds, {
        trigger: work.trigger,
        signal: this.stopping.signal,
        beforeStart: (id) => startJobItem(db, jobId, id),
        deviceSignal: (id) => {
          const c = new AbortController();
          controllers.set(id, c);
          return c.signal;
        },
        onRetry: (id, attempt, reason) => retryJobItem(db, jobId, id, attempt, reason),
        onResult: (r, n, total) => {
          controllers.delete(r.deviceId);
          const at = Date.now();
          this.record(jobId, () => finishJobItem(db, jobId, r.deviceId, r, at), 'job item');
          hooks.onResult?.(r, n, total);
        },
        onProgress: hooks.onProgress,
      });
    } catch (err) {
      this.log?.error({ err, job_id: jobId }, 'backup job failed');
      return [];
    } finally {
      this.running.delete(jobId);
      const how = this.stopping.signal.aborted ? 'stopped' : 'done';
      const at = Date.now();
      this.record(jobId, () => endJob(db, jobId, how, at), 'job');
    }
  }

  /** Writes a job's record now, or after its records still waiting for the database (see `unwritten`). */
  private record(jobId: string, write: () => void, what: string): void {
    if (this.unwritten.write(jobId, write, { job_id: jobId, record: what })) return;
    this.beat();
  }

  /** Writes the records the database refused earlier, in order, as far as it takes them now. */
  writeLate(): void {
    this.unwritten.flush();
  }

  /** Renew heartbeats and act on cancel requests now (also every JOB_BEAT_MS while a job runs or has records to write). */
  beat(): void {
    this.writeLate();
    const jobIds = new Set([...this.running.keys(), ...this.unwritten.keys()]);
    if (jobIds.size === 0) {
      if (this.timer) clearInterval(this.timer);
      this.timer = null;
      return;
    }
    if (!this.timer) {
      this.timer = setInterval(() => this.beat(), JOB_BEAT_MS);
      this.timer.unref();
    }
    try {
      for (const [jobId, ids] of beatJobs(this.db, [...jobIds])) {
        for (const id of ids) this.running.get(jobId)?.get(id)?.abort();
      }
    } catch (err) {
      this.log?.warn({ err }, 'backup job heartbeat failed');
    }
  }

  /** Stop every job of this process (the process is stopping): running backups are cancelled, the jobs end as interrupted. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.allSettled([...this.done.values()]);
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/**
 * Names the interrupted jobs of the last week that still have backups to resume, and how to resume them (at `serve`'s
 * start, and when a dead process's jobs are closed). Nothing resumes them on its own: a job stopped by a restart may
 * have been stopped on purpose, and a backup run hours later than asked may not be what its requester wants.
 */
function offerInterruptedJobs(db: DB, log: Logger | null): void {
  const jobs = interruptedJobsToOffer(db);
  if (jobs.length === 0) return;
  log?.warn(
    { jobs: jobs.map((j) => ({ id: j.id, label: j.label, interrupted: j.interrupted })) },
    'interrupted backup jobs are not resumed on their own: resume one with "confvault backup jobs resume ID" or its Resume button on the Jobs page',
  );
}

/**
 * `serve`: every JOB_BEAT_MS, close jobs whose process died and claim the queued ones (`backup run --no-wait` from the
 * CLI), one indexed read when there is nothing to do. Stopping waits for the jobs it runs to end.
 */
export function startJobPickup(executor: JobExecutor, db: DB, log: Logger | null = null): { stop(): Promise<void> } {
  const tick = () => {
    try {
      // This process's own records refused by a full disk are written first: its jobs are not dead, only late.
      executor.writeLate();
      const dead = closeDeadJobs(db);
      if (dead) {
        log?.warn({ count: dead }, 'closed backup jobs whose process stopped as interrupted');
        offerInterruptedJobs(db, log);
      }
      for (const id of listQueuedJobs(db)) {
        if (!claimJob(db, id, executor.owner)) continue;
        log?.info({ job_id: id }, 'backup job picked up');
        void executor.execute(id);
      }
    } catch (err) {
      log?.error({ err }, 'backup job pick-up failed');
    }
  };
  tick();
  try {
    offerInterruptedJobs(db, log);
  } catch (err) {
    log?.error({ err }, 'cannot list interrupted backup jobs');
  }
  const timer = setInterval(tick, JOB_BEAT_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await executor.stop();
    },
  };
}
