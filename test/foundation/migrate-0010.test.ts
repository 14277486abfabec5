// Schema 0010 on a database holding data: every row, index and trigger survives the AUTOINCREMENT rebuild, foreign keys hold.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { loadMigrations, migrate, schemaVersion, type Migration } from '../../src/db/migrate';
import { openDatabase, type DB } from '../../src/db/open';
import { tempDir } from '../helpers/appliance';
import { rawScript, rawState } from '../helpers/seed';

const root = tempDir('confvault-m0010-');
after(() => rmSync(root, { recursive: true, force: true }));

const all = loadMigrations();
const before0010 = all.filter((m) => m.version < 10);
const REBUILT = ['roles', 'device_groups', 'users', 'api_keys', 'credentials', 'templates', 'devices'];

let seq = 0;
function oldDatabase(): { file: string; db: DB } {
  const file = path.join(root, `old${++seq}.db`);
  const db = openDatabase(file);
  migrate(db, file, before0010);
  return { file, db };
}

/** Rows of every table written by an earlier release (explicit ids, gaps included, names that only fold equal). */
function seed(db: DB): void {
  const blob = Buffer.from([0, 1, 2, 250]);
  const OLD = 'rows an earlier release wrote, before migration 0010';
  const cred = (...v: unknown[]) =>
    rawState(
      db,
      OLD,
      'INSERT INTO credentials (id, name, username, password_enc, private_key_enc, passphrase_enc, enable_secret_enc, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ...v,
    );
  cred(1, 'cred-a', 'backup', blob, null, null, blob, 'd', 1, 1);
  cred(2, 'Straße', '', null, blob, blob, null, '', 2, 2);
  cred(3, 'STRASSE', 'u', blob, null, null, null, '', 3, 3);
  rawScript(
    db,
    OLD,
    `
    INSERT INTO roles (id, name, description, builtin, created_at) VALUES
      (1, 'administrator', 'Every permission', 1, 1), (2, 'operators', 'ops', 0, 2), (5, 'readers', '', 0, 3);
    INSERT INTO role_permissions (role_id, permission) VALUES (2, 'devices.view'), (2, 'backups.run'), (5, 'devices.view');
    INSERT INTO device_groups (id, name, parent_id, description, schedule, created_at, updated_at) VALUES
      (1, 'Core', NULL, 'root', '0 3 * * *', 1, 1), (2, 'Berlin', 1, '', NULL, 2, 2), (3, 'berlin', NULL, '', NULL, 3, 3),
      (4, 'Zürich', NULL, '', NULL, 4, 4), (6, 'ZÜRICH', NULL, '', NULL, 6, 6), (7, 'ZÜRICH', 1, '', NULL, 7, 7);
    INSERT INTO users (id, username, password_hash, role_id, scope_all, timezone, disabled, must_change_password, created_at, updated_at) VALUES
      (1, 'admin', 'h1', 1, 1, NULL, 0, 0, 1, 1), (3, 'alice', 'h3', 2, 0, 'Europe/Berlin', 0, 1, 2, 2), (4, 'bob', 'h4', 5, 1, NULL, 1, 0, 3, 3);
    INSERT INTO user_scope_groups (user_id, group_id) VALUES (3, 2), (3, 4);
    INSERT INTO templates (id, name, vendor, description, builtin, spec, created_at, updated_at) VALUES
      (1, 'cisco-ios', 'Cisco', '', 1, '{"mode":"shell"}', 1, 1), (9, 'custom-a', 'X', 'mine', 0, '{}', 2, 2);
    INSERT INTO devices (id, name, hostname, port, protocol, group_id, credential_id, template_id, enabled, description, schedule,
                         host_key, accept_host_key_change, reachability, reachability_checked_at, reachability_error, last_backup_id, created_at, updated_at) VALUES
      (1, 'Zürich-1', '192.0.2.1', 22, 'ssh', 4, 1, 1, 1, 'first', NULL, 'SHA256:x', 0, 'reachable', 10, NULL, 'b-1-2', 1, 1),
      (2, 'ZÜRICH-1', '192.0.2.2', 22, 'ssh', 2, 1, 1, 1, '', NULL, NULL, 0, 'unknown', NULL, NULL, NULL, 2, 2),
      (3, 'Zu\u0308rich-1', '192.0.2.3', 23, 'telnet', NULL, 2, 9, 0, '', '0 4 * * *', NULL, 1, 'unreachable', 11, 'timeout', NULL, 3, 3),
      (4, 'core1', 'core1.example.net', 22, 'ssh', 1, 2, 9, 1, '', NULL, NULL, 0, 'unknown', NULL, NULL, NULL, 4, 4),
      (8, 'edge8', '192.0.2.8', 22, 'ssh', 7, 1, 1, 1, '', NULL, NULL, 0, 'unknown', NULL, NULL, NULL, 5, 5);
    INSERT INTO backups (id, device_id, template_id, trigger, started_at, finished_at, success, error_message, failure_type, duration_ms,
                         config_snapshot_hash, config_size, change_fingerprint, changed) VALUES
      ('b-1-1', 1, 1, 'schedule', 100, 110, 1, NULL, NULL, 10, 'h1', 50, 'f1', 1),
      ('b-1-2', 1, 1, 'manual', 200, 210, 0, 'auth failed', 'auth', 10, NULL, NULL, NULL, 0),
      ('b-4-1', 4, 9, 'api', 300, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, 0),
      ('b-8-1', 8, NULL, 'import', 400, 401, 1, NULL, NULL, 1, 'h1', 50, 'f1', 1);
    INSERT INTO snapshots (hash, size, stored_size, compressed, created_at) VALUES ('h1', 50, 30, 1, 100);
    INSERT INTO web_sessions (id_hash, user_id, csrf_token, created_at, last_seen_at, expires_at) VALUES (x'00ff', 3, 'csrf', 1, 2, 3);
    INSERT INTO audit_log (at, user_id, actor, action, target, details, door, door_ref, request_id, changes) VALUES
      (5, 3, 'alice', 'device.update', 'device 1', '{}', 'api', '2', 'req-1', '{"name":{"before":"a","after":"b"}}'),
      -- Records deleted before the upgrade, the newest of their kind: known only from the trail.
      (6, 1, 'admin', 'device.delete', 'device 20', '{}', 'web', NULL, NULL, '{}'),
      (7, 1, 'admin', 'group.delete', 'group 12', '{}', 'web', NULL, NULL, '{}'),
      (8, 1, 'admin', 'apikey.revoke', 'key 11', '{}', 'web', NULL, NULL, '{}'),
      (9, 1, 'admin', 'template.delete', 'template 3', '{}', 'web', NULL, NULL, '{}'),
      (10, 1, 'admin', 'credential.delete', 'credential 99999999999999999999', '{}', 'web', NULL, NULL, '{}'),
      (11, 1, 'admin', 'credential.delete', 'credential 7b', '{}', 'web', NULL, NULL, '{}');
  `,
  );
  const key = 'INSERT INTO api_keys (id, key_hash, prefix, name, user_id, created_at, expires_at, last_used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)';
  rawState(db, OLD, key, 1, Buffer.alloc(32, 1), 'cv_aaaa', 'ci', 3, 1, null, 5, null);
  rawState(db, OLD, key, 6, Buffer.alloc(32, 2), 'cv_bbbb', '', 1, 2, 99, null, 7);
}

