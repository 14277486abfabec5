// `npm run bench -- --only scale`: pages and API calls of a real `serve` over 100,000 devices, p50/p95/max each, with the machine's load.
import http from 'node:http';
import path from 'node:path';
import { openAppliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { refreshSearchIndex, searchIndexBacklog } from '../../src/features/configs/search-index.service';
import { createSession } from '../../src/web/session/sessions.service';
import { spawnServe } from '../helpers/appliance';
import { loadAverage, ms, num, percentile, row, type Row, type Section } from './common';
import { runSchedulerBench } from './scheduler-bench';
import { SCALE_DEVICES, ensureScaleSeed, type ScaleMeta } from './scale-seed';

const TARGET_MS = 200;

interface Probe {
  label: string;
  path: string;
  auth: 'admin' | 'scoped' | 'web';
}

function probes(m: ScaleMeta): Probe[] {
  const d = m.sample_device_id;
  const last = Math.ceil(m.counts.devices / 100);
  return [
    { label: 'API devices, first page (limit 50)', path: '/api/v1/devices', auth: 'admin' },
    { label: 'API devices, page 500 of 1,000 (limit 100)', path: '/api/v1/devices?page=500&limit=100', auth: 'admin' },
    { label: `API devices, last page (${last}, limit 100)`, path: `/api/v1/devices?page=${last}&limit=100`, auth: 'admin' },
    { label: 'API devices, q=s3-c7 (name filter)', path: '/api/v1/devices?q=s3-c7&limit=100', auth: 'admin' },
    { label: 'API devices, q=s3-c7, page 20', path: '/api/v1/devices?q=s3-c7&limit=100&page=20', auth: 'admin' },
    { label: 'API devices, group_id=region, page 100', path: `/api/v1/devices?group_id=${m.region_group_id}&page=100&limit=100`, auth: 'admin' },
    { label: 'API devices, reachability=unreachable', path: '/api/v1/devices?reachability=unreachable&limit=100', auth: 'admin' },
    { label: 'API devices, enabled=false, protocol=ssh', path: '/api/v1/devices?enabled=false&protocol=ssh', auth: 'admin' },
    { label: 'API devices, scoped key (region), page 200', path: '/api/v1/devices?page=200&limit=100', auth: 'scoped' },
    { label: 'API /devices/unreachable', path: '/api/v1/devices/unreachable', auth: 'admin' },
    { label: 'API device', path: `/api/v1/devices/${d}`, auth: 'admin' },
    { label: 'API /stats', path: '/api/v1/stats', auth: 'admin' },
    { label: 'API /stats, scoped key', path: '/api/v1/stats', auth: 'scoped' },
    { label: 'API search text "logging host"', path: '/api/v1/search?q=logging%20host', auth: 'admin' },
    { label: 'API search RE2 "^hostname .*-c7-"', path: `/api/v1/search?q=${encodeURIComponent('^hostname .*-c7-')}&regex=true`, auth: 'admin' },
    { label: 'API search text "logging host", scoped key, page 20', path: '/api/v1/search?q=logging%20host&page=20', auth: 'scoped' },
    { label: 'API search, no hit', path: '/api/v1/search?q=no-such-line-anywhere', auth: 'admin' },
    { label: 'web device list, first page', path: '/devices', auth: 'web' },
    { label: 'web device list, page 1,000', path: '/devices?page=1000', auth: 'web' },
    { label: 'web device list, search "s3-c7"', path: '/devices?q=s3-c7', auth: 'web' },
    { label: 'web device list, by last backup, page 500', path: '/devices?sort=last_backup&dir=desc&page=500', auth: 'web' },
    { label: 'web device list, failed only', path: '/devices?failed=1', auth: 'web' },
    { label: 'web device page', path: `/devices/${d}`, auth: 'web' },
    { label: 'web search text "logging host"', path: '/search?q=logging%20host', auth: 'web' },
    { label: 'web search RE2 "^hostname .*-c7-"', path: `/search?q=${encodeURIComponent('^hostname .*-c7-')}&mode=regex`, auth: 'web' },
    { label: 'web dashboard', path: '/', auth: 'web' },
  ];
}

function timedGet(agent: http.Agent, url: string, headers: Record<string, string>): Promise<{ ms: number; status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = http.get(url, { agent, headers }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ ms: performance.now() - start, status: res.statusCode ?? 0, bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/**
 * A web session for the seeded administrator, made the way a login makes one (the bench process writes it, serve reads
 * it). Opening the appliance first migrates a data dir seeded under an older schema, before serve's start is timed.
 */
function webCookie(dataDir: string): string {
  const app = openAppliance({}, loadConfig({ dataDir }, { CONFVAULT_LOG_LEVEL: 'silent' }));
  const { db } = app;
  try {
    const userId = db.prepare("SELECT id FROM users WHERE username = 'scale-admin'").pluck().get() as number;
    return `confvault_session=${createSession(db, userId, { address: '127.0.0.1', userAgent: 'scale-bench' })}`;
  } finally {
    app.close();
  }
}

/**
 * The search's line index (schema 0029) brought up to date before serve starts, as serve's own upkeep would: after
 * the upgrade that adds it, every device; later, none. Its time (when there was a backlog) and its size on disk.
 */
async function fillSearchIndex(dataDir: string, say: (line: string) => void): Promise<Section> {
  const app = openAppliance({}, loadConfig({ dataDir }, { CONFVAULT_LOG_LEVEL: 'silent' }));
  try {
    const backlog = searchIndexBacklog(app.db);
    const t0 = performance.now();
    let done = 0;
    for (;;) {
      const n = await refreshSearchIndex(app);
      if (n === 0) break;
      done += n;
      if (done % 10_000 < n) say(`  search index: ${num(done)} of ${num(backlog)} devices`);
    }
    const seconds = (performance.now() - t0) / 1000;
    const load = loadAverage();
    app.db.pragma('wal_checkpoint(TRUNCATE)');
    const mb = (like: string) =>
      app.db.prepare(`SELECT round(coalesce(sum(pgsize), 0) / 1048576.0, 1) FROM dbstat WHERE name LIKE ?`).pluck().get(like) as number;
    const counts = app.db.prepare('SELECT (SELECT count(*) FROM search_lines) AS lines, (SELECT count(*) FROM search_postings) AS postings').get() as {
      lines: number;
      postings: number;
    };
    const indexMb = mb('search%') + mb('sqlite_autoindex_search%');
    const totalMb = mb('%');
    say(`  search index: ${num(counts.lines)} distinct lines, ${num(counts.postings)} postings, ${indexMb} MB of ${totalMb} MB`);
    return {
      title: `Search line index (${num(SCALE_DEVICES)} devices' newest versions)`,
      rows: [
        row(
          'backfill of the devices listed stale',
          backlog ? `${num(backlog)} devices in ${seconds.toFixed(0)} s (load ${load})` : 'none stale (indexed in an earlier run)',
          'report only',
          null,
          { backlog, seconds },
        ),
        row(
          'index size',
          `${indexMb} MB of a ${totalMb} MB database; ${num(counts.lines)} distinct lines, ${num(counts.postings)} postings`,
          'report only',
          null,
          {
            index_mb: indexMb,
            db_mb: totalMb,
            ...counts,
          },
        ),
      ],
      notes: ['Filled in the bench process by the upkeep serve runs (refreshSearchIndex: 16 devices a step on a pool worker); docs/search-index.md.'],
    };
  } finally {
    app.close();
  }
}

export async function runScaleBench(say: (line: string) => void, opts: { iterations: number; reseed?: boolean; only?: RegExp }): Promise<Section[]> {
  const seeded = await ensureScaleSeed(say, opts.reseed);
  const m = seeded.meta;
  say(
    `  ${num(m.counts.devices)} devices, ${m.counts.groups} groups, ${num(m.counts.backups)} backups, ${num(m.counts.snapshots)} snapshots, ${m.counts.db_mb} MB database`,
  );
  const cookie = webCookie(seeded.dataDir);
  const index = await fillSearchIndex(seeded.dataDir, say);
  // A schedule that does not fire while the bench runs: serve's scheduler still reads every device's schedule.
  const serve = await spawnServe(['--data-dir', seeded.dataDir, '--listen', '127.0.0.1:0'], { CONFVAULT_BACKUP_SCHEDULE: '0 0 1 1 *' });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const rows: Row[] = [];
  try {
    const headers = { admin: { 'X-API-Key': m.admin_key }, scoped: { 'X-API-Key': m.scoped_key }, web: { Cookie: cookie } };
    for (const p of probes(m).filter((x) => !opts.only || opts.only.test(x.label))) {
      const url = serve.url + p.path;
      const first = await timedGet(agent, url, headers[p.auth]);
      if (first.status !== 200) throw new Error(`GET ${p.path} answered ${first.status}`);
      const samples: number[] = [];
      // A row far past its target (seconds) is timed 5 times: enough to show it, without holding the run for minutes.
      const n = first.ms > 10 * TARGET_MS ? Math.min(5, opts.iterations) : opts.iterations;
      for (let i = 0; i < n; i++) samples.push((await timedGet(agent, url, headers[p.auth])).ms);
      const p50 = percentile(samples, 50);
      const p95 = percentile(samples, 95);
      const max = Math.max(...samples);
      const load = loadAverage().split(' / ')[0];
      say(
        `  ${p.label.padEnd(52)} first ${ms(first.ms).padStart(9)}  p50 ${ms(p50).padStart(9)}  p95 ${ms(p95).padStart(9)}  max ${ms(max).padStart(9)}  load ${load}`,
      );
      rows.push(
        row(p.label, `p50 ${ms(p50)}, p95 ${ms(p95)}, max ${ms(max)} (first ${ms(first.ms)}; load ${load})`, `p95 <= ${TARGET_MS} ms`, p95 <= TARGET_MS, {
          path: p.path,
          first_ms: first.ms,
          p50,
          p95,
          max,
          bytes: first.bytes,
          load,
        }),
      );
    }
  } finally {
    agent.destroy();
    await serve.stop();
  }
  const pages: Section = {
    title: `Scale: ${num(SCALE_DEVICES)} devices, a real \`serve\`, ${opts.iterations} sequential requests each (5 when the first took over ${(10 * TARGET_MS) / 1000} s) after one untimed`,
    rows,
    notes: [
      `data dir ${path.relative(process.cwd(), seeded.dataDir)} (seeded ${m.seeded_at} in ${m.seed_seconds.toFixed(0)} s): ${num(m.counts.devices)} devices in ${m.counts.groups} groups, ${num(m.counts.backups)} backups, ${num(m.counts.snapshots)} configuration files of 2-6 KB.`,
      "admin key: scope all; scoped key: the first region (about 25,000 devices); web: the administrator's session. Load is the 1-minute average when the row finished (2 CPUs).",
      'searches answered by the line index (docs/search-index.md) count every device with hits and read only the files of the page.',
    ],
  };
  say('  scheduler tick at the same size:');
  const tick = runSchedulerBench(say, { devices: SCALE_DEVICES, rounds: 10 });
  return [pages, index, tick];
}
