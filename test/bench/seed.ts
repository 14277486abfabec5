// Seeds (once, then from the cache) the API benchmark's appliance: 10,000 devices in nested groups, 1.1 M backup records, real snapshots.
import { createHash, randomUUID } from 'node:crypto';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openAppliance, type Appliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { createApiKey } from '../../src/features/apikeys/apikeys.service';
import { copyDevicesLastBackup } from '../../src/features/backups/backups.store';
import { createCredential } from '../../src/features/credentials/credentials.service';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { BENCH_DIR, REPO_ROOT, forkBench, nextMessage } from './common';
import { CLOSETS_PER_SITE, FAILURES, REGIONS, SITES_PER_REGION, planFleet, type Plan } from './seed-plan';
import { isSnapshotDigests, isSnapshotStored, type SnapshotJobItem, type SnapshotStored } from './seed-snapshots';

export const CACHE_ROOT = path.join(REPO_ROOT, '.bench-cache');
/** The files whose content decides the seeded database: the schema and this generator. */
const GENERATOR_FILES = ['seed.ts', 'seed-plan.ts', 'seed-configs.ts', 'seed-snapshots.ts'];
const SNAPSHOT_WORKERS = 3;
/** Records per transaction: all of them, since the 1 GB page cache holds the whole database until the commit. */
const ROWS_PER_TRANSACTION = 1_100_000;
const CREDENTIALS = 12;

export interface SeedMeta {
  cache_key: string;
  seeded_at: string;
  seed_seconds: number;
  phases_seconds: Record<string, number>;
  /** Key of a user holding backups.view and dashboard.view, scoped to the region group of the busy device. */
  api_key: string;
  scope_group: string;
  big_device_id: number;
  big_device_records: number;
  /** Successful backups of the busy device (200 KB text), spread over its history. */
  big_content_backup_ids: string[];
  big_config_bytes: number;
  /** Ordinary devices inside the key's scope, for the history load test. */
  history_device_ids: number[];
  counts: { devices: number; groups: number; backups: number; snapshots: number; db_mb: number; snapshots_mb: number };
}

export interface SeededDatabase {
  dir: string;
  dataDir: string;
  meta: SeedMeta;
  seededNow: boolean;
}

export function cacheKey(): string {
  const h = createHash('sha256');
  const schemaDir = path.join(REPO_ROOT, 'schema');
  for (const f of readdirSync(schemaDir)
    .filter((n) => n.endsWith('.sql'))
    .sort())
    h.update(f).update(readFileSync(path.join(schemaDir, f)));
  for (const f of GENERATOR_FILES) h.update(f).update(readFileSync(path.join(BENCH_DIR, f)));
  return h.digest('hex').slice(0, 16);
}

/** The seeded appliance's folder, seeding it first when the cache holds none for this schema and generator. */
export async function ensureSeededDatabase(say: (line: string) => void): Promise<SeededDatabase> {
  const key = cacheKey();
  const dir = path.join(CACHE_ROOT, `api-${key}`);
  const metaFile = path.join(dir, 'meta.json');
  if (existsSync(metaFile)) {
    return { dir, dataDir: path.join(dir, 'data'), meta: JSON.parse(readFileSync(metaFile, 'utf8')) as SeedMeta, seededNow: false };
  }
  say(`seeding the API database into ${path.relative(REPO_ROOT, dir)} (first run for this schema and generator)...`);
  mkdirSync(CACHE_ROOT, { recursive: true });
  // Built beside its final name and renamed when complete: an interrupted run never leaves a half database behind.
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  const meta = await seed(path.join(partial, 'data'), key, say);
  writeFileSync(path.join(partial, 'meta.json'), JSON.stringify(meta, null, 2));
  if (existsSync(metaFile))
    rmSync(partial, { recursive: true, force: true }); // another run finished first
  else renameSync(partial, dir);
  // Databases of older schemas or generators, and partial ones whose run has gone, would only fill the disk.
  for (const old of readdirSync(CACHE_ROOT)) {
    const pid = /\.partial-(\d+)$/.exec(old)?.[1];
    if (old.startsWith('api-') && old !== `api-${key}` && (!pid || !processAlive(Number(pid))))
      rmSync(path.join(CACHE_ROOT, old), { recursive: true, force: true });
  }
  return { dir, dataDir: path.join(dir, 'data'), meta, seededNow: true };
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    total += e.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return total;
}