type Rows = Map<string, string[]>;

/** Every row of every table, as sorted JSON (WITHOUT ROWID tables have no rowid to order by). */
function allRows(db: DB): Rows {
  const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[];
  return new Map(tables.map((t) => [t, (db.prepare(`SELECT * FROM "${t}"`).all() as object[]).map((r) => JSON.stringify(r)).sort()]));
}

function schemaObjects(db: DB): Map<string, string> {
  const rows = db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE type IN ('index', 'trigger') AND sql IS NOT NULL").all() as {
    type: string;
    name: string;
    tbl_name: string;
    sql: string;
  }[];
  return new Map(rows.map((r) => [`${r.type} ${r.name} on ${r.tbl_name}`, r.sql]));
}

test('0010 on a database holding data: every row, index and trigger survives, ids continue above the highest, foreign keys hold', () => {
  const { file, db } = oldDatabase();
  try {
    seed(db);
    const rowsBefore = allRows(db);
    const objectsBefore = schemaObjects(db);
    const epochBefore = db.prepare('SELECT epoch FROM auth_epoch').pluck().get() as number;
    const countsBefore = db.prepare('SELECT device_id, total, version FROM device_backup_counts ORDER BY device_id').all();

    // Up to 0013, which rebuilds backups with a new column (its own test: migrate-0013.test.ts).
    const upTo0013 = all.filter((m) => m.version < 13);
    const r = migrate(db, file, upTo0013);
    assert.deepEqual(
      r.applied,
      upTo0013.filter((m) => m.version >= 10).map((m) => m.version),
    );
    assert.ok(r.backupFile && existsSync(r.backupFile), 'a copy is written before migrating');
    assert.equal(db.pragma('foreign_keys', { simple: true }), 1, 'foreign keys are enforced again');
    assert.deepEqual(db.pragma('foreign_key_check'), []);
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');

    // Rows: identical, except the names that only folded equal (renamed, audited) and the counters that moved.
    const rowsAfter = allRows(db);
    const renamed: Record<string, Record<number, string>> = {
      devices: { 2: 'ZÜRICH-1 (2)', 3: 'Zu\u0308rich-1 (3)' },
      device_groups: { 6: 'ZÜRICH (6)' },
      credentials: { 3: 'STRASSE (3)' },
    };
    for (const [table, before] of rowsBefore) {
      if (['audit_log', 'auth_epoch', 'schema_migrations'].includes(table)) continue;
      const fix = renamed[table];
      const expected = fix
        ? before.map((j) => {
            const row = JSON.parse(j) as { id: number; name: string };
            return JSON.stringify(fix[row.id] ? { ...row, name: fix[row.id] } : row);
          })
        : before;
      // settings gains the Unicode version the name keys were computed with.
      const after = rowsAfter.get(table)!.filter((j) => !j.startsWith('{"key":"name_key_unicode"'));
      assert.deepEqual(after, [...expected].sort(), `rows of ${table}`);
    }
    // Blobs came through byte for byte.
    assert.deepEqual(db.prepare('SELECT password_enc FROM credentials WHERE id = 1').pluck().get(), Buffer.from([0, 1, 2, 250]));
    assert.deepEqual(db.prepare('SELECT key_hash FROM api_keys WHERE id = 6').pluck().get(), Buffer.alloc(32, 2));
    // "ZÜRICH" under Core is a different sibling set: kept.
    assert.equal(db.prepare('SELECT name FROM device_groups WHERE id = 7').pluck().get(), 'ZÜRICH');

    const audit = db.prepare("SELECT actor, door, action, target, changes FROM audit_log WHERE actor = 'system' ORDER BY target").all();
    assert.deepEqual(audit, [
      { actor: 'system', door: 'system', action: 'credential.update', target: 'credential 3', changes: '{"name":{"before":"STRASSE","after":"STRASSE (3)"}}' },
      { actor: 'system', door: 'system', action: 'device.update', target: 'device 2', changes: '{"name":{"before":"ZÜRICH-1","after":"ZÜRICH-1 (2)"}}' },
      {
        actor: 'system',
        door: 'system',
        action: 'device.update',
        target: 'device 3',
        changes: '{"name":{"before":"Zu\u0308rich-1","after":"Zu\u0308rich-1 (3)"}}',
      },
      { actor: 'system', door: 'system', action: 'group.update', target: 'group 6', changes: '{"name":{"before":"ZÜRICH","after":"ZÜRICH (6)"}}' },
    ]);
    assert.ok((db.prepare('SELECT epoch FROM auth_epoch').pluck().get() as number) > epochBefore, 'cached principals are read again');

    // Every index and trigger is back with the same definition; the tables now use AUTOINCREMENT.
    const objectsAfter = schemaObjects(db);
    // Later migrations that redefine an object on purpose (0014: the history version moves on any backup update).
    const redefinedLater = new Set(['trigger backups_history_version_update on backups']);
    for (const [key, sql] of objectsBefore) if (!redefinedLater.has(key)) assert.equal(objectsAfter.get(key), sql, key);
    for (const t of REBUILT) {
      const sql = db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?").pluck().get(t) as string;
      assert.match(sql, /id\s+INTEGER PRIMARY KEY AUTOINCREMENT/, t);
      assert.match(sql, /\) STRICT$/, t);
    }
    const sequence = Object.fromEntries(
      (db.prepare('SELECT name, seq FROM sqlite_sequence').all() as { name: string; seq: number }[]).map((r) => [r.name, r.seq]),
    );
    // Highest id, or the highest the audit trail names (device 20, group 12, key 11); junk targets are ignored.
    assert.deepEqual(sequence, { roles: 5, device_groups: 12, users: 4, api_keys: 11, credentials: 3, templates: 9, devices: 20 });

    // The triggers still run: history versions (0005), backup counters (0002), the principal epoch (0004).
    assert.deepEqual(db.prepare('SELECT device_id, total, version FROM device_backup_counts ORDER BY device_id').all(), countsBefore);
    db.prepare("UPDATE backups SET finished_at = 310, success = 1 WHERE id = 'b-4-1'").run();
    const v4 = db.prepare('SELECT version FROM device_backup_counts WHERE device_id = 4').pluck();
    assert.notEqual(v4.get(), (countsBefore as { device_id: number; version: number }[]).find((c) => c.device_id === 4)!.version);
    const epoch = db.prepare('SELECT epoch FROM auth_epoch').pluck();
    const e0 = epoch.get() as number;
    db.prepare('UPDATE users SET disabled = 0 WHERE id = 4').run();
    db.prepare('UPDATE api_keys SET revoked_at = 8 WHERE id = 1').run();
    db.prepare('UPDATE device_groups SET parent_id = 4 WHERE id = 3').run();
    db.prepare('DELETE FROM role_permissions WHERE role_id = 5').run();
    assert.equal(epoch.get(), e0 + 4);

    // Foreign keys still hold in both directions: a delete cascades or is refused as before.
    assert.throws(() => db.prepare('DELETE FROM credentials WHERE id = 1').run(), /FOREIGN KEY/);
    db.prepare('DELETE FROM devices WHERE id = 8').run();
    assert.equal(db.prepare('SELECT count(*) FROM backups WHERE device_id = 8').pluck().get(), 0, 'backups cascade with their device');
    db.prepare('DELETE FROM users WHERE id = 3').run();
    assert.equal(db.prepare('SELECT count(*) FROM api_keys WHERE user_id = 3').pluck().get(), 0);
    assert.equal(db.prepare('SELECT count(*) FROM web_sessions').pluck().get(), 0);

    // Ids: the deleted highest one is not handed out again.
    const now = Date.now();
    const id = db
      .prepare(
        "INSERT INTO devices (name, hostname, port, protocol, credential_id, template_id, created_at, updated_at) VALUES ('new', 'h', 22, 'ssh', 1, 1, ?, ?)",
      )
      .run(now, now).lastInsertRowid;
    assert.equal(id, 21);

    // Uniqueness folds case beyond ASCII, and NFC.
    for (const name of ['zürich-1', 'ZU\u0308RICH-1', 'NEW']) {
      assert.throws(
        () =>
          db
            .prepare(
              "INSERT INTO devices (name, hostname, port, protocol, credential_id, template_id, created_at, updated_at) VALUES (?, 'h', 22, 'ssh', 1, 1, 0, 0)",
            )
            .run(name),
        (err: unknown) => (err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE',
        name,
      );
    }
    assert.throws(() => db.prepare("INSERT INTO credentials (name, created_at, updated_at) VALUES ('strasse', 0, 0)").run(), /UNIQUE/);
    assert.throws(() => db.prepare("UPDATE device_groups SET name = 'zürich' WHERE id = 6").run(), /UNIQUE/, 'siblings under the root');
  } finally {
    db.close();
  }
});

