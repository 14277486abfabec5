// A/B micro-measure of each [performance] switch (docs/performance.md): the same work with the speed-up on and off, in
// alternation, several rounds, in one process. Run: node_modules/.bin/node --import tsx test/bench/performance-ab.ts [rounds]
import { createApp } from '../../src/app/app';
import { withEngineSync } from '../../src/db/open';
import { recordReachability } from '../../src/features/backups/backup-engine.service';
import { finishBackupSync, startBackup } from '../../src/features/backups/backup-record.service';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';

const ROUNDS = Number(process.argv[2] ?? 5);
const SWITCHES = {
  statement_cache: 'CONFVAULT_PERFORMANCE_STATEMENT_CACHE',
  history_page_cache: 'CONFVAULT_PERFORMANCE_HISTORY_PAGE_CACHE',
  engine_sync_normal: 'CONFVAULT_PERFORMANCE_ENGINE_SYNC_NORMAL',
} as const;

interface Side {
  t: TestAppliance;
  get(path: string): Promise<number>;
  device: number;
}

async function side(env: Record<string, string>): Promise<Side> {
  const t = await startTestAppliance(env);
  const { db, snapshots, secrets } = t.services;
  const tpl = seedBuiltinTemplate(db, 'frr');
  const device = seedDevice(db, {
    name: 'ab-1',
    port: 9,
    credential_id: seedCredential(db, secrets, { name: 'ab', username: 'u', password: 'p' }),
    template_id: tpl,
  });
  for (let i = 0; i < 200; i++) {
    const s = startBackup(db, device, tpl, 'manual', Date.now() - (200 - i) * 60_000);
    finishBackupSync(db, snapshots, s, { ok: true, text: `hostname r1\n! version ${i}\n`, ignorePatterns: [] } as never);
  }
  const key = await t.keyFor({ permissions: 'all' });
  const app = createApp(t.services);
  return {
    t,
    device,
    async get(path) {
      const res = await app.request(path, { headers: { 'X-API-Key': key } });
      await res.arrayBuffer();
      return res.status;
    },
  };
}

async function timeRequests(s: Side, paths: string[], n: number): Promise<number> {
  for (const p of paths) await s.get(p); // warm
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await s.get(paths[i % paths.length]);
  return Number(process.hrtime.bigint() - t0) / n / 1000;
}

function timeEngineCommits(s: Side, n: number): number {
  const { db } = s.t.services;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) withEngineSync(db, () => recordReachability(db, s.device, i % 2 ? 'reachable' : 'unreachable', i % 2 ? null : `e${i}`));
  return Number(process.hrtime.bigint() - t0) / n / 1000;
}

const on = await side({});
const results: Record<string, { on: number[]; off: number[] }> = {};
for (const [name, env] of Object.entries(SWITCHES)) {
  const off = await side({ [env]: '0' });
  const id = on.device;
  const work = (s: Side) =>
    name === 'engine_sync_normal'
      ? Promise.resolve(timeEngineCommits(s, 200))
      : name === 'history_page_cache'
        ? timeRequests(s, [`/api/v1/devices/${id}/backups?limit=50`, `/api/v1/devices/${id}/backups?page=2&limit=50`], 400)
        : timeRequests(s, ['/api/v1/devices', `/api/v1/devices/${id}`, `/api/v1/devices/${id}/backups`, '/api/v1/templates?limit=5'], 800);
  results[name] = { on: [], off: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const which of r % 2 ? (['off', 'on'] as const) : (['on', 'off'] as const)) results[name][which].push(await work(which === 'on' ? on : off));
  }
  await off.t.close();
}
await on.t.close();
const fmt = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(' / ');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [name, r] of Object.entries(results)) {
  console.log(
    `${name}: µs per ${name === 'engine_sync_normal' ? 'commit' : 'request'}, on ${fmt(r.on)} (median ${median(r.on).toFixed(1)}); off ${fmt(r.off)} (median ${median(r.off).toFixed(1)})`,
  );
}
