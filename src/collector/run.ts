// `confvault collector run`: dial out to the central, lease the zone's due backups, collect with the engine, upload (or spool) the results.
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config';
import { runtimeEnv } from '../config/runtime-env';
import { collectConfig } from '../engine/collect';
import { limitsFromConfig } from '../engine/runner';
import { UNREACHABLE_FAILURES, type CollectTarget } from '../engine/types';
import { BATCH_BYTES, BATCH_RESULTS, MAX_HELD, openSealed, sha256Text, type ResultOutcome, type Sealed } from '../lib/collector-protocol';
import type { TemplateSpec } from '../templates/types';
import { CentralUnreachable, ProtocolMismatch, answerMessage, centralPost, type ClientOptions } from './central-client';
import { centralClientOptions, loadIdentity, type CollectorIdentity } from './identity';
import { Spool } from './spool';
import { prepareNativeAddons } from '../runtime/native';
import { VERSION } from '../version';

interface Job {
  lease_id: string;
  device_id: number;
  device_name: string;
  template: TemplateSpec;
  sealed: Sealed;
}

export class CollectorStop extends Error {}

/** Results wait at most this long at the site for others to share their request (protocol 2 batches). */
const FLUSH_MS = 500;
/** A stopping site waits this long at most for the central to take back the leases it had not started. */
const RELEASE_TIMEOUT_MS = 5000;

