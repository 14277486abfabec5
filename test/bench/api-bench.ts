// Public API benchmark: throughput at 64 connections against a hello-world ceiling, then warm sequential latencies of history pages and /stats.
import http from 'node:http';
import type { ChildProcess } from 'node:child_process';
import { forkBench, loadAverage, ms, nextMessage, num, percentile, processCpuSeconds, row, stopChild, type Section } from './common';
import { isLoadResult, type LoadJob, type LoadResult } from './load-worker';
import type { SeededDatabase } from './seed';
import type { Json } from '../helpers/api';

export interface ApiBenchOptions {
  connections: number;
  seconds: number;
  warmupSeconds: number;
  rounds: number;
  /** Timed sequential requests per history page and for /stats. */
  iterations: number;
  /** Write a CPU profile of the appliance's server process into this folder. */
  cpuProfileDir?: string;
}

const isUrl = (m: unknown): m is { url: string } => !!m && typeof m === 'object' && 'url' in m;

async function startChild(file: string, args: string[] = [], cpuProfileDir?: string): Promise<{ child: ChildProcess; url: string }> {
  const child = forkBench(file, args, { cpuProfileDir });
  const { url } = await nextMessage(child, isUrl, 60_000);
  return { child, url };
}

interface Fetched {
  ms: number;
  status: number;
  body: Buffer;
}

