// SQLite: pragmas, numbered migrations (backup copy, records, rollback of a failing one), a too-new database refused, `db check`.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, existsSync, openSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { DatabaseTooNewError, loadMigrations, migrate, schemaVersion, type Migration } from '../../src/db/migrate';
import { openDatabase, type DB } from '../../src/db/open';
import { runCliAsync, tempDir } from '../helpers/appliance';

const root = tempDir('confvault-db-');
after(() => rmSync(root, { recursive: true, force: true }));

let seq = 0;
const dbFile = () => path.join(root, `t${++seq}.db`);

const real = loadMigrations();
const v1 = real.filter((m) => m.version === 1);
const m2: Migration = { version: 2, name: 'widgets', sql: 'CREATE TABLE widgets (id INTEGER PRIMARY KEY, name TEXT NOT NULL) STRICT;' };
const m3: Migration = { version: 3, name: 'widget_seed', sql: "INSERT INTO widgets (name) VALUES ('first');" };
const m3Broken: Migration = {
  version: 3,
  name: 'half_done',
  sql: "CREATE TABLE gadgets (id INTEGER PRIMARY KEY) STRICT; INSERT INTO widgets (name) VALUES ('x'); INSERT INTO no_such_table VALUES (1);",
};

function tables(db: DB): string[] {
  return db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").pluck().all() as string[];
}

function recorded(db: DB): { version: number; name: string }[] {
  return db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all() as { version: number; name: string }[];
}

/** A database as an earlier release left it: schema version 1 with an audit row in it. */
function existingV1(): { file: string; db: DB } {
  const file = dbFile();
  const db = openDatabase(file);
  migrate(db, file, v1);
  db.prepare("INSERT INTO audit_log (at, actor, action) VALUES (1, 'cli', 'before.upgrade')").run();
  return { file, db };
}

test('a new database gets the appliance pragmas and every shipped migration, recorded', () => {
  const file = dbFile();
  const db = openDatabase(file);
  try {
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(db.pragma('synchronous', { simple: true }), 2); // FULL
    assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
    assert.ok((db.pragma('busy_timeout', { simple: true }) as number) >= 1000);
    const r = migrate(db, file);
    assert.deepEqual(
      r.applied,
      real.map((m) => m.version),
    );
    assert.equal(r.backupFile, null, 'a brand-new database needs no copy');
    assert.deepEqual(
      recorded(db),
      real.map((m) => ({ version: m.version, name: m.name })),
    );
    assert.ok(tables(db).includes('users') && tables(db).includes('api_keys'));
    // Running again changes nothing.
    assert.deepEqual(migrate(db, file), { applied: [], backupFile: null });
    // Foreign keys are enforced.
    assert.throws(
      () => db.prepare("INSERT INTO users (username, password_hash, role_id, created_at, updated_at) VALUES ('x', 'h', 999, 0, 0)").run(),
      /FOREIGN KEY/,
    );
  } finally {
    db.close();
  }
});

test('upgrading an existing database keeps a copy of it first, then applies and records the new migrations', () => {
  const { file, db } = existingV1();
  try {
    const r = migrate(db, file, [...v1, m2, m3]);
    assert.deepEqual(r.applied, [2, 3]);
    assert.equal(r.backupFile, `${file}.pre-v2.bak`);
    assert.deepEqual(
      recorded(db).map((m) => m.version),
      [1, 2, 3],
    );
    assert.equal(recorded(db)[1].name, 'widgets');
    assert.deepEqual(db.prepare('SELECT name FROM widgets').pluck().all(), ['first']);
    assert.equal(schemaVersion(db), 3);

    // The copy is the database as it was: version 1, its rows, no new table.
    assert.ok(existsSync(r.backupFile));
    const copy = openDatabase(r.backupFile, { readonly: true });
    try {
      assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
      assert.deepEqual(
        recorded(copy).map((m) => m.version),
        [1],
      );
      assert.equal(tables(copy).includes('widgets'), false);
      assert.equal(copy.prepare("SELECT count(*) FROM audit_log WHERE action = 'before.upgrade'").pluck().get(), 1);
    } finally {
      copy.close();
    }
  } finally {
    db.close();
  }
});

test('a failing migration is rolled back whole, earlier ones stay, and the database stays usable', () => {
  const { file, db } = existingV1();
  try {
    assert.throws(() => migrate(db, file, [...v1, m2, m3Broken]), /migration 0003_half_done failed: .*no_such_table/);
    assert.equal(schemaVersion(db), 2);
    assert.deepEqual(
      recorded(db).map((m) => m.version),
      [1, 2],
    );
    // Nothing of 0003 remains: neither its table nor its row.
    assert.equal(tables(db).includes('gadgets'), false);
    assert.equal(db.prepare('SELECT count(*) FROM widgets').pluck().get(), 0);
    assert.equal(db.inTransaction, false);
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    db.prepare("INSERT INTO audit_log (at, actor, action) VALUES (2, 'cli', 'after.failure')").run();
    assert.equal(db.prepare('SELECT count(*) FROM audit_log').pluck().get(), 2);
    // The fixed release applies 0003 on the next start; the copy from the first attempt is kept, not overwritten.
    const r = migrate(db, file, [...v1, m2, m3]);
    assert.deepEqual(r.applied, [3]);
    assert.equal(r.backupFile, `${file}.pre-v3.bak`);
    assert.ok(existsSync(`${file}.pre-v2.bak`));
  } finally {
    db.close();
  }
});