/** The reason a wait is cut short with: abort() without one builds a DOMException, stack and all, once a job (1 % of a site's CPU). */
const WOKEN = Symbol('woken');

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** Runs until `signal` aborts; throws CollectorStop (one line for the operator) when it must not go on. */
export async function runCollector(config: Readonly<AppConfig>, log: Logger, signal: AbortSignal): Promise<void> {
  const dataDir = config.storage.data_dir;
  const id = loadIdentity(dataDir);
  if (!id) throw new CollectorStop(`not enrolled: no collector identity in ${dataDir} (run \`confvault collector enrol\` first)`);
  // The site opens no database, but its SSH sessions use ssh2's compiled crypto binding (extracted here in the executable).
  prepareNativeAddons(dataDir, runtimeEnv().nativeDir);
  const cfg = config.collector;
  const client: ClientOptions = centralClientOptions(cfg, id);
  const spool = new Spool(dataDir, cfg.spool_mb * 1024 * 1024);
  const limits = limitsFromConfig(config);
  let pollMs = cfg.poll_seconds * 1000;
  log.info({ collector: id.name, zone: id.zone, central: client.central_url }, 'collector started');

  type Result = { lease_id: string };
  /** Results collected and not yet sent, in order (the spool holds those the central could not take). */
  const outbox: Result[] = [];
  let outboxSince = 0;

  /**
   * Sends one batch (protocol 2) and returns the results to send again (`retry`). Stored, duplicate and refused ones
   * are done: a refusal (an expired lease whose backup went back to the queue, a bad hash) would block the spool.
   * CentralUnreachable when the central could not be reached or failed (5xx): the caller keeps the whole batch.
   */
  const send = async (batch: Result[]): Promise<Result[]> => {
    const a = await centralPost(client, '/results', { results: batch });
    if (a.status === 401) throw new CollectorStop(`the central refuses this collector: ${answerMessage(a)}`);
    if (a.status >= 500) throw new CentralUnreachable(`the central failed to take results: ${answerMessage(a)}`);
    if (a.status !== 200) {
      log.warn({ lease_ids: batch.map((r) => r.lease_id), status: a.status, problem: answerMessage(a) }, 'results refused by the central, dropped');
      return [];
    }
    const answers = new Map(((a.body as { results?: ResultOutcome[] }).results ?? []).map((o) => [o.lease_id, o]));
    const keep: Result[] = [];
    for (const r of batch) {
      const o = answers.get(r.lease_id);
      if (!o) keep.push(r);
      else if (o.outcome === 'stored' || o.outcome === 'duplicate') {
        log.info({ lease_id: r.lease_id, backup_id: o.backup_id, duplicate: o.outcome === 'duplicate' }, 'result stored by the central');
      } else if (o.outcome === 'retry') keep.push(r);
      else log.warn({ lease_id: r.lease_id, problem: o.message }, 'result refused by the central, dropped');
    }
    return keep;
  };

  /** The first results of `items`, bounded by BATCH_RESULTS and BATCH_BYTES (at least one). */
  const batchOf = <T>(items: Iterable<T>, result: (item: T) => Result): T[] => {
    const batch: T[] = [];
    let bytes = 0;
    for (const item of items) {
      const n = Buffer.byteLength(JSON.stringify(result(item)));
      if (batch.length > 0 && (batch.length >= BATCH_RESULTS || bytes + n > BATCH_BYTES)) break;
      batch.push(item);
      bytes += n;
    }
    return batch;
  };

  /** Spooled results first (oldest first), then the outbox; on CentralUnreachable the outbox joins the spool. */
  const flush = async (): Promise<void> => {
    try {
      while (spool.count() > 0) {
        const batch = batchOf(spool.pending(), (p) => p.result as Result);
        const keep = new Set((await send(batch.map((p) => p.result as Result))).map((r) => r.lease_id));
        for (const p of batch) if (!keep.has((p.result as Result).lease_id)) p.done();
        if (keep.size > 0) return;
      }
      // What waited when the flush began; results collected meanwhile wait for the next one (their own FLUSH_MS).
      for (let n = outbox.length; n > 0;) {
        const batch = batchOf(outbox.slice(0, n), (r) => r);
        const keep = await send(batch);
        outbox.splice(0, batch.length, ...keep);
        n -= batch.length;
        if (keep.length > 0) break;
      }
      if (outbox.length > 0) outboxSince = Date.now();
    } catch (err) {
      if (!(err instanceof CentralUnreachable)) throw err;
      for (const r of outbox.splice(0)) {
        if (spool.add(r)) log.warn({ lease_id: r.lease_id, spooled: spool.count() }, 'central unreachable: result spooled');
        else log.error({ lease_id: r.lease_id, spool_mb: cfg.spool_mb }, 'spool full: result dropped (the lease expires and the backup is queued again)');
      }
      throw err;
    }
  };

  const runJob = async (job: Job): Promise<void> => {
    const started_at = Date.now();
    const opened = openSealed(id.keys.sealing_private, id.keys.sealing_public, job.sealed) as { target: CollectTarget; redact_key: string | null };
    const r = await collectConfig(opened.target, job.template, limits, {
      redact_key: opened.redact_key ? Buffer.from(opened.redact_key, 'base64') : null,
      signal,
    });
    const common = {
      lease_id: job.lease_id,
      started_at,
      duration_ms: r.duration_ms,
      host_key: r.host_key,
      reachability: r.ok || r.reachable ? ('reachable' as const) : UNREACHABLE_FAILURES.has(r.failure) ? ('unreachable' as const) : null,
    };
    const result = r.ok
      ? { ...common, ok: true as const, text: r.text, sha256: sha256Text(r.text), encoding: r.encoding }
      : { ...common, ok: false as const, failure: r.failure, message: r.message };
    log.info({ device: job.device_name, lease_id: job.lease_id, success: r.ok, failure: r.ok ? undefined : r.failure }, 'backup collected');
    if (outbox.length === 0) outboxSince = Date.now();
    outbox.push(result);
  };

  // collectors-bench (#27): a pool fed ahead. The site keeps `concurrency` jobs running with as many leased ahead,
  // leases again as soon as fewer remain (not a poll interval later while the zone has work), and sends results in
  // batches: when BATCH_RESULTS are waiting, FLUSH_MS after the first, or when nothing runs (docs/collectors.md).
  const ready: Job[] = [];
  const running = new Set<Promise<void>>();
  let failed: { err: unknown } | undefined;
  let flushing: Promise<void> | undefined;
  /** After a lease came back short (the zone's queue is empty), not before this unless the site is idle. */
  let leaseAgainAt = 0;
  let retryAt = 0;
  /** Jobs running now, for the leases to renew. */
  const inFlight = new Set<Job>();
  const start = (job: Job) => {
    inFlight.add(job);
    const p: Promise<void> = runJob(job)
      .catch((err: unknown) => void (failed ??= { err }))
      .finally(() => {
        running.delete(p);
        inFlight.delete(job);
      });
    running.add(p);
  };
  const unreachable = (err: unknown) => {
    if (!(err instanceof CentralUnreachable)) return false;
    log.warn({ problem: err.message, spooled: spool.count() }, 'central unreachable, retrying');
    retryAt = Date.now() + Math.min(pollMs, 5000);
    return true;
  };
  const startFlush = () => {
    flushing = flush()
      .catch((err: unknown) => void (unreachable(err) || (failed ??= { err })))
      .finally(() => (flushing = undefined));
  };
  try {
    while (!signal.aborted) {
      try {
        if (failed) throw failed.err;
        while (running.size < cfg.concurrency && ready.length > 0) start(ready.shift()!);
        const now = Date.now();
        const local = ready.length + running.size;
        const due = outbox.length >= BATCH_RESULTS || (outbox.length > 0 && (running.size === 0 || now - outboxSince >= FLUSH_MS));
        if (!flushing && now >= retryAt && (due || spool.count() > 0)) startFlush();
        // Results go in order: with some spooled, new work waits until the spool is delivered.
        const spooled = spool.count() > 0;
        // Idle (nothing to run or send): the central holds the request until work is queued, so a schedule is heard at once.
        const wait = local === 0 && outbox.length === 0 && !flushing;
        if (!spooled && now >= retryAt && local < cfg.concurrency && (wait || now >= leaseAgainAt)) {
          const max = Math.min(100, 2 * cfg.concurrency - local);
          const held = [...ready, ...inFlight, ...outbox].map((j) => j.lease_id).slice(0, MAX_HELD);
          const asked = Date.now();
          const a = await centralPost(client, '/lease', { max, held, wait }, signal);
          if (a.status === 401) throw new CollectorStop(`the central refuses this collector: ${answerMessage(a)}`);
          if (a.status !== 200) {
            log.warn({ status: a.status, problem: answerMessage(a) }, 'lease refused');
            retryAt = Date.now() + pollMs;
            continue;
          }
          const body = a.body as { jobs: Job[]; poll_seconds: number };
          pollMs = body.poll_seconds * 1000;
          ready.push(...body.jobs);
          leaseAgainAt = body.jobs.length < max ? Date.now() + pollMs : 0;
          if (body.jobs.length > 0 || running.size > 0 || outbox.length > 0) continue;
          // A held request that came back empty is asked again at once (at most one a second).
          if (wait) {
            await sleep(Math.max(0, 1000 - (Date.now() - asked)), signal);
            continue;
          }
        }
        // Wait for a job to end, a flush to finish, or the next time something is due.
        const wake = new AbortController();
        const waits: Promise<unknown>[] = [...running];
        if (flushing) waits.push(flushing);
        const at = Date.now();
        const times = [retryAt, outbox.length > 0 ? outboxSince + FLUSH_MS : 0, local > 0 ? leaseAgainAt : 0].filter((t) => t > at);
        waits.push(sleep(Math.min(at + pollMs, ...times) - at, AbortSignal.any([signal, wake.signal])));
        await Promise.race(waits).finally(() => wake.abort(WOKEN));
      } catch (err) {
        if (err instanceof ProtocolMismatch) throw new CollectorStop(err.message);
        if (signal.aborted && err instanceof CentralUnreachable) break;
        if (!unreachable(err)) throw err;
        await sleep(Math.min(pollMs, 5000), signal);
      }
    }
  } finally {
    // Stopping: the jobs leased ahead and not started go back to the central's queue now (another collector of the
    // zone, or this one restarted, takes them) instead of waiting lease_seconds for their leases to run out.
    await releaseUnstarted(client, log, ready.splice(0));
    await Promise.allSettled(running);
    await flushing;
    // What the last jobs collected is sent now, or spooled for the next run.
    await flush().catch((err: unknown) => void unreachable(err));
  }
}

