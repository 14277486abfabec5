// Schema 0013 on a database holding backups: every row, index and trigger of backups survives the CHECK rebuild, counters are not doubled.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { loadMigrations, migrate } from '../../src/db/migrate';
import { openDatabase } from '../../src/db/open';
import { tempDir } from '../helpers/appliance';
import { rawScript, rawState } from '../helpers/seed';

const root = tempDir('confvault-m0013-');
after(() => rmSync(root, { recursive: true, force: true }));

const all = loadMigrations();
const before0013 = all.filter((m) => m.version < 13);

const schemaOf = (db: ReturnType<typeof openDatabase>) =>
  db.prepare("SELECT type, name, sql FROM sqlite_schema WHERE tbl_name = 'backups' AND type IN ('index', 'trigger') ORDER BY name").all() as {
    name: string;
    sql: string | null;
  }[];

test('backups keep every row, index, trigger and counter; trigger "event" and changed_by become possible', () => {
  const file = path.join(root, 'old.db');
  const db = openDatabase(file);
  migrate(db, file, before0013);
  const now = 1_700_000_000_000;
  rawScript(
    db,
    'a database before migration 0013',
    `
    INSERT INTO credentials (id, name, username, created_at, updated_at) VALUES (1, 'c', 'u', 1, 1);
    INSERT INTO templates (id, name, vendor, description, builtin, spec, created_at, updated_at) VALUES (1, 't', 'v', '', 0, '{}', 1, 1);
    INSERT INTO devices (id, name, hostname, port, protocol, credential_id, template_id, created_at, updated_at) VALUES (1, 'd1', 'h', 22, 'ssh', 1, 1, 1, 1), (2, 'd2', 'h', 22, 'ssh', 1, 1, 1, 1);
  `,
  );
  const insert =
    'INSERT INTO backups (id, device_id, template_id, trigger, started_at, finished_at, success, error_message, failure_type, duration_ms, config_snapshot_hash, config_size, change_fingerprint, changed) VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, 10, ?, ?, ?, ?)';
  const ins = { run: (...v: unknown[]) => rawState(db, 'backups before migration 0013', insert, ...v) };
  ins.run('a', 1, 'schedule', now, now + 5, 1, null, null, 'h1', 100, 'f1', 0);
  ins.run('b', 1, 'manual', now + 10, now + 15, 0, 'refused', 'CONNECTION_REFUSED', null, null, null, 0);
  ins.run('c', 2, 'api', now + 20, null, 0, null, null, null, null, null, 0);
  ins.run('d', 2, 'cli', now + 30, now + 31, 1, null, null, 'h2', 50, 'f2', 1);
  const snapshot = (sql: string) => db.prepare(sql).all();
  const tables = [
    'SELECT * FROM backups ORDER BY id',
    'SELECT * FROM backup_totals',
    'SELECT device_id, total FROM device_backup_counts ORDER BY device_id',
    'SELECT * FROM backup_outcome_buckets ORDER BY bucket',
  ];
  const beforeData = tables.map(snapshot);
  const beforeSchema = schemaOf(db);

  migrate(
    db,
    file,
    all.filter((m) => m.version <= 13),
  ); // 0014 redefines a trigger on purpose

  const afterRows = snapshot('SELECT * FROM backups ORDER BY id') as Record<string, unknown>[];
  assert.deepEqual(
    afterRows.map(({ changed_by, ...r }) => (assert.equal(changed_by, null), r)),
    beforeData[0],
  );
  assert.deepEqual(tables.slice(1).map(snapshot), beforeData.slice(1), 'counters kept, not counted twice');
  assert.deepEqual(schemaOf(db), beforeSchema, 'same indexes and triggers, same definitions');
  assert.deepEqual(db.pragma('foreign_key_check'), []);

  // The triggers still count: a new event backup with changed_by.
  db.prepare(
    "INSERT INTO backups (id, device_id, template_id, trigger, started_at, finished_at, success, config_size, changed_by) VALUES ('e', 1, 1, 'event', ?, ?, 1, 7, 'alice')",
  ).run(now + 40, now + 41);
  assert.deepEqual(db.prepare('SELECT total, bytes_before_dedup FROM backup_totals').get(), { total: 5, bytes_before_dedup: 157 });
  assert.equal(db.prepare('SELECT total FROM device_backup_counts WHERE device_id = 1').pluck().get(), 3);
  assert.throws(() => db.prepare("INSERT INTO backups (id, device_id, trigger, started_at) VALUES ('x', 1, 'bogus', 1)").run(), /CHECK/);
  db.close();
});
