// Seeds (once, then from the cache) the scale bench's appliance: 100,000 devices in a group tree, three backups each, real configuration files.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openAppliance, type Appliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { createApiKey } from '../../src/features/apikeys/apikeys.service';
import { copyDevicesLastBackup } from '../../src/features/backups/backups.store';
import { createCredential } from '../../src/features/credentials/credentials.service';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { PERMISSIONS } from '../../src/identity/permissions';
import { prepareSnapshot } from '../../src/store/snapshots';
import { BENCH_DIR, REPO_ROOT } from './common';
import { FLEET_MIX, deviceConfig, prng } from './seed-configs';
import { REGIONS } from './seed-plan';

export const SCALE_ROOT = path.join(REPO_ROOT, 'test/.artifacts');
export const SCALE_DEVICES = 100_000;
const SITES = 10;
const CLOSETS = 10;
const DAY = 86_400_000;
/** Every 100th device has no group (only scope "all" sees it). */
const UNGROUPED_EVERY = 100;

export interface ScaleMeta {
  cache_key: string;
  seeded_at: string;
  seed_seconds: number;
  admin_user: string;
  admin_password: string;
  admin_key: string;
  /** Key of a user holding every permission, scoped to the first region (a quarter of the fleet). */
  scoped_key: string;
  region_group_id: number;
  sample_device_id: number;
  sample_device_name: string;
  counts: { devices: number; groups: number; backups: number; snapshots: number; db_mb: number };
}

export interface ScaleSeed {
  dataDir: string;
  meta: ScaleMeta;
  seededNow: boolean;
}

/**
 * Keyed by the generator only: a cached data dir made under an older schema is migrated by `serve` when the bench
 * starts it (as an upgrade would), instead of seeding 100,000 devices again for each new migration.
 */
function cacheKey(): string {
  const h = createHash('sha256');
  for (const f of ['scale-seed.ts', 'seed-configs.ts']) h.update(f).update(readFileSync(path.join(BENCH_DIR, f)));
  return h.digest('hex').slice(0, 16);
}

/** The seeded data dir for this schema and generator, seeded first when the cache has none (older ones are removed). */
export async function ensureScaleSeed(say: (line: string) => void, reseed = false): Promise<ScaleSeed> {
  const key = cacheKey();
  const dir = path.join(SCALE_ROOT, `scale-${key}`);
  const metaFile = path.join(dir, 'meta.json');
  if (reseed) rmSync(dir, { recursive: true, force: true });
  if (existsSync(metaFile)) return { dataDir: path.join(dir, 'data'), meta: JSON.parse(readFileSync(metaFile, 'utf8')) as ScaleMeta, seededNow: false };
  say(`  seeding ${SCALE_DEVICES.toLocaleString('en-US')} devices into ${path.relative(REPO_ROOT, dir)} (first run for this schema and generator)...`);
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  const meta = await seed(path.join(partial, 'data'), key);
  writeFileSync(path.join(partial, 'meta.json'), JSON.stringify(meta, null, 2));
  for (const old of readdirSync(SCALE_ROOT))
    if (old.startsWith('scale-') && !old.includes('.partial-')) rmSync(path.join(SCALE_ROOT, old), { recursive: true, force: true });
  renameSync(partial, dir);
  say(`  seeded in ${meta.seed_seconds.toFixed(0)} s`);
  return { dataDir: path.join(dir, 'data'), meta, seededNow: true };
}

function pickTemplate(r: number): string {
  let x = r * FLEET_MIX.reduce((s, m) => s + m[1], 0);
  for (const [t, w] of FLEET_MIX) if ((x -= w) < 0) return t;
  return FLEET_MIX[0][0];
}

async function seed(dataDir: string, key: string): Promise<ScaleMeta> {
  const began = performance.now();
  const app = openAppliance({}, loadConfig({ dataDir }, { CONFVAULT_LOG_LEVEL: 'silent' }));
  const { db } = app;
  // Bench data, thrown away if interrupted: no journal, no fsync.
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -524288');
  try {
    const password = 'scale-admin-password-1';
    createRole(db, SYSTEM_ACTOR, { name: 'scale-admin', permissions: PERMISSIONS });
    await createUser(db, SYSTEM_ACTOR, { username: 'scale-admin', password, role: 'scale-admin', groups: null });
    const adminKey = createApiKey(db, SYSTEM_ACTOR, { username: 'scale-admin', name: 'scale bench' }).key;
    const inv = insertFleet(app);
    createRole(db, SYSTEM_ACTOR, { name: 'scale-scoped', permissions: ['devices.view', 'backups.view', 'dashboard.view'] });
    await createUser(db, SYSTEM_ACTOR, { username: 'scale-scoped', password, role: 'scale-scoped', groups: [inv.regionId] });
    const scopedKey = createApiKey(db, SYSTEM_ACTOR, { username: 'scale-scoped', name: 'scale bench' }).key;
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('ANALYZE');
    const counts = db
      .prepare(
        'SELECT (SELECT count(*) FROM devices) AS devices, (SELECT count(*) FROM device_groups) AS groups, (SELECT total FROM backup_totals) AS backups, (SELECT count(*) FROM snapshots) AS snapshots',
      )
      .get() as ScaleMeta['counts'];
    const sample = db.prepare('SELECT id, name FROM devices WHERE id = ?').get(inv.sampleId) as { id: number; name: string };
    return {
      cache_key: key,
      seeded_at: new Date().toISOString(),
      seed_seconds: Math.round(performance.now() - began) / 1000,
      admin_user: 'scale-admin',
      admin_password: password,
      admin_key: adminKey,
      scoped_key: scopedKey,
      region_group_id: inv.regionId,
      sample_device_id: sample.id,
      sample_device_name: sample.name,
      counts: { ...counts, db_mb: Math.round(statSync(app.dbFile).size / 2 ** 20) },
    };
  } finally {
    app.close();
  }
}