/** Hands leases back unstarted (`release`, protocol 2); a central that cannot be reached lets them run out instead. */
async function releaseUnstarted(client: ClientOptions, log: Logger, jobs: readonly Job[]): Promise<void> {
  if (jobs.length === 0) return;
  const release = jobs.map((j) => j.lease_id).slice(0, MAX_HELD);
  try {
    const a = await centralPost(client, '/lease', { max: 0, release }, AbortSignal.timeout(RELEASE_TIMEOUT_MS));
    if (a.status === 200) log.info({ released: release.length }, 'stopping: leased jobs not started handed back to the queue');
    else log.warn({ status: a.status, problem: answerMessage(a) }, 'stopping: the central refused the leases handed back; they run out instead');
  } catch (err) {
    log.warn({ problem: (err as Error).message }, 'stopping: the central did not take the leases handed back; they run out instead');
  }
}

/** Enrols this site with a one-time token: new key pairs, public halves to the central, the identity saved (0600). */
export async function enrolCollector(
  o: { dataDir: string; central_url: string; token: string; name: string; ca?: Buffer },
  keys: CollectorIdentity['keys'],
): Promise<CollectorIdentity> {
  const a = await centralPost({ central_url: o.central_url, ca: o.ca }, '/enrol', {
    token: o.token,
    name: o.name,
    signing_key: keys.signing_public,
    sealing_key: keys.sealing_public,
    version: VERSION,
  });
  if (a.status !== 201) throw new CollectorStop(`enrolment refused: ${answerMessage(a)}`);
  const r = a.body as { collector_id: number; zone: string };
  return { central_url: o.central_url, collector_id: r.collector_id, name: o.name, zone: r.zone, keys };
}