/** One GET over a keep-alive connection, timed from the request to the last byte of the body. */
function timedGet(agent: http.Agent, base: string, path: string, key: string, zone?: string): Promise<Fetched> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const headers: Record<string, string> = zone ? { 'X-API-Key': key, 'X-Timezone': zone } : { 'X-API-Key': key };
    const req = http.get(base + path, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ ms: performance.now() - start, status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

async function getJson(agent: http.Agent, base: string, path: string, key: string): Promise<Json> {
  const r = await timedGet(agent, base, path, key);
  if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}: ${r.body.toString('utf8').slice(0, 300)}`);
  return JSON.parse(r.body.toString('utf8'));
}

/** Fail early and loudly when the seeded database and the server disagree with what the benchmark assumes. */
async function checkAnswers(agent: http.Agent, base: string, seeded: SeededDatabase): Promise<void> {
  const { meta } = seeded;
  const key = meta.api_key;
  const history = await getJson(agent, base, `/api/v1/devices/${meta.history_device_ids[0]}/backups`, key);
  if (!Array.isArray(history.items) || history.items.length !== 10) throw new Error('history page of an ordinary device: expected 10 items');
  const big = await getJson(agent, base, `/api/v1/devices/${meta.big_device_id}/backups?limit=200`, key);
  if (big.pagination.total !== meta.big_device_records) throw new Error(`busy device: total ${big.pagination.total}, expected ${meta.big_device_records}`);
  const content = await getJson(agent, base, `/api/v1/backups/${meta.big_content_backup_ids[0]}/content`, key);
  if (typeof content.config_text !== 'string' || content.config_text.length < 200_000)
    throw new Error('content of the busy device: expected a 200 KB config_text');
  const stats = await getJson(agent, base, '/api/v1/stats', key);
  if (stats.backups.total !== meta.counts.backups) throw new Error(`stats: backups.total ${stats.backups.total}, expected ${meta.counts.backups}`);
}

interface Target {
  label: string;
  url: string;
  pid: number;
  paths: string[];
  headers: Record<string, string>;
  rotate?: LoadJob['rotate'];
}

/**
 * Zones for the "rendered" load: the appliance reuses a rendered history page per device, page, limit and zone, so
 * 2,499 devices x 24 zones in turn (60,000 pages, far more than it keeps) make every request render its page.
 */
const LOAD_ZONES = [
  'UTC',
  'Europe/London',
  'Europe/Paris',
  'Europe/Berlin',
  'Europe/Helsinki',
  'Europe/Moscow',
  'Asia/Dubai',
  'Asia/Karachi',
  'Asia/Kolkata',
  'Asia/Dhaka',
  'Asia/Bangkok',
  'Asia/Shanghai',
  'Asia/Tokyo',
  'Australia/Sydney',
  'Pacific/Auckland',
  'Pacific/Honolulu',
  'America/Anchorage',
  'America/Los_Angeles',
  'America/Denver',
  'America/Chicago',
  'America/New_York',
  'America/Sao_Paulo',
  'Atlantic/Azores',
  'Africa/Johannesburg',
];

type LoadRun = LoadResult & { server_cpu_us: number | null; load: string };

/** One autocannon run; the server's CPU time per request comes from /proc (independent of what limits throughput). */
async function loadRun(worker: ChildProcess, t: Target, connections: number, seconds: number): Promise<LoadRun> {
  const job: LoadJob = { url: t.url, paths: t.paths, headers: t.headers, rotate: t.rotate, connections, seconds };
  const answer = nextMessage(worker, isLoadResult, (seconds + 60) * 1000);
  const cpuBefore = processCpuSeconds(t.pid);
  worker.send({ load: job });
  const r = (await answer).result;
  const cpuAfter = processCpuSeconds(t.pid);
  const cpu = cpuBefore === null || cpuAfter === null ? null : ((cpuAfter - cpuBefore) * 1e6) / r.requests;
  return { ...r, server_cpu_us: cpu, load: loadAverage() };
}

/**
 * Warm sequential latencies of each labelled path, interleaved so every path sees the same background noise. With
 * `rendering`, request i names zones[i]: a page never rendered before, so the appliance reads and renders it (after an
 * untimed request for zonePath in that zone, so that building the zone's formatter is not part of the figure).
 */
async function latencies(
  agent: http.Agent,
  base: string,
  key: string,
  paths: Record<string, string>,
  iterations: number,
  warmup: number,
  rendering?: { zones: string[]; zonePath: string },
) {
  const zones = rendering?.zones;
  if (zones && zones.length < warmup + iterations)
    throw new Error(`rendered latencies need ${warmup + iterations} time zones, this Node.js knows ${zones.length}`);
  const out: Record<string, number[]> = Object.fromEntries(Object.keys(paths).map((k) => [k, []]));
  for (let i = 0; i < warmup + iterations; i++) {
    const zone = zones?.[i];
    if (zone) await timedGet(agent, base, rendering!.zonePath, key, zone);
    for (const [label, p] of Object.entries(paths)) {
      const r = await timedGet(agent, base, p, key, zone);
      if (r.status !== 200) throw new Error(`GET ${p} answered ${r.status}`);
      if (i >= warmup) out[label].push(r.ms);
    }
  }
  return out;
}

export async function runApiBench(seeded: SeededDatabase, say: (line: string) => void, o: ApiBenchOptions): Promise<Section[]> {
  const { meta } = seeded;
  const children: ChildProcess[] = [];
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const [ceiling, payload, framework, appliance] = await Promise.all([
      startChild('ceiling-server.ts'),
      startChild('ceiling-server.ts', ['payload']),
      startChild('ceiling-server.ts', ['framework']),
      startChild('api-server.ts', [seeded.dataDir], o.cpuProfileDir),
    ]);
    children.push(ceiling.child, payload.child, framework.child, appliance.child);
    const worker = forkBench('load-worker.ts');
    children.push(worker);
    await checkAnswers(agent, appliance.url, seeded);

    const headers = { 'X-API-Key': meta.api_key };
    const historyPaths = meta.history_device_ids.map((id) => `/api/v1/devices/${id}/backups`);
    const targets: Target[] = [
      { label: 'ceiling', url: ceiling.url, pid: ceiling.child.pid!, paths: ['/'], headers: {} },
      { label: 'payload', url: payload.url, pid: payload.child.pid!, paths: historyPaths, headers: {} },
      { label: 'framework', url: framework.url, pid: framework.child.pid!, paths: historyPaths, headers: {} },
      { label: 'history', url: appliance.url, pid: appliance.child.pid!, paths: historyPaths, headers },
      { label: 'rendered', url: appliance.url, pid: appliance.child.pid!, paths: historyPaths, headers, rotate: { header: 'X-Timezone', values: LOAD_ZONES } },
      {
        label: 'content',
        url: appliance.url,
        pid: appliance.child.pid!,
        paths: meta.big_content_backup_ids.map((id) => `/api/v1/backups/${id}/content`),
        headers,
      },
    ];
    const runs: Record<string, LoadRun[]> = Object.fromEntries(targets.map((t) => [t.label, []]));
    for (const t of targets) {
      say(`  warm-up ${t.label} (${o.warmupSeconds} s)`);
      await loadRun(worker, t, o.connections, o.warmupSeconds);
    }
    // Rounds interleave the targets, so a burst of background work on the shared machine hits all of them alike.
    for (let round = 1; round <= o.rounds; round++) {
      for (const t of targets) {
        const r = await loadRun(worker, t, o.connections, o.seconds);
        runs[t.label].push(r);
        const cpu = r.server_cpu_us === null ? '' : `  server CPU ${num(r.server_cpu_us)} us/req`;
        say(`  round ${round} ${t.label.padEnd(9)} ${num(r.rps).padStart(7)} req/s  p50 ${ms(r.p50_ms)}  p99 ${ms(r.p99_ms)}${cpu}  (load ${r.load})`);
      }
    }
    const best = (label: string) => runs[label].reduce((a, b) => (b.rps > a.rps ? b : a));
    const ceil = best('ceiling');
    const page = best('payload');
    const floor = best('framework');
    const hist = best('history');
    const rend = best('rendered');
    const cont = best('content');
    const failed = (r: LoadResult) => r.non2xx + r.errors + r.timeouts;
    const cpu = (r: LoadRun) => (r.server_cpu_us === null ? '' : `, server CPU ${num(r.server_cpu_us)} us/req`);
    const load: Section = {
      title: `API under load: ${o.connections} connections, autocannon in its own process, best of ${o.rounds} rounds of ${o.seconds} s`,
      rows: [
        row('ceiling: Hono hello-world', `${num(ceil.rps)} req/s, p50 ${ms(ceil.p50_ms)}, p99 ${ms(ceil.p99_ms)}${cpu(ceil)}`, 'reference', null, {
          runs: runs.ceiling,
        }),
        row(
          'plain Hono answering a fixed history page',
          `${num(page.rps)} req/s = ${(page.rps / ceil.rps).toFixed(2)}x ceiling, p99 ${ms(page.p99_ms)}${cpu(page)}`,
          'reference',
          null,
          { ratio: page.rps / ceil.rps, runs: runs.payload },
        ),
        row(
          'framework floor: history route, fixed page',
          `${num(floor.rps)} req/s = ${(floor.rps / ceil.rps).toFixed(2)}x ceiling, p99 ${ms(floor.p99_ms)}${cpu(floor)}`,
          'reference',
          null,
          { ratio: floor.rps / ceil.rps, runs: runs.framework },
        ),
        row(
          'GET /devices/{id}/backups throughput',
          `${num(hist.rps)} req/s = ${(hist.rps / ceil.rps).toFixed(2)}x ceiling${cpu(hist)}`,
          '>= 0.60x ceiling',
          hist.rps / ceil.rps >= 0.6 && failed(hist) === 0,
          { ratio: hist.rps / ceil.rps, runs: runs.history },
        ),
        row('GET /devices/{id}/backups latency', `p50 ${ms(hist.p50_ms)}, p99 ${ms(hist.p99_ms)}`, 'p99 < 10 ms', hist.p99_ms < 10 && failed(hist) === 0),
        row(
          'GET /devices/{id}/backups, every page rendered',
          `${num(rend.rps)} req/s = ${(rend.rps / ceil.rps).toFixed(2)}x ceiling, p50 ${ms(rend.p50_ms)}, p99 ${ms(rend.p99_ms)}${cpu(rend)}`,
          'report only',
          failed(rend) === 0 ? null : false,
          { ratio: rend.rps / ceil.rps, runs: runs.rendered },
        ),
        row(
          'GET /backups/{id}/content (200 KB) throughput',
          `${num(cont.rps)} req/s = ${(cont.rps / ceil.rps).toFixed(2)}x ceiling, ${cont.mb_per_s.toFixed(0)} MB/s${cpu(cont)}`,
          'report only',
          failed(cont) === 0 ? null : false,
          { ratio: cont.rps / ceil.rps, runs: runs.content },
        ),
        row('GET /backups/{id}/content latency', `p50 ${ms(cont.p50_ms)}, p99 ${ms(cont.p99_ms)}`, 'report only', null),
      ],
      notes: [
        `history: page 1 (default limit 10) of ${num(meta.history_device_ids.length)} devices in turn, as an integration polling them sees it: each page is rendered once and reused while its device's history does not change (every request still authenticates, checks the device's scope and the history's version); "every page rendered": the same requests, each in the next of ${LOAD_ZONES.length} time zones, so that none reuses a page. Content: ${meta.big_content_backup_ids.length} backups of the busy device (${num(meta.big_config_bytes)} bytes each, read, gunzipped and hash-checked per request).`,
        `key of a user scoped to group ${meta.scope_group.toUpperCase()} (31 groups after expansion), time zone Europe/Berlin; the appliance logs at level info to /dev/null.`,
        'fixed history page: the JSON of a 10-record page (about 2 KB), from plain Hono; framework floor: the same page from the history route definition (createRoute) registered as the appliance registers its routes, zod validation included (neither has auth, database, formatting or logging).',
        `one event loop answers the ${o.connections} connections in turn, so p50 is about ${o.connections} / throughput: p99 < 10 ms needs more than ${num(o.connections * 100)} req/s, i.e. under ~${num(1e6 / (o.connections * 100))} us of server CPU per request.`,
        ...[hist, rend, cont].filter((r) => failed(r) > 0).map((r) => `FAILED REQUESTS: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`),
      ],
    };

    say(`  sequential latencies (${o.iterations} timed requests each, keep-alive, from this process)`);
    const big = meta.big_device_id;
    const pagePaths = {
      'first page, limit 10': `/api/v1/devices/${big}/backups?page=1&limit=10`,
      'last page, limit 10': `/api/v1/devices/${big}/backups?page=${Math.ceil(meta.big_device_records / 10)}&limit=10`,
      'first page, limit 200': `/api/v1/devices/${big}/backups?page=1&limit=200`,
      'last page, limit 200': `/api/v1/devices/${big}/backups?page=${Math.ceil(meta.big_device_records / 200)}&limit=200`,
    };
    const warm = Math.ceil(o.iterations / 5);
    const rendered = await latencies(agent, appliance.url, meta.api_key, pagePaths, o.iterations, warm, {
      zones: Intl.supportedValuesOf('timeZone'),
      zonePath: `/api/v1/devices/${big}/backups?page=2&limit=3`,
    });
    const reused = await latencies(agent, appliance.url, meta.api_key, pagePaths, o.iterations, warm);
    const pages = {
      ...Object.fromEntries(Object.entries(rendered).map(([label, xs]) => [`${label}, rendered`, xs])),
      ...Object.fromEntries(Object.entries(reused).map(([label, xs]) => [`${label}, reused`, xs])),
    };
    const stats = await latencies(agent, appliance.url, meta.api_key, { stats: '/api/v1/stats' }, o.iterations, Math.ceil(o.iterations / 10));
    const latencyRows = Object.entries(pages).map(([label, xs]) => {
      const p50 = percentile(xs, 50);
      return row(`history of the 100,000-record device, ${label}`, `p50 ${ms(p50)}, p99 ${ms(percentile(xs, 99))}`, 'p50 < 5 ms', p50 < 5, {
        p50,
        p99: percentile(xs, 99),
      });
    });
    const s50 = percentile(stats.stats, 50);
    latencyRows.push(
      row('GET /stats (10,000 devices, 1.1 M records)', `p50 ${ms(s50)}, p99 ${ms(percentile(stats.stats, 99))}`, 'p50 < 50 ms', s50 < 50, {
        p50: s50,
        p99: percentile(stats.stats, 99),
      }),
    );
    const latency: Section = {
      title: 'API latency: warm server, one request at a time over HTTP keep-alive',
      rows: latencyRows,
      notes: [
        `measured from the request to the last byte in this process (client cost included); load average ${loadAverage()}.`,
        'rendered: each request in a time zone not used before, so the page is read from the database and rendered; reused: the same page again, served from the rendered copy after the checks.',
      ],
    };
    return [load, latency];
  } finally {
    agent.destroy();
    await Promise.all(children.map((c) => stopChild(c)));
  }
}
