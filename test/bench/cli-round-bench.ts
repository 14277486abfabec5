// A CLI round (issue #29): `confvault backup run --all` of 200 simulated Cisco IOS devices at concurrency 16, as an operator runs it; its peak RSS and wall time.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, forkBench, loadAverage, nextMessage, row, stopChild, type Section } from './common';
import { startSimulator } from './engine-bench';
import { isSeeded, type EngineJob } from './engine-worker';

const BENCH_DIR = path.join(REPO_ROOT, 'test/bench');

/** One measured CLI process: the bundle the executable is built from, the preload reporting its VmHWM. */
interface Measured {
  /** MiB: peak RSS, and the largest V8 heap (total, used) and external memory sampled. */
  mem: { rss: number; heap_total: number; heap_used: number; external: number };
  wall_s: number;
  stdout: string;
  status: number | null;
}

function measure(bundle: string, args: string[], env: NodeJS.ProcessEnv, nodeFlags: string[] = []): Measured {
  const rssFile = path.join(os.tmpdir(), `confvault-bench-rss-${process.pid}`);
  const start = performance.now();
  const r = spawnSync(process.execPath, [...nodeFlags, '--require', path.join(BENCH_DIR, 'cli-rss-preload.cjs'), bundle, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env, CONFVAULT_BENCH_RSS_FILE: rssFile },
    encoding: 'utf8',
    timeout: 600_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const wall_s = (performance.now() - start) / 1000;
  const mem = JSON.parse(readFileSync(rssFile, 'utf8')) as Measured['mem'];
  rmSync(rssFile, { force: true });
  return { mem, wall_s, stdout: r.stdout, status: r.status };
}

export async function runCliRoundBench(say: (line: string) => void, o: { devices: number; concurrency: number }): Promise<Section> {
  const sim = await startSimulator(o.devices, ['--transcripts', path.join(REPO_ROOT, 'test/sim/transcripts/cisco-ios.json')]);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'confvault-bench-cli-'));
  try {
    const seeder = forkBench('engine-worker.ts');
    try {
      const seeded = nextMessage(seeder, isSeeded, 120_000);
      seeder.send({ engine: { sim: sim.info, concurrency: o.concurrency, dataDir: dir, seedOnly: true } satisfies EngineJob });
      await seeded;
    } finally {
      await stopChild(seeder);
    }
    const bundle = path.join(REPO_ROOT, 'build/.tmp/bench-cli.cjs');
    execFileSync(process.execPath, [path.join(REPO_ROOT, 'build/cli-bundle.mjs'), bundle, '--cli-only'], { cwd: REPO_ROOT });
    const env = { CONFVAULT_BACKUP_CONCURRENCY: String(o.concurrency), CONFVAULT_LOG_LEVEL: 'warn' };
    const data = ['--data-dir', path.join(dir, 'data')];
    say(`  simulator ready: ${o.devices} cisco-ios devices; running the CLI`);
    const idle = measure(bundle, ['device', 'list', ...data], env);
    const round = measure(bundle, ['backup', 'run', '--all', ...data], env);
    const second = measure(bundle, ['backup', 'run', '--all', ...data], env);
    const smallYoung = measure(bundle, ['backup', 'run', '--all', ...data], env, ['--max-semi-space-size=1']);
    const mib = (m: Measured) =>
      `${m.mem.rss.toFixed(0)} MiB (V8 heap ${m.mem.heap_total.toFixed(0)}, of it used ${m.mem.heap_used.toFixed(0)}; external ${m.mem.external.toFixed(0)})`;
    const ok = (s: string) => s.split('\n').filter((l) => l.split('\t')[2] === 'ok').length;
    const changed = (s: string) => s.split('\n').filter((l) => l.split('\t')[3] === 'changed').length;
    return {
      title: `CLI round: confvault backup run --all, ${o.devices} simulated Cisco IOS devices, concurrency ${o.concurrency}`,
      rows: [
        row('peak RSS of the CLI process (first round)', mib(round), 'report only', null, { ...round, stdout: undefined }),
        row('peak RSS of the CLI process (second round)', mib(second), 'report only', null),
        row('the same round, node --max-semi-space-size=1', `${mib(smallYoung)}, ${smallYoung.wall_s.toFixed(2)} s`, 'report only', null),
        row('peak RSS of confvault device list (start-up floor)', `${idle.mem.rss.toFixed(0)} MiB`, 'report only', null),
        row('wall time of the first round', `${round.wall_s.toFixed(2)} s (${ok(round.stdout)} ok)`, 'report only', null),
        row('second round: devices reported changed', `${changed(second.stdout)} of ${ok(second.stdout)} ok`, '0', changed(second.stdout) === 0),
      ],
      notes: [
        `the CLI bundle (build/cli-bundle.mjs, the executable's esbuild settings) started as a child, its own VmHWM read at exit (test/bench/cli-rss-preload.cjs); devices added beforehand by another process; one simulator process (test/sim/run-sim.ts); load average after: ${loadAverage()}.`,
        'V8 heap and external: the largest values a 20 ms sampler saw. --max-semi-space-size=1 caps the young generation (16 MiB semi-spaces by default), where a round of short-lived session strings piles up; v8.setFlagsFromString at run time does not resize it, so it has to be a start-up flag (docs/benchmarks.md).',
      ],
    };
  } finally {
    await stopChild(sim.child);
    rmSync(dir, { recursive: true, force: true });
  }
}