async function seed(dataDir: string, key: string, say: (line: string) => void): Promise<SeedMeta> {
  const began = performance.now();
  const phases: Record<string, number> = {};
  let mark = began;
  let cpuMark = process.cpuUsage();
  const phase = (name: string) => {
    const now = performance.now();
    const cpu = process.cpuUsage(cpuMark);
    phases[name] = Math.round(now - mark) / 1000;
    say(`  ${name}: ${phases[name].toFixed(1)} s (this process's CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s)`);
    mark = now;
    cpuMark = process.cpuUsage();
  };
  const config = loadConfig({ dataDir }, { CONFVAULT_LOG_LEVEL: 'silent' });
  const app = openAppliance({}, config);
  const { db } = app;
  // Bulk loading only (test data, thrown away if interrupted): no journal and no fsync, and a page cache that holds
  // the whole database, so each page is written once at the end instead of once per commit through the WAL.
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -1048576');
  try {
    const plan = planFleet(Math.floor(Date.now() / 60_000) * 60_000);
    phase('plan a year of records');
    const inv = insertInventory(app, plan);
    const scopeGroup = inv.regionIds[0];
    createRole(db, SYSTEM_ACTOR, { name: 'bench-reader', permissions: ['backups.view', 'dashboard.view'] });
    await createUser(db, SYSTEM_ACTOR, {
      username: 'bench-reader',
      password: 'bench-reader-password',
      role: 'bench-reader',
      groups: [scopeGroup],
      timezone: 'Europe/Berlin',
    });
    const apiKey = createApiKey(db, SYSTEM_ACTOR, { username: 'bench-reader', name: 'benchmark' }).key;
    phase('groups, credentials, 10,000 devices, scoped user and key');
    const writers = startSnapshotWriters(app, plan);
    const digests = await writers.digests;
    phase(`digests of ${writers.count.toLocaleString('en-US')} distinct texts (${SNAPSHOT_WORKERS} processes)`);
    const rec = insertRecords(app, plan, inv.deviceIds, inv.templateIds, digests);
    phase(`${plan.records.count.toLocaleString('en-US')} backup records, triggers on (texts written meanwhile)`);
    insertSnapshotRows(app, await writers.stored, digests, rec.firstUse);
    phase('rest of the texts through SnapshotStore (fsync each), snapshot rows');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('cache_size = -32000');
    phase('back to WAL');
    const counts = db
      .prepare(
        'SELECT (SELECT count(*) FROM devices) AS devices, (SELECT count(*) FROM device_groups) AS groups, (SELECT total FROM backup_totals) AS backups, (SELECT count(*) FROM snapshots) AS snapshots',
      )
      .get() as { devices: number; groups: number; backups: number; snapshots: number };
    const scopeDevices = db
      .prepare(
        `WITH RECURSIVE g(id) AS (SELECT ? UNION SELECT dg.id FROM device_groups dg JOIN g ON dg.parent_id = g.id)
         SELECT d.id FROM devices d WHERE d.group_id IN (SELECT id FROM g) AND d.id <> ? ORDER BY d.id`,
      )
      .pluck()
      .all(scopeGroup, inv.deviceIds[0]) as number[];
    const bigBytes = (db.prepare('SELECT config_size FROM backups WHERE id = ?').pluck().get(rec.bigContentIds[0]) as number) ?? 0;
    return {
      cache_key: key,
      seeded_at: new Date().toISOString(),
      seed_seconds: Math.round(performance.now() - began) / 1000,
      phases_seconds: phases,
      api_key: apiKey,
      scope_group: REGIONS[0],
      big_device_id: inv.deviceIds[0],
      big_device_records: plan.records.device.filter((d) => d === 0).length,
      big_content_backup_ids: rec.bigContentIds,
      big_config_bytes: bigBytes,
      history_device_ids: scopeDevices,
      counts: {
        ...counts,
        db_mb: Math.round(statSync(app.dbFile).size / 2 ** 20),
        snapshots_mb: Math.round(dirBytes(app.snapshots.root) / 2 ** 20),
      },
    };
  } finally {
    app.close();
  }
}

