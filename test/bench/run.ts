// `npm run bench`: performance targets of the public API and the backup engine, printed as tables and written to results.json / RESULTS.md.
import { runReplicationBench } from './replication-bench';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runApiBench } from './api-bench';
import { runSearchBench } from './search-bench';
import { REPO_ROOT, loadAverage, machineInfo, num, row, type Section } from './common';
import { runEngineBench } from './engine-bench';
import { runRedactionBench } from './redaction-bench';
import { runFleetBench } from './fleet-bench';
import { runCollectorsBench } from './collectors-bench';
import { runCliRoundBench } from './cli-round-bench';
import { runHostileBench } from './hostile-bench';
import { runBigCaptureBench } from './big-captures-bench';
import { runLabEventBench, runSyslogBench } from './syslog-bench';
import { runSchedulerBench } from './scheduler-bench';
import { runRuntimeBench } from './runtime-bench';
import { runComplianceBench } from './compliance-bench';
import { runScaleBench } from './scale-bench';
import { printSection, printSummary, writeReport } from './report';
import { CACHE_ROOT, ensureSeededDatabase } from './seed';

const PROFILE_DIR = path.join(CACHE_ROOT, 'profiles');

/** The parts `--only` can name, in the order a full run takes them. */
const PARTS = [
  'api',
  'engine',
  'redaction',
  'scheduler',
  'compliance',
  'fleet',
  'cli',
  'hostile',
  'syslog',
  'big',
  'runtime',
  'scale',
  'replication',
  'collectors',
];