test('a database from a newer release is refused and left untouched', () => {
  const { file, db } = existingV1();
  try {
    migrate(db, file, [...v1, m2]);
    assert.throws(
      () => migrate(db, file, v1),
      (err: unknown) => {
        assert.ok(err instanceof DatabaseTooNewError);
        assert.match(err.message, /schema version 2 is newer than this confvault \(knows up to 1\)/);
        return true;
      },
    );
    assert.equal(schemaVersion(db), 2);
    assert.equal(existsSync(`${file}.pre-v2.bak`), true);
  } finally {
    db.close();
  }
});

test('the CLI refuses a too-new database with one line and exit 1', async () => {
  const dataDir = path.join(root, 'too-new');
  assert.equal((await runCliAsync(['init', '--data-dir', dataDir])).status, 0);
  const db = openDatabase(path.join(dataDir, 'confvault.db'));
  db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'from_the_future', 0)").run();
  db.close();
  const r = await runCliAsync(['user', 'list', '--data-dir', dataDir]);
  assert.equal(r.status, 1);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /schema version 9999 is newer than this confvault/);
});

test('db check exits 0 on a sound database and 1 on a broken index or a foreign-key violation', async () => {
  const good = path.join(root, 'check-good');
  const badIndex = path.join(root, 'check-index');
  const badFk = path.join(root, 'check-fk');
  await Promise.all([good, badIndex, badFk].map((d) => runCliAsync(['init', '--data-dir', d])));

  // Garbage over the entries of one index page: damage that only integrity_check notices.
  const indexFile = path.join(badIndex, 'confvault.db');
  let db = openDatabase(indexFile);
  for (let i = 0; i < 50; i++) db.prepare("INSERT INTO audit_log (at, actor, action) VALUES (?, 'cli', 'x')").run(i);
  const rootpage = db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'audit_log_at'").pluck().get() as number;
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  db.pragma('journal_mode = DELETE');
  db.close();
  const fd = openSync(indexFile, 'r+');
  writeSync(fd, Buffer.alloc(200, 0x7f), 0, 200, rootpage * pageSize - 200);
  closeSync(fd);
  // A user pointing at a role that does not exist, written with enforcement off.
  db = openDatabase(path.join(badFk, 'confvault.db'));
  db.pragma('foreign_keys = OFF');
  db.prepare("INSERT INTO users (username, password_hash, role_id, created_at, updated_at) VALUES ('ghost', 'h', 4242, 0, 0)").run();
  db.close();

  const [ok, index, fk] = await Promise.all([good, badIndex, badFk].map((d) => runCliAsync(['db', 'check', '--data-dir', d])));
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /^database integrity: ok$/m);
  assert.match(ok.stdout, /^check: ok$/m);
  assert.equal(index.status, 1, index.stdout + index.stderr);
  assert.doesNotMatch(index.stdout, /^database integrity: ok$/m);
  assert.match(index.stdout, /^check: FAILED$/m);
  assert.equal(fk.status, 1, fk.stdout + fk.stderr);
  assert.match(fk.stdout, /^foreign keys: 1 violation/m);
  assert.match(fk.stdout, /^check: FAILED$/m);
});

test('a statement keeps the plan it was prepared with, whatever value is bound (SQLite built with ENABLE_QPSG)', () => {
  // Without the guarantee SQLite plans with the first bound value and prepares the statement again at every bind:
  // here it would use the partial index for 'open' (and 30 us more a run for a join on a bound key: build/runtime.mjs).
  const db = openDatabase(dbFile());
  try {
    const options = (db.pragma('compile_options') as { compile_options: string }[]).map((r) => r.compile_options);
    assert.ok(options.includes('ENABLE_QPSG'), `better-sqlite3 was built without SQLITE_ENABLE_QPSG: run npm ci (build/runtime.mjs install)`);
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, n INTEGER NOT NULL) STRICT; CREATE INDEX t_open ON t (n) WHERE kind = 'open';");
    const plan = (kind: string) =>
      (db.prepare('EXPLAIN QUERY PLAN SELECT id FROM t WHERE kind = ? AND n > 5').all(kind) as { detail: string }[]).map((r) => r.detail);
    assert.deepEqual(plan('open'), plan('closed'));
    assert.deepEqual(plan('open'), ['SCAN t']);
  } finally {
    db.close();
  }
});
