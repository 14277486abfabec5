// System statistics: exact shape, every figure against an independent count, the 24-hour window at bucket edges, the 0002 counters.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { loadMigrations, migrate } from '../../src/db/migrate';
import { openDatabase, type DB } from '../../src/db/open';
import { dedupRatio } from '../../src/features/stats/stats.service';
import { OUTCOME_BUCKET_MS, countOutcomesSince } from '../../src/features/stats/stats.store';
import { sha256Hex } from '../../src/store/snapshots';
import { startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { bulkInsertBackups, recordBackup, seedInventory, seedInventoryDevice, type Inventory } from './backups.seed';
import { rawScript, rawState } from '../helpers/seed';
import type { Json } from '../helpers/api';

const HOUR = 3_600_000;

const SHAPE = {
  top: ['backups', 'credentials', 'devices', 'failed_backups_24h', 'groups', 'storage', 'templates', 'total_devices', 'unreachable_devices'],
  devices: ['enabled', 'total', 'unreachable'],
  backups: ['last_24h', 'running', 'total'],
  last_24h: ['failed', 'succeeded'],
  storage: ['bytes_before_dedup', 'bytes_stored', 'dedup_ratio', 'snapshot_files'],
};

function directOutcomes(db: DB, since: number) {
  return db
    .prepare(
      'SELECT ifnull(sum(success), 0) AS succeeded, ifnull(sum(1 - success), 0) AS failed FROM backups WHERE started_at >= ? AND finished_at IS NOT NULL',
    )
    .get(since) as { succeeded: number; failed: number };
}

function directCounters(db: DB) {
  return {
    devices: db.prepare('SELECT device_id, count(*) AS n FROM backups GROUP BY device_id ORDER BY device_id').all(),
    counted: db.prepare('SELECT device_id, total AS n FROM device_backup_counts WHERE total > 0 ORDER BY device_id').all(),
    snapshots: db.prepare('SELECT count(*) AS files, ifnull(sum(stored_size), 0) AS bytes_stored FROM snapshots').get(),
    snapshotTotals: db.prepare('SELECT files, bytes_stored FROM snapshot_totals').get(),
  };
}

describe('GET /stats', () => {
  let t: TestAppliance;
  let key: string;
  let inv: Inventory;
  let baseline: Json;

  before(async () => {
    t = await startTestAppliance();
    key = await t.keyFor({ permissions: ['dashboard.view'] });
    baseline = await (await t.api('/api/v1/stats', { key })).json();
    inv = seedInventory(t.services.db);
  });
  after(() => t.close());

  test('a fresh appliance: the exact field set, zero backups, ratio 1', () => {
    assert.deepEqual(Object.keys(baseline).sort(), SHAPE.top);
    assert.deepEqual(Object.keys(baseline.devices).sort(), SHAPE.devices);
    assert.deepEqual(Object.keys(baseline.backups).sort(), SHAPE.backups);
    assert.deepEqual(Object.keys(baseline.backups.last_24h).sort(), SHAPE.last_24h);
    assert.deepEqual(Object.keys(baseline.storage).sort(), SHAPE.storage);
    assert.deepEqual(baseline.devices, { total: 0, enabled: 0, unreachable: 0 });
    assert.deepEqual(baseline.backups, { total: 0, last_24h: { succeeded: 0, failed: 0 }, running: 0 });
    assert.deepEqual(baseline.storage, { snapshot_files: 0, bytes_stored: 0, bytes_before_dedup: 0, dedup_ratio: 1 });
    assert.equal(baseline.groups, 0);
    assert.equal(baseline.credentials, 0);
  });

  test('every figure matches an independent count', async () => {
    const { db } = t.services;
    const { credentialId, templateId } = inv;
    seedInventoryDevice(db, { name: 'off-1', credentialId, templateId, enabled: false, reachability: 'unreachable' });
    seedInventoryDevice(db, { name: 'down-1', credentialId, templateId, reachability: 'unreachable' });
    seedInventoryDevice(db, { name: 'up-1', credentialId, templateId, reachability: 'reachable' });
    const now = Date.now();
    const texts = ['hostname a\n', 'hostname a\n', 'hostname b\ninterface x\n', 'hostname a\n'];
    recordBackup(t.services, inv.devices.dA, { text: texts[0] }, now - 2 * HOUR);
    recordBackup(t.services, inv.devices.dA, { text: texts[1] }, now - HOUR);
    recordBackup(t.services, inv.devices.dB, { text: texts[2] }, now - 23 * HOUR);
    recordBackup(t.services, inv.devices.dB, { error: 'auth failed' }, now - 10 * 60_000);
    recordBackup(t.services, inv.devices.dNone, { error: 'timeout' }, now - 23.9 * HOUR);
    recordBackup(t.services, inv.devices.dNone, { text: texts[3] }, now - 25 * HOUR); // outside the window
    recordBackup(t.services, inv.devices.dNone, { error: 'old failure' }, now - 48 * HOUR); // outside the window
    recordBackup(t.services, inv.devices.dA1, 'running', now - 60_000);

    const res = await t.api('/api/v1/stats', { key });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const s = await res.json();
    assert.deepEqual(s.devices, { total: 7, enabled: 6, unreachable: 2 });
    assert.equal(s.groups, 3);
    assert.equal(s.credentials, 1);
    assert.equal(s.templates, baseline.templates + 1);
    assert.deepEqual(s.backups, { total: 8, last_24h: { succeeded: 3, failed: 2 }, running: 1 });
    // Two distinct texts on disk; their file sizes are what "bytes_stored" must add up to.
    const files = ['hostname a\n', 'hostname b\ninterface x\n'].map((text) => t.services.snapshots.locate(sha256Hex(text))!);
    const onDisk = files.reduce((n, f) => n + statSync(f).size, 0);
    const logical = texts.reduce((n, text) => n + Buffer.byteLength(text), 0);
    assert.deepEqual(s.storage, { snapshot_files: 2, bytes_stored: onDisk, bytes_before_dedup: logical, dedup_ratio: dedupRatio(logical, onDisk) });
    assert.equal(s.total_devices, s.devices.total);
    assert.equal(s.unreachable_devices, s.devices.unreachable);
    assert.equal(s.failed_backups_24h, s.backups.last_24h.failed);
  });

  test('dedup_ratio: logical over stored bytes, two decimals, 1 when nothing is stored', () => {
    assert.equal(dedupRatio(0, 0), 1);
    assert.equal(dedupRatio(1000, 0), 1);
    assert.equal(dedupRatio(1000, 300), 3.33);
    assert.equal(dedupRatio(300, 1000), 0.3);
  });

  test('the 24-hour window is exact at every bucket edge', () => {
    const { db } = t.services;
    const base = Math.floor(Date.UTC(2025, 2, 1) / OUTCOME_BUCKET_MS) * OUTCOME_BUCKET_MS;
    const device = seedInventoryDevice(db, { name: 'edges', credentialId: inv.credentialId, templateId: inv.templateId });
    // Records on, just before and just after bucket boundaries, some failed, some running.
    db.transaction(() => {
      bulkInsertBackups(db, { deviceIds: [device], perDevice: 600, newest: base + 30 * HOUR, stepMs: 179_999, failEvery: 3, hash: null });
    })();
    rawState(
      db,
      'records left running at bucket edges, a crash state',
      'UPDATE backups SET finished_at = NULL WHERE device_id = ? AND started_at % 7 = 0',
      device,
    );
    const probes = [
      base,
      base + 1,
      base - 1,
      base + OUTCOME_BUCKET_MS,
      base + OUTCOME_BUCKET_MS - 1,
      base + 12 * HOUR + 12_345,
      base + 29 * HOUR,
      base + 31 * HOUR,
      0,
    ];
    // Spread deterministically over the whole range (a prime stride, so no two probes share an offset).
    for (let i = 0; i < 200; i++) probes.push(base - HOUR + ((i * 7_919_993) % (33 * HOUR)));
    for (const since of probes) assert.deepEqual(countOutcomesSince(db, since), directOutcomes(db, since), `since ${since}`);
  });

  test('the 0002 counters follow updates and deletes the way retention and crash recovery make them', () => {
    const { db } = t.services;
    const why = 'the triggers under test, fed the row changes retention and crash recovery make';
    rawState(db, why, "UPDATE backups SET finished_at = started_at + 1, success = 0, failure_type = 'INTERRUPTED' WHERE finished_at IS NULL");
    rawState(db, why, 'DELETE FROM backups WHERE rowid % 3 = 0');
    // Deleting a device takes its records with it (ON DELETE CASCADE); its counter row goes too.
    rawState(db, why, "DELETE FROM devices WHERE name = 'edges'");
    assert.equal(db.prepare('SELECT count(*) FROM device_backup_counts WHERE device_id NOT IN (SELECT id FROM devices)').pluck().get(), 0);
    rawState(db, why, 'DELETE FROM snapshots WHERE hash NOT IN (SELECT config_snapshot_hash FROM backups WHERE config_snapshot_hash IS NOT NULL)');
    const c = directCounters(db);
    assert.deepEqual(c.counted, c.devices);
    assert.deepEqual(c.snapshotTotals, c.snapshots);
    for (const since of [0, Date.now() - 24 * HOUR, Date.UTC(2025, 2, 1, 7, 3)]) assert.deepEqual(countOutcomesSince(db, since), directOutcomes(db, since));
    const totals = db.prepare('SELECT total FROM backup_totals').pluck().get();
    assert.equal(totals, db.prepare('SELECT count(*) FROM backups').pluck().get());
  });
});

test('migration 0002 fills its counters from an existing database', () => {
  const dir = tempDir();
  const db = openDatabase(path.join(dir, 'upgrade.db'));
  try {
    migrate(
      db,
      null,
      loadMigrations().filter((m) => m.version < 2),
    );
    const now = Date.now();
    // A version-1 database: the services write today's schema, not this one.
    rawScript(
      db,
      'a database at schema version 1, before the migration under test',
      `INSERT INTO credentials (name, created_at, updated_at) VALUES ('c', 0, 0);
       INSERT INTO templates (name, spec, created_at, updated_at) VALUES ('t', '{"mode":"shell","prompt":null,"commands":["show running-config"]}', 0, 0);
       INSERT INTO devices (name, hostname, port, protocol, credential_id, template_id, created_at, updated_at)
       VALUES ('d1', 'h', 22, 'ssh', 1, 1, 0, 0), ('d2', 'h', 22, 'ssh', 1, 1, 0, 0), ('d3', 'h', 22, 'ssh', 1, 1, 0, 0);`,
    );
    const devices = db.prepare('SELECT id FROM devices ORDER BY id').pluck().all() as number[];
    bulkInsertBackups(db, { deviceIds: devices, perDevice: 500, newest: now, stepMs: 600_001, failEvery: 4, hash: null });
    rawState(
      db,
      'a database at schema version 1, before the migration under test',
      "INSERT INTO snapshots (hash, size, stored_size, compressed, created_at) VALUES ('h1', 100, 40, 1, 0), ('h2', 200, 90, 1, 0)",
    );
    migrate(
      db,
      null,
      loadMigrations().filter((m) => m.version <= 2),
    );
    const c = directCounters(db);
    assert.deepEqual(c.counted, c.devices);
    assert.deepEqual(c.snapshotTotals, { files: 2, bytes_stored: 130 });
    for (const since of [0, now - 24 * HOUR, now - 77 * HOUR + 5]) assert.deepEqual(countOutcomesSince(db, since), directOutcomes(db, since));
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
