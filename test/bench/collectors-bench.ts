// `npm run bench -- --only collectors`: one central `serve`, N `confvault collector run` children (one zone each), M simulated devices per zone, all due at once.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openAppliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { leaveZonedToCollectors } from '../../src/features/collectors/collector-work.service';
import { searchIndexBacklog } from '../../src/features/configs/search-index.service';
import { listCollectors } from '../../src/features/collectors/collectors.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { setDeviceZoneRow } from '../../src/features/collectors/collectors.store';
import { spawnConfvault } from '../collectors/harness';
import { runCliAsync, spawnServe } from '../helpers/appliance';
import { REPO_ROOT, forkBench, loadAverage, ms, nextMessage, num, percentile, processCpuSeconds, row, stopChild, type Section } from './common';
import { builtinTranscripts, startSimulators } from './fleet-bench';
import { isSeeded, type EngineJob } from './engine-worker';

export interface CollectorsBenchOptions {
  collectors: number;
  devicesPerCollector: number;
  simProcesses: number;
  /** Give up after this long (the run is reported as it stood). */
  timeoutMs: number;
}

/** Peak resident set (VmHWM) of a process, in MB. */
function peakRssMb(pid: number): number | null {
  const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : null;
}

async function cli(args: string[], input?: string): Promise<string> {
  const r = await runCliAsync(args, { input });
  if (r.status !== 0) throw new Error(`confvault ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** Runs `fn` over `items`, `width` at a time (CLI children on a 2-core machine). */
async function inBatches<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(fn));
}

/**
 * The central and the sites run as shipped: one bundle of src/ (build/cli-bundle.mjs, the executable's settings) and the
 * worker bundles made once (build/worker-bundles.mjs), as test/run.sh does, not src/ through tsx's loader hooks with
 * each of the 21 processes bundling its worker code first. A caller's TEST_CLI_BUNDLE is kept.
 */
function runAsShipped(say: (line: string) => void): void {
  const artifacts = path.join(REPO_ROOT, 'test/.artifacts');
  if (!process.env.TEST_CLI_BUNDLE) {
    process.env.TEST_CLI_BUNDLE = path.join(artifacts, 'confvault-cli.cjs');
    execFileSync(process.execPath, [path.join(REPO_ROOT, 'build/cli-bundle.mjs'), process.env.TEST_CLI_BUNDLE], { stdio: 'inherit' });
  }
  if (!process.env.CONFVAULT_WORKER_BUNDLES) {
    process.env.CONFVAULT_WORKER_BUNDLES = path.join(artifacts, 'workers-bench');
    execFileSync(process.execPath, [path.join(REPO_ROOT, 'build/worker-bundles.mjs'), process.env.CONFVAULT_WORKER_BUNDLES], { stdio: 'ignore' });
  }
  // The executable starts from V8's code cache (build/build.mjs); from the bundle, Node's compile cache does the same.
  process.env.NODE_COMPILE_CACHE ??= path.join(artifacts, 'compile-cache');
  say(
    `  central and sites run from ${path.relative(REPO_ROOT, process.env.TEST_CLI_BUNDLE)} (worker bundles: ${path.relative(REPO_ROOT, process.env.CONFVAULT_WORKER_BUNDLES)})`,
  );
}

/**
 * The simulators and the collectors stand in for other machines (the devices, and the sites' hosts): on this one host
 * they run at a lower priority, so the central gets the share of a CPU it would have on its own machine instead of a
 * 23rd of two. Every process's CPU time is still spent on the same two cores and reported. At equal priority the
 * central fell behind while 22 processes took their fair shares, and stored the last results alone after the sites
 * were done, a core idle (docs/benchmarks.md).
 */
const STAND_IN = ['nice', '-n', '10'];

export async function runCollectorsBench(say: (line: string) => void, o: CollectorsBenchOptions): Promise<Section> {
  runAsShipped(say);
  const total = o.collectors * o.devicesPerCollector;
  const { files } = builtinTranscripts();
  const sims = await startSimulators(total, o.simProcesses, files, STAND_IN);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'confvault-bench-collectors-'));
  const dataDir = path.join(dir, 'data');
  const children = new Set<ChildProcess>();
  let serve: Awaited<ReturnType<typeof spawnServe>> | undefined;
  try {
    say(`  ${o.simProcesses} simulator processes ready: ${num(sims.info.devices.length)} devices`);
    const seeder = forkBench('engine-worker.ts');
    let deviceIds: number[];
    try {
      const seeded = nextMessage(seeder, isSeeded, 300_000);
      seeder.send({ engine: { sim: sims.info, concurrency: 8, dataDir: dir, seedOnly: true } satisfies EngineJob });
      deviceIds = (await seeded).seeded;
    } finally {
      await stopChild(seeder);
    }
    const zones = Array.from({ length: o.collectors }, (_, i) => `bench-${i + 1}`);
    const a = openAppliance({}, loadConfig({ dataDir }, {}));
    try {
      a.db.transaction(() => deviceIds.forEach((id, i) => setDeviceZoneRow(a.db, id, zones[Math.floor(i / o.devicesPerCollector)])))();
      // A schedule that does not fire during the run: the bench queues every device itself, at one instant.
      serve = await spawnServe(['--data-dir', dataDir, '--listen', '127.0.0.1:0'], { CONFVAULT_BACKUP_SCHEDULE: '0 0 1 1 *' });
      const central = serve.url;
      const pid = serve.child.pid!;
      await inBatches(zones, 4, async (zone) => {
        const token = (await cli(['collector', 'token', 'create', '--zone', zone, '--data-dir', dataDir])).trim();
        await cli(['collector', 'enrol', '--central', central, '--name', zone, '--data-dir', path.join(dir, 'sites', zone)], token + '\n');
      });
      const launched = Date.now();
      const runs = zones.map((zone) =>
        spawnConfvault(['collector', 'run', '--data-dir', path.join(dir, 'sites', zone)], children, { CONFVAULT_LOG_LEVEL: 'warn' }, STAND_IN),
      );
      const poll = loadConfig({ dataDir }, {}).collector.poll_seconds;
      // Every collector has asked for work once (and found none): from here each asks again within its poll interval.
      const seenAll = Date.now() + 120_000;
      while (listCollectors(a.db, SYSTEM_ACTOR, 60_000).some((c) => c.last_seen_at === null || c.last_seen_at < launched) && Date.now() < seenAll) {
        await new Promise((r) => setTimeout(r, 250));
      }
      say(`  ${o.collectors} collectors enrolled and polling (poll_seconds ${poll}); queueing ${num(total)} devices at once`);

      const countDone = a.db.prepare("SELECT success, count(*) AS n FROM backups WHERE trigger = 'schedule' AND finished_at IS NOT NULL GROUP BY success");
      const siteCpu = () => runs.reduce((sum, r) => sum + (processCpuSeconds(r.child.pid!) ?? 0), 0);
      const cpuBefore = processCpuSeconds(pid) ?? 0;
      const siteCpuBefore = siteCpu();
      const simCpu = () => sims.children.reduce((sum, c) => sum + (processCpuSeconds(c.pid!) ?? 0), 0);
      const simCpuBefore = simCpu();
      const start = performance.now();
      const queuedAt = Date.now();
      leaveZonedToCollectors(a.db, deviceIds, 'schedule', queuedAt);
      let ok = 0;
      let failed = 0;
      let firstMs = NaN;
      /** When half, nine in ten and all of the results were in (the last tenth shows the tail). */
      const reached = new Map<number, number | null>([
        [0.5, null],
        [0.9, null],
        [1, null],
      ]);
      const deadline = start + o.timeoutMs;
      while (ok + failed < total && performance.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        const counts = countDone.all() as { success: number; n: number }[];
        ok = counts.find((c) => c.success === 1)?.n ?? 0;
        failed = counts.find((c) => c.success === 0)?.n ?? 0;
        if (ok + failed > 0 && Number.isNaN(firstMs)) firstMs = performance.now() - start;
        for (const [share, at] of reached) if (at === null && ok + failed >= share * total) reached.set(share, (performance.now() - start) / 1000);
      }
      const wall = (performance.now() - start) / 1000;
      const cpu = (processCpuSeconds(pid) ?? 0) - cpuBefore;
      const sitesCpu = siteCpu() - siteCpuBefore;
      const simsCpu = simCpu() - simCpuBefore;
      // The search index's upkeep steps back while results are being recorded (search-index.service): the work it
      // left is timed here, after the last result, with the central's CPU meanwhile.
      const indexStart = performance.now();
      while (searchIndexBacklog(a.db) > 0 && performance.now() - indexStart < 180_000) await new Promise((r) => setTimeout(r, 250));
      const indexBacklog = searchIndexBacklog(a.db);
      const indexS = (performance.now() - indexStart) / 1000;
      const indexCpu = (processCpuSeconds(pid) ?? 0) - cpuBefore - cpu;
      const hwm = peakRssMb(pid);
      const sessions = a.db.prepare("SELECT duration_ms FROM backups WHERE trigger = 'schedule' AND success = 1").pluck().all() as number[];
      const load = loadAverage();
      // When each zone's last result was collected (a record's finished_at is the site's start plus its session time):
      // against when the central stored it, this tells a site that finished late from a central that fell behind.
      const lasts = (
        a.db
          .prepare(
            "SELECT max(b.finished_at) FROM backups b JOIN devices d ON d.id = b.device_id WHERE b.trigger = 'schedule' AND b.finished_at IS NOT NULL GROUP BY d.zone",
          )
          .pluck()
          .all() as number[]
      ).map((t) => (t - queuedAt) / 1000);
      const alive = runs.filter((r) => r.child.exitCode === null).length;
      // A site whose request the central did not answer in time spools its results and sends them again later.
      const spooling = runs.filter((r) => r.output().includes('central unreachable')).length;
      // Every signed request leaves one nonce row (kept 10 minutes, longer than a run): leases, results and idle polls.
      const requests = a.db.prepare('SELECT count(*) FROM collector_nonces WHERE seen_at >= ?').pluck().get(queuedAt) as number;
      const done = ok + failed === total;
      const perDevice = (seconds: number) => `${((seconds * 1000) / Math.max(1, ok + failed)).toFixed(1)} ms`;
      return {
        title: `Remote collectors: ${o.collectors} \`collector run\` children x ${num(o.devicesPerCollector)} simulated devices = ${num(total)}, one central \`serve\``,
        rows: [
          row(
            'wall time, every device stored centrally',
            done
              ? `${wall.toFixed(1)} s (${(total / wall).toFixed(0)} devices/s; first result after ${(firstMs / 1000).toFixed(1)} s)`
              : `not done after ${wall.toFixed(0)} s`,
            '< 60 s',
            done && wall < 60,
            { wall_s: wall, first_result_s: firstMs / 1000 },
          ),
          row('backups recorded successfully', `${num(ok)} / ${num(total)} (${num(failed)} failed)`, 'all', ok === total),
          row('central CPU time (serve, user+sys)', `${cpu.toFixed(1)} s (${((cpu / wall) * 100).toFixed(0)}% of one core)`, 'report only', null),
          row(
            'collectors\u2019 CPU time (all sites, user+sys)',
            `${sitesCpu.toFixed(1)} s (${((sitesCpu / wall) * 100).toFixed(0)}% of one core)`,
            'report only',
            null,
          ),
          row(
            'simulators\u2019 CPU time (the devices, user+sys)',
            `${simsCpu.toFixed(1)} s (${((simsCpu / wall) * 100).toFixed(0)}% of one core)`,
            'report only',
            null,
          ),
          row(
            'CPU time per stored device (central + sites + simulators)',
            `${perDevice(cpu)} + ${perDevice(sitesCpu)} + ${perDevice(simsCpu)} = ${perDevice(cpu + sitesCpu + simsCpu)}`,
            'report only',
            null,
            {
              central_ms: (cpu * 1000) / Math.max(1, ok + failed),
              sites_ms: (sitesCpu * 1000) / Math.max(1, ok + failed),
              sims_ms: (simsCpu * 1000) / Math.max(1, ok + failed),
            },
          ),
          row(
            'device session time at the site',
            sessions.length ? `median ${ms(percentile(sessions, 50))}, p95 ${ms(percentile(sessions, 95))}` : 'n/a',
            'report only',
            null,
          ),
          row(
            'signed requests to the central (leases, result batches, polls)',
            `${num(requests)} (${(requests / Math.max(1, ok + failed)).toFixed(2)} per stored device)`,
            'report only',
            null,
            { requests },
          ),
          row(
            'search index current after the last result (background upkeep)',
            indexBacklog === 0
              ? `${indexS.toFixed(1)} s later; central CPU meanwhile ${indexCpu.toFixed(1)} s (${perDevice(indexCpu)} per device)`
              : `${num(indexBacklog)} devices still stale after ${indexS.toFixed(0)} s`,
            'report only',
            null,
            { index_s: indexS, index_cpu_s: indexCpu, index_backlog: indexBacklog },
          ),
          row('central peak RSS (VmHWM)', hwm === null ? 'n/a' : `${hwm.toFixed(0)} MB`, 'report only', null),
          row('collectors that found the central unreachable (results spooled, sent again)', `${spooling} of ${o.collectors}`, 'report only', null, {
            spooling,
          }),
          row(
            'results stored by',
            [...reached].map(([share, at]) => `${share * 100} % at ${at === null ? '-' : at.toFixed(1) + ' s'}`).join(', '),
            'report only',
            null,
            Object.fromEntries([...reached].map(([share, at]) => [`p${share * 100}_s`, at])),
          ),
          row(
            'each collector\u2019s last result collected at its site, after queueing',
            lasts.length
              ? `first zone done ${Math.min(...lasts).toFixed(1)} s, median ${percentile(lasts, 50).toFixed(1)} s, last ${Math.max(...lasts).toFixed(1)} s (${alive}/${o.collectors} collectors still running)`
              : 'n/a',
            'report only',
            null,
            { zone_done_s: lasts },
          ),
        ],
        notes: [
          `one \`serve\` child on a temp data dir (devices added beforehand by another process, each zone's ${num(o.devicesPerCollector)} in one zone), ${o.collectors} \`confvault collector run\` children enrolled with tokens made by \`confvault collector token create\`, the site defaults (concurrency 8, poll_seconds ${poll}, idle lease requests held by the central up to 5 s); ${o.simProcesses} simulator processes (test/sim/run-sim.ts) serve the devices; simulators and collectors at nice 10 (stand-ins for other machines); every device queued at one instant once every collector had polled; load average after: ${load}.`,
        ],
      };
    } finally {
      a.close();
    }
  } finally {
    await Promise.all([...children].map((c) => stopChild(c)));
    if (serve) await serve.stop();
    await Promise.all(sims.children.map((c) => stopChild(c)));
    rmSync(dir, { recursive: true, force: true });
  }
}