function insertInventory(app: Appliance, plan: Plan) {
  const { db, secrets } = app;
  const created = plan.end - 400 * 86_400_000;
  const templateIds = new Map(
    (db.prepare('SELECT name, id FROM templates WHERE builtin = 1').all() as { name: string; id: number }[]).map((t) => [t.name, t.id]),
  );
  const credentialIds: number[] = [];
  for (let i = 0; i < CREDENTIALS; i++) {
    credentialIds.push(
      createCredential(db, SYSTEM_ACTOR, secrets, {
        name: `site-backup-${i + 1}`,
        username: 'backup',
        password: `Backup-Pass-${i + 1}!`,
        enable_secret: i % 2 ? `En-${i + 1}` : null,
      }).id,
    );
  }
  const insertGroup = db.prepare('INSERT INTO device_groups (name, parent_id, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?)');
  const insertDevice = db.prepare(
    `INSERT INTO devices (name, hostname, port, protocol, group_id, credential_id, template_id, enabled, description, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const regionIds: number[] = [];
  const closetIds: number[] = [];
  const deviceIds = new Int32Array(plan.devices.length);
  db.transaction(() => {
    for (const region of REGIONS) {
      const rid = Number(insertGroup.run(region.toUpperCase(), null, `All sites of ${region}`, created, created).lastInsertRowid);
      regionIds.push(rid);
      for (let s = 0; s < SITES_PER_REGION; s++) {
        const sid = Number(insertGroup.run(`${region}-site${s}`, rid, '', created, created).lastInsertRowid);
        for (let c = 0; c < CLOSETS_PER_SITE; c++) closetIds.push(Number(insertGroup.run(`closet${c}`, sid, '', created, created).lastInsertRowid));
      }
    }
    for (const d of plan.devices) {
      const tpl = templateIds.get(d.template);
      if (tpl === undefined) throw new Error(`built-in template ${d.template} is not in the database`);
      deviceIds[d.index] = Number(
        insertDevice.run(
          d.name,
          d.hostname,
          d.protocol === 'ssh' ? 22 : 23,
          d.protocol,
          closetIds[d.closet],
          credentialIds[d.index % CREDENTIALS],
          tpl,
          d.enabled ? 1 : 0,
          d.index === 0 ? 'Core chassis, 200 KB configuration' : '',
          created,
          created,
        ).lastInsertRowid,
      );
    }
  })();
  return { regionIds, deviceIds, templateIds: plan.devices.map((d) => templateIds.get(d.template)!) };
}

interface SnapshotDigestInfo {
  hash: string;
  size: number;
  fingerprint: string;
}

/**
 * Every version some successful record refers to, handed to a few child processes. They first send the
 * digests (all the records need), then write the files through SnapshotStore while this process inserts
 * the records: the fsync waits of 27,000 files overlap the CPU-bound inserts.
 */
function startSnapshotWriters(app: Appliance, plan: Plan) {
  const { records } = plan;
  const used = new Uint8Array(plan.totalVersions);
  for (let r = 0; r < records.count; r++) if (records.failure[r] < 0) used[plan.devices[records.device[r]].versionBase + records.version[r]] = 1;
  const items: SnapshotJobItem[] = [];
  for (const d of plan.devices) {
    for (let v = 0; v < d.versions; v++) {
      if (used[d.versionBase + v])
        items.push({ key: d.versionBase + v, name: d.name, template: d.template, deviceIndex: d.index, version: v, big: d.index === 0 });
    }
  }
  // The 200 KB texts first, one per writer in turn, so no writer is left with all the slow ones.
  items.sort((x, y) => Number(y.big) - Number(x.big));
  const shares: SnapshotJobItem[][] = Array.from({ length: SNAPSHOT_WORKERS }, () => []);
  items.forEach((it, i) => shares[i % SNAPSHOT_WORKERS].push(it));
  const writers = shares.map((share) => {
    const child = forkBench('seed-snapshots.ts');
    // Both answers are awaited from the start: IPC may deliver them in one read.
    const digests = nextMessage(child, isSnapshotDigests, 600_000);
    const stored = nextMessage(child, isSnapshotStored, 900_000);
    child.send({ dataDir: app.dataDir, compress: app.config.storage.compress_snapshots, items: share });
    return { digests, stored };
  });
  const digests = Promise.all(writers.map((w) => w.digests)).then((all) => {
    const out = new Map<number, SnapshotDigestInfo>();
    for (const m of all) for (const [k, hash, size, fingerprint] of m.digests) out.set(k, { hash, size, fingerprint });
    return out;
  });
  const stored = Promise.all(writers.map((w) => w.stored)).then((all) => all.flatMap((m) => m.stored));
  return { count: items.length, digests, stored };
}

/** The snapshot rows, once their files are durable, dated by the first backup that stored each text. */
function insertSnapshotRows(app: Appliance, stored: SnapshotStored[], digests: Map<number, SnapshotDigestInfo>, firstUse: Map<string, number>) {
  const insert = app.db.prepare('INSERT INTO snapshots (hash, size, stored_size, compressed, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING');
  app.db.transaction(() => {
    for (const [k, hash, storedSize, compressed] of stored) {
      const d = digests.get(k);
      if (!d || d.hash !== hash) throw new Error(`snapshot ${k}: SnapshotStore stored ${hash}, the records point at ${d?.hash}`);
      insert.run(hash, d.size, storedSize, compressed, firstUse.get(hash) ?? Date.now());
    }
  })();
}

/** The records in start-time order through prepared statements in large transactions; the 0001/0002 triggers keep every counter. */
function insertRecords(app: Appliance, plan: Plan, deviceIds: Int32Array, templateIds: number[], snaps: Map<number, SnapshotDigestInfo>) {
  const { db } = app;
  const { records, devices } = plan;
  const insertBackup = db.prepare(
    `INSERT INTO backups (id, device_id, template_id, trigger, started_at, finished_at, success, error_message, failure_type,
                          duration_ms, config_snapshot_hash, config_size, change_fingerprint, changed)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const firstUse = new Map<string, number>();
  const lastId: string[] = new Array(devices.length);
  const lastFailure = new Int8Array(devices.length).fill(-2);
  const lastAt = new Float64Array(devices.length);
  const lastFingerprint: (string | undefined)[] = new Array(devices.length);
  const bigContentIds: string[] = [];
  let bigSuccesses = 0;
  const chunk = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const r = records.order[i];
      const d = records.device[r];
      const id = randomUUID();
      const started = records.startedAt[r];
      const finished = started + records.duration[r];
      const f = records.failure[r];
      const trigger = i % 97 === 0 ? 'manual' : 'schedule';
      if (f < 0) {
        const s = snaps.get(devices[d].versionBase + records.version[r])!;
        if (!firstUse.has(s.hash)) firstUse.set(s.hash, finished);
        const changed = lastFingerprint[d] !== undefined && lastFingerprint[d] !== s.fingerprint ? 1 : 0;
        lastFingerprint[d] = s.fingerprint;
        insertBackup.run(
          id,
          deviceIds[d],
          templateIds[d],
          trigger,
          started,
          finished,
          1,
          null,
          null,
          records.duration[r],
          s.hash,
          s.size,
          s.fingerprint,
          changed,
        );
        if (d === 0 && bigSuccesses++ % 1_000 === 0) bigContentIds.push(id);
      } else {
        const failure = FAILURES[f];
        insertBackup.run(
          id,
          deviceIds[d],
          templateIds[d],
          trigger,
          started,
          finished,
          0,
          failure.message(devices[d].hostname),
          failure.type,
          records.duration[r],
          null,
          null,
          null,
          0,
        );
      }
      lastId[d] = id;
      lastFailure[d] = f;
      lastAt[d] = finished;
    }
  });
  for (let i = 0; i < records.count; i += ROWS_PER_TRANSACTION) chunk(i, Math.min(records.count, i + ROWS_PER_TRANSACTION));

  const updateDevice = db.prepare(
    `UPDATE devices SET last_backup_id = ?, reachability = ?, reachability_checked_at = ?, reachability_error = ?, host_key = ? WHERE id = ?`,
  );
  db.transaction(() => {
    for (const d of devices) {
      const f = lastFailure[d.index];
      const down = f >= 0 && FAILURES[f].unreachable;
      const hostKey =
        d.protocol === 'ssh' && lastFingerprint[d.index] ? 'SHA256:' + createHash('sha256').update(d.name).digest('base64').replace(/=+$/, '') : null;
      updateDevice.run(
        lastId[d.index] ?? null,
        down ? 'unreachable' : 'reachable',
        lastAt[d.index] || null,
        down ? FAILURES[f].message(d.hostname) : null,
        hostKey,
        deviceIds[d.index],
      );
    }

    copyDevicesLastBackup(db);
  })();
  return { bigContentIds, firstUse };
}
