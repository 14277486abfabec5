// `confvault collector run`: dial out to the central, lease the zone's due backups, collect with the engine, upload (or spool) the results.
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config';
import { collectConfig } from '../engine/collect';
import { limitsFromConfig } from '../engine/runner';
import { UNREACHABLE_FAILURES, type CollectTarget } from '../engine/types';
import { openSealed, sha256Text, type Sealed } from '../lib/collector-protocol';
import type { TemplateSpec } from '../templates/types';
import { CentralUnreachable, ProtocolMismatch, answerMessage, centralPost, type ClientOptions } from './central-client';
import { loadIdentity, type CollectorIdentity } from './identity';
import { Spool } from './spool';
import { VERSION } from '../version';

interface Job {
  lease_id: string;
  device_id: number;
  device_name: string;
  template: TemplateSpec;
  sealed: Sealed;
}

export class CollectorStop extends Error {}

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
  const cfg = config.collector;
  const client: ClientOptions = {
    central_url: cfg.central_url || id.central_url,
    ca: cfg.ca_file ? readFileSync(cfg.ca_file) : undefined,
    signer: { collector_id: id.collector_id, signing_private: id.keys.signing_private },
  };
  const spool = new Spool(dataDir, cfg.spool_mb * 1024 * 1024);
  const limits = limitsFromConfig(config);
  let pollMs = cfg.poll_seconds * 1000;
  log.info({ collector: id.name, zone: id.zone, central: client.central_url }, 'collector started');

  /** Sends one result; CentralUnreachable when it could not (the caller keeps it). A refusal is logged and dropped. */
  const deliver = async (result: { lease_id: string }): Promise<void> => {
    const a = await centralPost(client, '/results', result);
    if (a.status === 200) {
      const r = a.body as { backup_id: string; duplicate: boolean };
      log.info({ lease_id: result.lease_id, backup_id: r.backup_id, duplicate: r.duplicate }, 'result stored by the central');
    } else if (a.status === 401) {
      throw new CollectorStop(`the central refuses this collector: ${answerMessage(a)}`);
    } else {
      // An expired lease (the backup went back to the queue) or a refused result: keeping it would block the spool.
      log.warn({ lease_id: result.lease_id, status: a.status, problem: answerMessage(a) }, 'result refused by the central, dropped');
    }
  };

  const deliverSpool = async (): Promise<void> => {
    for (const { result, done } of spool.pending()) {
      await deliver(result as { lease_id: string });
      done();
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
    // Results go in order: while older ones wait in the spool, a new one waits behind them.
    if (spool.count() === 0) {
      try {
        await deliver(result);
        return;
      } catch (err) {
        if (!(err instanceof CentralUnreachable)) throw err;
      }
    }
    if (spool.add(result)) log.warn({ lease_id: job.lease_id, spooled: spool.count() }, 'central unreachable: result spooled');
    else log.error({ lease_id: job.lease_id, spool_mb: cfg.spool_mb }, 'spool full: result dropped (the lease expires and the backup is queued again)');
  };

  // collectors-bench (#27): a pool, not a batch. The site keeps `concurrency` jobs running and leases as many as are
  // free each time one ends; waiting for a whole batch left slots idle behind its slowest device (docs/benchmarks.md).
  const running = new Set<Promise<void>>();
  let failed: { err: unknown } | undefined;
  const start = (job: Job) => {
    const p: Promise<void> = runJob(job)
      .catch((err: unknown) => void (failed ??= { err }))
      .finally(() => running.delete(p));
    running.add(p);
  };
  try {
    while (!signal.aborted) {
      try {
        if (failed) throw failed.err;
        // Results go in order: with some spooled, the running jobs end (their results queue behind) before delivery.
        if (running.size > 0 && (spool.count() > 0 || running.size >= cfg.concurrency)) {
          await Promise.race(running);
          continue;
        }
        await deliverSpool();
        const a = await centralPost(client, '/lease', { max: cfg.concurrency - running.size });
        if (a.status === 401) throw new CollectorStop(`the central refuses this collector: ${answerMessage(a)}`);
        if (a.status !== 200) {
          log.warn({ status: a.status, problem: answerMessage(a) }, 'lease refused');
          await sleep(pollMs, signal);
          continue;
        }
        const body = a.body as { jobs: Job[]; poll_seconds: number };
        pollMs = body.poll_seconds * 1000;
        if (body.jobs.length === 0) {
          await (running.size > 0 ? Promise.race(running) : sleep(pollMs, signal));
          continue;
        }
        body.jobs.forEach(start);
      } catch (err) {
        if (err instanceof ProtocolMismatch) throw new CollectorStop(err.message);
        if (!(err instanceof CentralUnreachable)) throw err;
        log.warn({ problem: err.message, spooled: spool.count() }, 'central unreachable, retrying');
        await sleep(Math.min(pollMs, 5000), signal);
      }
    }
  } finally {
    await Promise.allSettled(running);
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
