// Runtimes side by side: this tree's dist/confvault and other builds of it (--baseline EXE, e.g. one made on the previous
// Node.js line) measured in one run, rounds interleaved: size, --version, start to the first /healthz answer, API load.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isLoadResult, type LoadJob } from './load-worker';
import { REPO_ROOT, forkBench, ms, nextMessage, num, percentile, row, stopChild, type Row, type Section } from './common';

export const OWN_EXE = path.join(REPO_ROOT, 'dist/confvault');

interface Exe {
  file: string;
  dir: string;
  key: string;
  runtime: string;
  label: string;
  version_ms: number[];
  start_ms: number[];
  runs: { rps: number; p99_ms: number }[];
}

/** The Node.js version inside an executable: its --version says so since the move to Node 24; older builds carry the source URL. */
function runtimeOf(file: string, versionLine: string): string {
  const said = /\(Node\.js (v\d+\.\d+\.\d+)\)/.exec(versionLine)?.[1];
  if (said) return said;
  return /node-(v\d+\.\d+\.\d+)\.tar\.gz/.exec(readFileSync(file).toString('latin1'))?.[1] ?? 'unknown';
}

function prepare(file: string, index: number): Exe {
  if (!existsSync(file)) throw new Error(`${file} does not exist${file === OWN_EXE ? ' (npm run build)' : ''}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'confvault-bench-runtime-'));
  const env = { PATH: '/usr/bin:/bin', HOME: dir };
  const run = (args: string[]) => {
    const r = spawnSync(file, [...args, '--data-dir', path.join(dir, 'data')], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`${file} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  const versionLine = spawnSync(file, ['--version'], { env, encoding: 'utf8' }).stdout.trim();
  run(['init']);
  const key = run(['apikey', 'create', 'admin']).split('\n').pop()!;
  const runtime = runtimeOf(file, versionLine);
  const label = `${index === 0 ? 'this build' : `baseline ${index}`}, Node.js ${runtime}`;
  return { file, dir, key, runtime, label, version_ms: [], start_ms: [], runs: [] };
}

/** Starts `serve` on a free port; resolves once /healthz answers 200, with the time from spawn to that answer. */
async function startServer(exe: Exe): Promise<{ child: ChildProcess; url: string; ms: number }> {
  const t0 = performance.now();
  const child = spawn(exe.file, ['serve', '--data-dir', path.join(exe.dir, 'data'), '--listen', '127.0.0.1:0'], {
    cwd: exe.dir,
    // The default log level: the URL comes from the "confvault listening" line; stdout is read to its end (a line per request).
    env: { PATH: '/usr/bin:/bin', HOME: exe.dir },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${exe.file} serve did not print its URL within 60 s`)), 60_000);
      child.stdout.on('data', (d) => {
        if (out.length < 100_000) out += d;
        const m = /"url":"(http:\/\/[^"]+)"/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      child.once('exit', (code) => reject(new Error(`${exe.file} serve exited (${code})`)));
    });
    for (let i = 0; i < 600; i++) {
      const ok = await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return { child, url, ms: performance.now() - t0 };
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(`${exe.file}: /healthz never answered 200`);
  } catch (e) {
    await stopChild(child);
    throw e;
  }
}

export async function runRuntimeBench(
  say: (line: string) => void,
  o: { baselines: string[]; rounds: number; starts: number; seconds: number; connections: number },
): Promise<Section> {
  const exes = [OWN_EXE, ...o.baselines].map((f, i) => prepare(path.resolve(f), i));
  const worker = forkBench('load-worker.ts');
  const children: ChildProcess[] = [];
  try {
    for (let round = 1; round <= o.rounds; round++) {
      for (const exe of exes) {
        for (let i = 0; i < 5; i++) {
          const t0 = performance.now();
          spawnSync(exe.file, ['--version'], { env: { PATH: '/usr/bin:/bin' } });
          exe.version_ms.push(performance.now() - t0);
        }
        for (let i = 0; i < o.starts; i++) {
          const s = await startServer(exe);
          exe.start_ms.push(s.ms);
          await stopChild(s.child);
        }
        const s = await startServer(exe);
        children.push(s.child);
        const job: LoadJob = { url: s.url, paths: ['/api/v1/devices'], headers: { 'X-API-Key': exe.key }, connections: o.connections, seconds: o.seconds };
        const answer = nextMessage(worker, isLoadResult, (o.seconds + 60) * 1000);
        worker.send({ load: job });
        const r = (await answer).result;
        if (r.non2xx || r.errors) throw new Error(`${exe.label}: ${r.non2xx} non-2xx answers, ${r.errors} errors under load`);
        exe.runs.push({ rps: r.rps, p99_ms: r.p99_ms });
        await stopChild(s.child);
        say(
          `  round ${round} ${exe.label}: --version ${ms(percentile(exe.version_ms, 50))}, start ${ms(percentile(exe.start_ms, 50))}, ` +
            `GET /api/v1/devices ${num(r.rps)} req/s p99 ${ms(r.p99_ms)}`,
        );
      }
    }
  } finally {
    await Promise.all([...children, worker].map((c) => stopChild(c)));
    for (const exe of exes) rmSync(exe.dir, { recursive: true, force: true });
  }
  const side = (f: (e: Exe) => string) => exes.map((e) => `${e.runtime}: ${f(e)}`).join(' | ');
  const best = (e: Exe) => e.runs.reduce((a, b) => (b.rps > a.rps ? b : a));
  const rows: Row[] = [
    row('runtime', exes.map((e) => `${e.label} (${e.file.startsWith(REPO_ROOT) ? path.relative(REPO_ROOT, e.file) : e.file})`).join(' | '), '-', null),
    row(
      'executable size',
      side((e) => `${(statSync(e.file).size / 1e6).toFixed(1)} MB`),
      '-',
      null,
    ),
    row(
      '--version (median)',
      side((e) => ms(percentile(e.version_ms, 50))),
      '-',
      null,
    ),
    row(
      'spawn to first /healthz 200 (median)',
      side((e) => ms(percentile(e.start_ms, 50))),
      '-',
      null,
    ),
    row(
      `GET /api/v1/devices, ${o.connections} connections (best round)`,
      side((e) => `${num(best(e).rps)} req/s, p99 ${ms(best(e).p99_ms)}`),
      '-',
      null,
      {
        runtimes: exes.map((e) => ({ runtime: e.runtime, file: e.file, version_ms: e.version_ms, start_ms: e.start_ms, runs: e.runs })),
      },
    ),
  ];
  return {
    title: 'Runtimes side by side (dist/confvault and --baseline executables)',
    rows,
    notes: [
      `each executable alone with a fresh data dir (init, one API key, no devices); ${o.rounds} round(s) interleaved, ` +
        `${o.starts} start(s) and ${o.seconds} s of load per round; the fleet and API sections above run on this tree's runtime only.`,
    ],
  };
}