/**
 * Groups (4 regions > 10 sites > 10 closets), 100,000 devices, and per device three backups over the last 20 days
 * (a first version, a change for half of them, some failures), each version's text written as the store writes it.
 */
function insertFleet(app: Appliance) {
  const { db, secrets } = app;
  const now = Date.now();
  const rnd = prng(100_000);
  const templates = new Map(
    (db.prepare('SELECT name, id FROM templates WHERE builtin = 1').all() as { name: string; id: number }[]).map((t) => [t.name, t.id]),
  );
  const cred = createCredential(db, SYSTEM_ACTOR, secrets, { name: 'fleet', username: 'backup', password: 'Fleet-Pass-1!' }).id;
  const group = db.prepare('INSERT INTO device_groups (name, parent_id, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?)');
  const device = db.prepare(
    `INSERT INTO devices (name, hostname, port, protocol, group_id, credential_id, template_id, enabled, description, created_at, updated_at)
     VALUES (?, ?, 22, 'ssh', ?, ?, ?, ?, '', ?, ?)`,
  );
  const backup = db.prepare(
    `INSERT INTO backups (id, device_id, template_id, trigger, started_at, finished_at, success, error_message, failure_type,
                          duration_ms, config_snapshot_hash, config_size, change_fingerprint, changed)
     VALUES (?, ?, ?, 'schedule', ?, ?, ?, ?, ?, 5000, ?, ?, ?, ?)`,
  );
  const snapshot = db.prepare('INSERT INTO snapshots (hash, size, stored_size, compressed, created_at) VALUES (?, ?, ?, 1, ?) ON CONFLICT (hash) DO NOTHING');
  const last = db.prepare('UPDATE devices SET last_backup_id = ?, reachability = ?, reachability_checked_at = ?, reachability_error = ? WHERE id = ?');
  const root = app.snapshots.root;
  for (let i = 0; i < 256; i++) mkdirSync(path.join(root, i.toString(16).padStart(2, '0')), { recursive: true });
  const store = (text: string, at: number) => {
    const s = prepareSnapshot(text, true);
    writeFileSync(path.join(root, s.hash.slice(0, 2), `${s.hash}.gz`), s.body);
    snapshot.run(s.hash, s.size, s.body.length, at);
    return s;
  };
  let regionId = 0;
  let sampleId = 0;
  db.transaction(() => {
    const closets: { id: number; label: string }[] = [];
    for (const region of REGIONS) {
      const rid = Number(group.run(region.toUpperCase(), null, `All sites of ${region}`, now, now).lastInsertRowid);
      if (!regionId) regionId = rid;
      for (let s = 0; s < SITES; s++) {
        const sid = Number(group.run(`${region}-site${s}`, rid, '', now, now).lastInsertRowid);
        for (let c = 0; c < CLOSETS; c++)
          closets.push({ id: Number(group.run(`${region}-s${s}-closet${c}`, sid, '', now, now).lastInsertRowid), label: `${region}-s${s}-c${c}` });
      }
    }
    for (let i = 0; i < SCALE_DEVICES; i++) {
      const template = pickTemplate(rnd());
      const closet = closets[i % closets.length];
      const name = `${closet.label}-${template.split('-')[0]}-${String(i).padStart(6, '0')}`;
      const hostname = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
      const groupId = i % UNGROUPED_EVERY === 42 ? null : closet.id;
      const created = now - 60 * DAY;
      const id = Number(device.run(name, hostname, groupId, cred, templates.get(template)!, rnd() < 0.02 ? 0 : 1, created, created).lastInsertRowid);
      if (i === 54_321) sampleId = id;
      const changes = rnd() < 0.5;
      const v0 = store(deviceConfig(name, template, i, 0), now - 20 * DAY);
      const v1 = changes ? store(deviceConfig(name, template, i, 1), now - 10 * DAY) : v0;
      const times = [now - 20 * DAY, now - 10 * DAY, now - Math.floor(rnd() * DAY)];
      const failAt = rnd() < 0.06 ? 2 : -1;
      let lastId = '';
      times.forEach((t, k) => {
        const bid = `${String(i).padStart(8, '0')}-0000-4000-8000-${String(k).padStart(12, '0')}`;
        lastId = bid;
        if (k === failAt) {
          backup.run(
            bid,
            id,
            templates.get(template)!,
            t,
            t + 5000,
            0,
            `No answer from ${hostname}:22 within 10 s (connect timeout).`,
            'TIMEOUT',
            null,
            null,
            null,
            0,
          );
          return;
        }
        const s = k === 0 ? v0 : v1;
        backup.run(bid, id, templates.get(template)!, t, t + 5000, 1, null, null, s.hash, s.size, s.hash, k === 1 && changes ? 1 : 0);
      });
      const down = failAt === 2;
      last.run(lastId, down ? 'unreachable' : 'reachable', times[2] + 5000, down ? `No answer from ${hostname}:22 within 10 s.` : null, id);
    }

    copyDevicesLastBackup(db);
  })();
  return { regionId, sampleId };
}
