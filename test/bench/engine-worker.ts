// Child process of the engine benchmark: a fresh appliance in a temp dir backs up every simulated device with BackupRunner; its own peak RSS (VmHWM) is the figure.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { openAppliance, type Appliance } from '../../src/app/bootstrap';
import { createLogger } from '../../src/lib/logger';
import { loadConfig } from '../../src/config/config';
import { BackupRunner, limitsFromConfig } from '../../src/engine/runner';
import { collectConfig } from '../../src/engine/collect';
import { loadBackupPlan } from '../../src/features/backups/backup-engine.service';
import { getBackupRow, readBackupText } from '../../src/features/backups/backups.service';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { isEntryPoint, reportFatal, sendToParent } from './common';

/** What test/sim/run-sim.ts prints when it is ready. */
export interface SimInfo {
  host: string;
  port: number;
  /** `port`: the simulator process serving this device, when several serve one fleet (else the top-level port). */
  devices: { name: string; template: string; password: string; enable_secret: string | null; port?: number }[];
}

export interface EngineJob {
  sim: SimInfo;
  concurrency: number;
  /** After the run: this many single sessions (collect alone, one at a time) with the first device of this template. */
  sessionProbe?: { template: string; times: number };
  /** A data dir the caller owns (kept); with deviceIds, already seeded by a `seedOnly` job in another process. */
  dataDir?: string;
  deviceIds?: number[];
  seedOnly?: boolean;
}

export function isSeeded(m: unknown): m is { seeded: number[] } {
  return !!m && typeof m === 'object' && 'seeded' in m;
}

export interface EngineResult {
  devices: number;
  concurrency: number;
  wall_ms: number;
  succeeded: number;
  failures: Record<string, number>;
  attempts: number;
  distinct_texts: number;
  texts_with_own_hostname: number;
  max_rss_mb: number;
  rss_before_run_mb: number;
  /** Largest values seen by a 50 ms sampler during the run (which part of the memory grew). */
  sampled_peak_mb: { rss: number; heap_used: number; external: number; array_buffers: number; at_s: number };
  cpu_user_s: number;
  cpu_system_s: number;
  /** perf_hooks.monitorEventLoopDelay over the run (10 ms resolution). */
  event_loop_delay_ms: { p50: number; p99: number; max: number };
  /** Durations of the probe's single sessions (connect, login, commands, logout), in order. */
  session_probe_ms: number[];
}

export function isEngineJob(m: unknown): m is { engine: EngineJob } {
  return !!m && typeof m === 'object' && 'engine' in m;
}

export function isEngineResult(m: unknown): m is { engineResult: EngineResult } {
  return !!m && typeof m === 'object' && 'engineResult' in m;
}

/**
 * This process's peak RSS in bytes. Linux keeps getrusage's maxRSS (process.resourceUsage) across fork and exec,
 * so a child started by a large parent reports the parent's size; VmHWM belongs to this process's own memory map.
 */
