// `db backup` while another process keeps committing rows: a consistent, complete, self-contained copy.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openAppliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { openDatabase } from '../../src/db/open';
import { REPO_ROOT, runCliAsync, tempDir } from '../helpers/appliance';

const root = tempDir('confvault-dbbackup-');
after(() => rmSync(root, { recursive: true, force: true }));

// Inserts audit rows one committed transaction at a time until stdin closes, then reports how many.
const WRITER = `
const Database = require(${JSON.stringify(path.join(REPO_ROOT, 'node_modules/better-sqlite3'))});
const db = new Database(process.argv[1], { timeout: 10000 });
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
const ins = db.prepare("INSERT INTO audit_log (at, actor, action, target) VALUES (?, 'writer', 'row', ?)");
let n = 0, stop = false;
process.stdin.on('end', () => { stop = true; }).resume();
(function loop() {
  for (let i = 0; i < 20 && !stop; i++) { ins.run(Date.now(), String(n)); n++; }
  if (stop) { db.close(); process.stdout.write(String(n)); return; }
  setImmediate(loop);
})();
`;

test('db backup while another process writes: the copy passes integrity_check and holds every row committed before it', async () => {
  const dataDir = path.join(root, 'data');
  const appliance = openAppliance({}, loadConfig({ dataDir }, {}));
  const dbFile = appliance.dbFile;
  appliance.close();

  const writer = spawn(process.execPath, ['-e', WRITER, dbFile], { stdio: ['pipe', 'pipe', 'pipe'] });
  let written = '';
  let writerErr = '';
  writer.stdout.on('data', (d) => (written += d));
  writer.stderr.on('data', (d) => (writerErr += d));
  const writerDone = new Promise<number | null>((resolve) => writer.once('exit', resolve));

  const reader = openDatabase(dbFile, { readonly: true });
  const count = () => reader.prepare("SELECT count(*) FROM audit_log WHERE actor = 'writer'").pluck().get() as number;
  try {
    const started = Date.now();
    while (count() < 500) {
      assert.ok(Date.now() - started < 20_000, `writer did not get going: ${writerErr}`);
      await sleep(20);
    }
    const committedBefore = count();
    const dest = path.join(root, 'copy.db');
    const r = await runCliAsync(['db', 'backup', dest, '--data-dir', dataDir]);
    const committedAfter = count();
    writer.stdin.end();
    assert.equal(await writerDone, 0, writerErr);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), dest);
    assert.ok(committedAfter > committedBefore, 'the writer kept committing while the copy was made');

    // One self-contained file, readable by the owner only.
    assert.equal(statSync(dest).mode & 0o777, 0o600);
    assert.equal(existsSync(`${dest}-wal`), false);
    assert.equal(existsSync(`${dest}-shm`), false);

    const copy = openDatabase(dest, { readonly: true });
    try {
      assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
      assert.deepEqual(copy.pragma('foreign_key_check'), []);
      const rows = copy.prepare("SELECT target FROM audit_log WHERE actor = 'writer' ORDER BY id").pluck().all() as string[];
      // Every row committed before the command ran, and a gap-free prefix of the writer's sequence: a snapshot, not a mix.
      assert.ok(rows.length >= committedBefore, `${rows.length} < ${committedBefore}`);
      assert.ok(rows.length <= committedAfter);
      rows.forEach((t, i) => assert.equal(t, String(i)));
      assert.deepEqual(
        copy.prepare('SELECT version FROM schema_migrations').pluck().all(),
        reader.prepare('SELECT version FROM schema_migrations').pluck().all(),
      );
    } finally {
      copy.close();
    }
    // Nothing the writer committed was lost from the live database either.
    assert.equal(count(), Number(written));
    assert.equal(reader.pragma('integrity_check', { simple: true }), 'ok');

    // An existing file is never overwritten.
    const again = await runCliAsync(['db', 'backup', dest, '--data-dir', dataDir]);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /already exists/);
  } finally {
    reader.close();
    if (writer.exitCode === null) writer.kill();
  }
});