test('0010 on an empty database (a fresh install) and on one already at 0010: nothing to do twice', () => {
  const file = path.join(root, 'fresh.db');
  const db = openDatabase(file);
  try {
    migrate(db, file);
    assert.equal(schemaVersion(db), all.at(-1)!.version);
    assert.deepEqual(migrate(db, file), { applied: [], backupFile: null });
    assert.deepEqual(db.prepare('SELECT name, seq FROM sqlite_sequence WHERE seq <> 0').all(), []);
  } finally {
    db.close();
  }
});

test('every device deleted before the upgrade: the next one does not start again at 1', () => {
  const { file, db } = oldDatabase();
  try {
    db.exec(`
      INSERT INTO credentials (id, name, created_at, updated_at) VALUES (1, 'c', 0, 0);
      INSERT INTO templates (id, name, spec, created_at, updated_at) VALUES (1, 't', '{}', 0, 0);
      INSERT INTO audit_log (at, actor, action, target) VALUES (1, 'admin', 'device.create', 'device 3'), (2, 'admin', 'device.delete', 'device 3');
    `);
    migrate(db, file);
    const id = db
      .prepare(
        "INSERT INTO devices (name, hostname, port, protocol, credential_id, template_id, created_at, updated_at) VALUES ('d', 'h', 22, 'ssh', 1, 1, 0, 0)",
      )
      .run().lastInsertRowid;
    assert.equal(id, 4);
  } finally {
    db.close();
  }
});

