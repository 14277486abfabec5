// A/B of the history target across checkouts: one appliance server per checkout, all running at once, the load
// rounds interleaved, so background noise falls on each alike. For "did this change move the figure?", which one
// `npm run bench` run per checkout cannot answer on a shared machine (two runs of one commit differ by 10 %).
//
//   node --import tsx test/bench/ab.ts [--rounds 6] [--seconds 4] NAME=CHECKOUT NAME=CHECKOUT ...
//
// Each CHECKOUT is a repository folder whose own `npm run bench -- --only api` has seeded its .bench-cache; its own
// test/bench/api-server.ts serves its own cached data. A checkout may be named twice to see the spread of one build.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { nextMessage, num, processCpuSeconds, TSX_LOADER } from './common';
import { isLoadResult } from './load-worker';

interface Server {
  name: string;
  child: ChildProcess;
  url: string;
  key: string;
  paths: string[];
  cpu: number[];
  rps: number[];
}

const isUrl = (m: unknown): m is { url: string } => !!m && typeof m === 'object' && 'url' in m;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function startServer(name: string, checkout: string): Promise<Server> {
  const dir = path.resolve(checkout);
  const cacheRoot = path.join(dir, '.bench-cache');
  const cache = readdirSync(cacheRoot).find((d) => d.startsWith('api-') && !d.includes('.partial'));
  if (!cache) throw new Error(`${name}: no seeded database in ${cacheRoot}; run \`npm run bench -- --only api\` there first`);
  const meta = JSON.parse(readFileSync(path.join(cacheRoot, cache, 'meta.json'), 'utf8')) as { api_key: string; history_device_ids: number[] };
  const child = fork(path.join(dir, 'test/bench/api-server.ts'), [path.join(cacheRoot, cache, 'data')], {
    cwd: dir,
    execArgv: ['--import', TSX_LOADER],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const { url } = await nextMessage(child, isUrl, 60_000);
  const paths = meta.history_device_ids.map((id) => `/api/v1/devices/${id}/backups`);
  return { name, child, url, key: meta.api_key, paths, cpu: [], rps: [] };
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: { rounds: { type: 'string', default: '6' }, seconds: { type: 'string', default: '4' } },
    allowPositionals: true,
  });
  const specs = positionals.map((p) => p.split('=') as [string, string]);
  if (specs.length < 2 || specs.some((s) => s.length !== 2 || !s[0] || !s[1])) {
    console.error('usage: node --import tsx test/bench/ab.ts [--rounds N] [--seconds S] NAME=CHECKOUT NAME=CHECKOUT ...');
    process.exit(2);
  }
  const servers: Server[] = [];
  for (const [name, dir] of specs) servers.push(await startServer(name, dir));
  const worker = fork(path.join(import.meta.dirname, 'load-worker.ts'), [], {
    execArgv: ['--import', TSX_LOADER],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const run = async (s: Server, seconds: number) => {
    const answer = nextMessage(worker, isLoadResult, (seconds + 60) * 1000);
    const before = processCpuSeconds(s.child.pid!)!;
    worker.send({ load: { url: s.url, paths: s.paths, headers: { 'X-API-Key': s.key }, connections: 64, seconds } });
    const r = (await answer).result;
    if (r.non2xx || r.errors) throw new Error(`${s.name}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
    return { rps: r.rps, cpu: ((processCpuSeconds(s.child.pid!)! - before) * 1e6) / r.requests };
  };
  try {
    for (const s of servers) await run(s, 3); // warm-up: every page rendered once
    for (let round = 1; round <= Number(values.rounds); round++) {
      for (const s of servers) {
        const r = await run(s, Number(values.seconds));
        s.cpu.push(r.cpu);
        s.rps.push(r.rps);
        console.log(`round ${round} ${s.name.padEnd(12)} ${num(r.rps).padStart(7)} req/s  ${r.cpu.toFixed(1)} us/req`);
      }
    }
    for (const s of servers) {
      console.log(
        `${s.name.padEnd(12)} median ${num(median(s.rps)).padStart(7)} req/s, server CPU ${median(s.cpu).toFixed(1)} us/req (min ${Math.min(...s.cpu).toFixed(1)}, max ${Math.max(...s.cpu).toFixed(1)})`,
      );
    }
  } finally {
    for (const s of servers) s.child.kill('SIGTERM');
    worker.kill();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