const HELP = `Usage: npm run bench [-- options]

  --only ${PARTS.join('|')}
                      run one part (RESULTS.md is rewritten only by a complete run)
  --baseline EXE      also measure another build of the executable (e.g. one made on the previous Node.js line)
                      beside dist/confvault: size, --version, start-up, API load, side by side (repeatable; with
                      --only runtime, only that part)
  --quick             shorter load runs (1 round of 4 s, 100 timed requests): a smoke test, not a result
  --reseed            throw the cached database away and seed it again (api, scale)
                      (scale: CONFVAULT_BENCH_SCALE_PROBES=REGEX measures only the rows whose label matches)
  --profile           write a CPU profile of the appliance's server process (api, hostile, fleet, big) to ${'$'}{path.relative(REPO_ROOT, PROFILE_DIR)}/
  -h, --help          this help

The seeded API database is cached in ${path.relative(REPO_ROOT, CACHE_ROOT)}/ (keyed by schema/*.sql and the generator).`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      quick: { type: 'boolean' },
      reseed: { type: 'boolean' },
      profile: { type: 'boolean' },
      baseline: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (values.only && !PARTS.includes(values.only)) {
    console.error(`--only takes one of ${PARTS.join(', ')}, not "${values.only}"`);
    return 2;
  }
  const say = (line: string) => console.log(line);
  const began = performance.now();
  const machine = machineInfo();
  const loadStart = loadAverage();
  say(`confvault benchmark, ${machine.date}`);
  say(`machine: ${machine.cpus} CPUs, ${machine.model}, ${machine.memory_gb} GB, Node ${machine.node}; load average ${loadStart} (1/5/15 min)`);
  if (Number(loadStart.split(' / ')[0]) > machine.cpus) {
    say(`!! the machine is busy (load ${loadStart.split(' / ')[0]} on ${machine.cpus} CPUs): expect noisy, pessimistic figures`);
  }

  const sections: Section[] = [];
  let seedInfo: Record<string, unknown> = {};
  if (!values.only || values.only === 'api') {
    if (values.reseed) {
      for (const d of existsSync(CACHE_ROOT) ? readdirSync(CACHE_ROOT) : [])
        if (d.startsWith('api-')) rmSync(path.join(CACHE_ROOT, d), { recursive: true, force: true });
    }
    say('');
    say('-- seeded database');
    const seeded = await ensureSeededDatabase(say);
    const m = seeded.meta;
    const summary = `${num(m.counts.devices)} devices in ${m.counts.groups} groups, ${num(m.counts.backups)} backup records, ${num(m.counts.snapshots)} snapshot files (${m.counts.db_mb} MB database, ${m.counts.snapshots_mb} MB snapshots)`;
    seedInfo = {
      summary,
      cached: !seeded.seededNow,
      dir: path.relative(REPO_ROOT, seeded.dir),
      seeded_at: m.seeded_at,
      seed_seconds: m.seed_seconds,
      phases_seconds: m.phases_seconds,
    };
    say(
      seeded.seededNow
        ? `  seeded in ${m.seed_seconds.toFixed(1)} s`
        : `  cached in ${path.relative(REPO_ROOT, seeded.dir)} (seeded ${m.seeded_at} in ${m.seed_seconds.toFixed(1)} s)`,
    );
    const ageDays = (Date.now() - Date.parse(m.seeded_at)) / 86_400_000;
    sections.push({
      title: 'Seeded database (generator test/bench/seed.ts)',
      rows: [
        row('contents', summary, '10,000 devices, 1.1 M records', m.counts.devices === 10_000 && m.counts.backups === 1_100_000),
        row(
          seeded.seededNow ? 'seeding time (cold)' : 'seeding time (when the cache was built)',
          `${m.seed_seconds.toFixed(1)} s`,
          '< 120 s cold',
          m.seed_seconds < 120,
        ),
      ],
      notes: [
        `records over the year before ${m.seeded_at.slice(0, 10)}; the busy device: ${num(m.big_device_records)} records, ${num(m.big_config_bytes)}-byte configuration.`,
        ...(ageDays > 1
          ? [`the cache is ${ageDays.toFixed(0)} days old: /stats "last 24 hours" now counts fewer records than when it was seeded (--reseed to refresh).`]
          : []),
      ],
    });
    say('');
    say('-- public API');
    const quick = values.quick === true;
    sections.push(await runSearchBench(seeded, say));
    sections.push(
      ...(await runApiBench(seeded, say, {
        connections: 64,
        seconds: quick ? 4 : 8,
        warmupSeconds: quick ? 1 : 3,
        rounds: quick ? 1 : 2,
        iterations: quick ? 100 : 300,
        cpuProfileDir: values.profile ? PROFILE_DIR : undefined,
      })),
    );
  }
  if (!values.only || values.only === 'engine') {
    say('');
    say('-- backup engine');
    sections.push(...(await runEngineBench(say, { devices: 1000, concurrency: 64, storageBackups: 100 })));
  }
  if (!values.only || values.only === 'engine' || values.only === 'redaction') {
    say('');
    say('-- redaction');
    sections.push(runRedactionBench(say));
  }

  if (!values.only || values.only === 'scheduler') {
    say('');
    say('-- scheduler tick (100,000 devices)');
    sections.push(runSchedulerBench(say, { devices: 100_000, rounds: values.quick ? 5 : 20 }));
  }

  if (!values.only || values.only === 'compliance') {
    say('');
    say('-- compliance (every device judged after a rule change; one version judged as it is stored)');
    sections.push(await runComplianceBench(say, { devices: values.quick ? 1000 : 10_000, rules: 100 }));
  }

  if (!values.only || values.only === 'fleet') {
    say('');
    say('-- backup fleet (10,000 devices, every built-in template)');
    const simProcesses = Number(process.env.CONFVAULT_BENCH_SIM_PROCESSES ?? 2);
    sections.push(
      await runFleetBench(say, {
        devices: values.quick ? 1000 : 10_000,
        concurrency: 128,
        simProcesses,
        probeSessions: values.quick ? 5 : 20,
        cpuProfileDir: values.profile ? PROFILE_DIR : undefined,
      }),
    );
  }

  if (!values.only || values.only === 'cli') {
    say('');
    say('-- CLI round (200 Cisco IOS devices, concurrency 16)');
    sections.push(await runCliRoundBench(say, { devices: 200, concurrency: 16 }));
  }

  if (!values.only || values.only === 'big') {
    say('');
    say('-- big configurations (capture post-processing off the event loop)');
    const cpuProfileDir = values.profile ? PROFILE_DIR : undefined;
    sections.push(await runBigCaptureBench(say, values.quick ? { devices: 2, mb: 4, cpuProfileDir } : { devices: 8, mb: 30, cpuProfileDir }));
  }

  if (!values.only || values.only === 'hostile') {
    say('');
    say('-- hostile load (event loop)');
    const only = process.env.CONFVAULT_BENCH_HOSTILE_PARTS;
    const parts = only ? new Set(only.split(',').filter((p): p is 'run' | 'search' | 'diff' => p === 'run' || p === 'search' || p === 'diff')) : undefined;
    sections.push(await runHostileBench(say, { devices: 1000, parts, cpuProfileDir: values.profile ? PROFILE_DIR : undefined }));
  }

  if (!values.only || values.only === 'syslog') {
    say('');
    say('-- syslog flood (event-driven backups)');
    sections.push(await runSyslogBench(say, { rate: 10_000, seconds: values.quick ? 3 : 10, devices: 100, senders: 400 }));
    sections.push(await runLabEventBench(say, values.quick ? 3 : 20));
  }

  if (!values.only || values.only === 'scale') {
    say('');
    say('-- scale of the inventory (100,000 devices, a real serve)');
    sections.push(
      ...(await runScaleBench(say, {
        iterations: values.quick ? 20 : 100,
        reseed: values.reseed,
        only: process.env.CONFVAULT_BENCH_SCALE_PROBES ? new RegExp(process.env.CONFVAULT_BENCH_SCALE_PROBES, 'i') : undefined,
      })),
    );
  }

  if (!values.only || values.only === 'replication') {
    say('');
    say('-- replication (data-loss window, restore time)');
    const quick = values.quick === true;
    sections.push(
      await runReplicationBench(say, {
        versions: quick ? 1000 : 10_000,
        interval: quick ? 2 : 10,
        seconds: quick ? 6 : 40,
        writeEveryMs: 200,
        litestreamTrials: quick ? 2 : 5,
      }),
    );
  }

  if (!values.only || values.only === 'collectors') {
    say('');
    say('-- remote collectors (20 x 500 devices through one central)');
    const quick = values.quick === true;
    sections.push(
      await runCollectorsBench(say, {
        collectors: quick ? 4 : 20,
        devicesPerCollector: quick ? 100 : 500,
        simProcesses: Number(process.env.CONFVAULT_BENCH_SIM_PROCESSES ?? 2),
        timeoutMs: quick ? 120_000 : 300_000,
      }),
    );
  }

  const baselines = values.baseline ?? [];
  if (values.only === 'runtime' || (!values.only && baselines.length)) {
    say('');
    say('-- runtimes side by side');
    const quick = values.quick === true;
    sections.push(await runRuntimeBench(say, { baselines, rounds: quick ? 1 : 3, starts: quick ? 2 : 5, seconds: quick ? 3 : 8, connections: 16 }));
  }

  for (const s of sections) printSection(s, say);
  printSummary(sections, say);
  const loadEnd = loadAverage();
  const total = (performance.now() - began) / 1000;
  const complete = !values.only && !values.quick;
  const files = writeReport({ machine, load_average: { start: loadStart, end: loadEnd }, seed: seedInfo, sections, total_seconds: total }, complete);
  say('');
  say(`load average at the end: ${loadEnd}; whole run ${total.toFixed(0)} s`);
  say(`written: ${files.map((f) => path.relative(REPO_ROOT, f)).join(', ')}${complete ? '' : ' (partial or quick run: RESULTS.md left as it was)'}`);
  // A report, not a gate: missed targets are printed above, the exit code stays 0.
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);