test('a migration that leaves a row pointing at nothing is rolled back with the violation named, foreign keys enforced again', () => {
  const { file, db } = oldDatabase();
  try {
    seed(db);
    const dangling: Migration = { version: 10, name: 'dangling', sql: 'DELETE FROM roles WHERE id = 5; CREATE TABLE widgets (id INTEGER PRIMARY KEY) STRICT;' };
    assert.throws(
      () => migrate(db, file, [...before0010, dangling]),
      /migration 0010_dangling failed: 2 foreign key violations \(users row 4 -> roles, role_permissions row \? -> roles\)/,
    );
    assert.equal(schemaVersion(db), before0010.at(-1)!.version);
    assert.equal(db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'widgets'").pluck().get(), 0);
    assert.equal(db.prepare('SELECT count(*) FROM roles WHERE id = 5').pluck().get(), 1);
    assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
  } finally {
    db.close();
  }
});

test('0010 refuses to run when a rebuilt table carries a trigger or index it would not recreate', () => {
  const { file, db } = oldDatabase();
  try {
    db.exec('CREATE TRIGGER stranger AFTER DELETE ON devices BEGIN UPDATE auth_epoch SET epoch = epoch + 1; END;');
    assert.throws(() => migrate(db, file), /0010_ids_never_reused failed: .*0010 would drop an index or trigger it does not recreate/);
    assert.equal(schemaVersion(db), before0010.at(-1)!.version);
    assert.equal(db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'stranger'").pluck().get(), 1);
  } finally {
    db.close();
  }
});

test('name keys computed by other Unicode tables (another Node.js) are rebuilt once when the database is opened', () => {
  const file = path.join(root, 'unicode.db');
  const db = openDatabase(file);
  try {
    migrate(db, file);
    assert.equal(db.prepare("SELECT value FROM settings WHERE key = 'name_key_unicode'").pluck().get(), process.versions.unicode);
    // A writer whose folding differed (here: none at all) leaves index entries this Node.js would not compute.
    db.function('name_key', { deterministic: true }, (s: unknown) => s);
    db.exec("INSERT INTO roles (name, created_at) VALUES ('Ops', 0)");
    db.prepare("UPDATE settings SET value = 'older' WHERE key = 'name_key_unicode'").run();
    db.close();

    const reopened = openDatabase(file);
    try {
      assert.notEqual(reopened.pragma('integrity_check', { simple: true }), 'ok', 'the stale entry is visible');
      assert.deepEqual(migrate(reopened, file), { applied: [], backupFile: null });
      assert.equal(reopened.pragma('integrity_check', { simple: true }), 'ok');
      assert.equal(reopened.prepare("SELECT value FROM settings WHERE key = 'name_key_unicode'").pluck().get(), process.versions.unicode);
      assert.throws(() => reopened.exec("INSERT INTO roles (name, created_at) VALUES ('OPS', 0)"), /UNIQUE/);
    } finally {
      reopened.close();
    }
  } finally {
    if (db.open) db.close();
  }
});