function peakRss(): number {
  try {
    const kb = /^VmHWM:\s*(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (kb) return Number(kb) * 1024;
  } catch {
    /* no /proc: fall back below */
  }
  return process.resourceUsage().maxRSS * 1024;
}

function configFor(dir: string, concurrency: number) {
  // The appliance's defaults (timeouts, retries, compression, log level info to stdout) with the benchmark's concurrency.
  return loadConfig({ dataDir: path.join(dir, 'data') }, { CONFVAULT_LOG_LEVEL: 'info', CONFVAULT_BACKUP_CONCURRENCY: String(concurrency) });
}

/** Adds the simulated devices with their credentials; their ids in the simulator's order. */
function seedFleet(a: Appliance, sim: SimInfo): number[] {
  const { db, secrets } = a;
  return db.transaction(() =>
    sim.devices.map((d) => {
      const credential_id = seedCredential(db, secrets, {
        name: `cred-${d.name}`,
        username: d.name,
        password: d.password,
        ...(d.enable_secret ? { enable_secret: d.enable_secret } : {}),
      });
      return seedDevice(db, {
        name: d.name,
        hostname: sim.host,
        port: d.port ?? sim.port,
        credential_id,
        template_id: seedBuiltinTemplate(db, d.template),
      });
    }),
  )();
}

/** Seeds a data dir in this process and exits: the run then starts in a fresh process, as a server that has its devices. */
function seedOnly(job: EngineJob & { dataDir: string }): number[] {
  const a = openAppliance({}, configFor(job.dataDir, job.concurrency));
  try {
    return seedFleet(a, job.sim);
  } finally {
    a.close();
  }
}

async function run(job: EngineJob): Promise<EngineResult> {
  const dir = job.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'confvault-bench-engine-'));
  try {
    const config = configFor(dir, job.concurrency);
    const a = openAppliance({}, config);
    const { db, secrets, snapshots } = a;
    const ids = job.deviceIds ?? seedFleet(a, job.sim);
    const runner = new BackupRunner({ db, secrets, snapshots, config, log: createLogger(config.log.level) });
    const rssBefore = process.memoryUsage().rss;
    const cpuBefore = process.cpuUsage();
    const start = performance.now();
    const peak = { rss: 0, heap_used: 0, external: 0, array_buffers: 0, at_s: 0 };
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      if (m.rss > peak.rss) Object.assign(peak, { rss: m.rss, at_s: (performance.now() - start) / 1000 });
      peak.heap_used = Math.max(peak.heap_used, m.heapUsed);
      peak.external = Math.max(peak.external, m.external);
      peak.array_buffers = Math.max(peak.array_buffers, m.arrayBuffers);
    }, 50);
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const results = await runner.run(ids, { trigger: 'schedule' });
    const wall = performance.now() - start;
    loopDelay.disable();
    clearInterval(sampler);
    const cpu = process.cpuUsage(cpuBefore);
    const maxRss = peakRss();

    const failures: Record<string, number> = {};
    let ownHostname = 0;
    for (const r of results) {
      if (!r.success) failures[r.failure ?? 'UNKNOWN'] = (failures[r.failure ?? 'UNKNOWN'] ?? 0) + 1;
      else {
        const text = readBackupText(snapshots, null, getBackupRow(db, r.backupId!)!);
        if (text?.includes(r.deviceName)) ownHostname++;
      }
    }
    const sessionProbe: number[] = [];
    const probe = job.sessionProbe;
    const probeIndex = probe ? job.sim.devices.findIndex((d) => d.template === probe.template) : -1;
    if (probe && probeIndex >= 0) {
      const devicePlan = loadBackupPlan(db, secrets, ids[probeIndex])!;
      for (let i = 0; i < probe.times; i++) {
        const t0 = performance.now();
        const r = await collectConfig(devicePlan.target, devicePlan.template, limitsFromConfig(config), {
          redact_key: config.backup.redact_secrets ? secrets.redactionKey : null,
        });
        if (!r.ok) throw new Error(`session probe of ${devicePlan.deviceName}: ${r.failure} ${r.message}`);
        sessionProbe.push(performance.now() - t0);
      }
    }
    const distinct = db.prepare('SELECT count(DISTINCT config_snapshot_hash) FROM backups WHERE success = 1').pluck().get() as number;
    a.close();
    return {
      devices: ids.length,
      concurrency: config.backup.concurrency,
      wall_ms: wall,
      succeeded: results.filter((r) => r.success).length,
      failures,
      attempts: results.reduce((s, r) => s + r.attempts, 0),
      distinct_texts: distinct,
      texts_with_own_hostname: ownHostname,
      max_rss_mb: maxRss / 2 ** 20,
      rss_before_run_mb: rssBefore / 2 ** 20,
      sampled_peak_mb: {
        rss: peak.rss / 2 ** 20,
        heap_used: peak.heap_used / 2 ** 20,
        external: peak.external / 2 ** 20,
        array_buffers: peak.array_buffers / 2 ** 20,
        at_s: peak.at_s,
      },
      cpu_user_s: cpu.user / 1e6,
      cpu_system_s: cpu.system / 1e6,
      event_loop_delay_ms: { p50: loopDelay.percentile(50) / 1e6, p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 },
      session_probe_ms: sessionProbe,
    };
  } finally {
    if (!job.dataDir) rmSync(dir, { recursive: true, force: true });
  }
}

if (isEntryPoint(import.meta.url)) {
  process.once('message', (m: unknown) => {
    if (!isEngineJob(m)) return reportFatal(new Error('expected an engine job'));
    const job = m.engine;
    if (job.seedOnly) {
      if (!job.dataDir) return reportFatal(new Error('a seedOnly job needs its dataDir'));
      return void sendToParent({ seeded: seedOnly({ ...job, dataDir: job.dataDir }) }).then(() => process.exit(0), reportFatal);
    }
    run(job)
      .then((engineResult) => sendToParent({ engineResult }))
      .then(() => process.exit(0), reportFatal);
  });
}
