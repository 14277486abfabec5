// The appliance's own database copies ([maintenance] db_backup_schedule, keep-N) and `db restore` (checks, lock, file kept aside).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openAppliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { openDatabase } from '../../src/db/open';
import { listDbCopies, writeDbCopy } from '../../src/features/maintenance/db-backups';
import { runCliAsync, spawnServe, tempDir } from '../helpers/appliance';

const root = tempDir('confvault-dbcopies-');
after(() => rmSync(root, { recursive: true, force: true }));

function auditMarks(file: string): string[] {
  const db = openDatabase(file, { readonly: true });
  try {
    return db.prepare("SELECT target FROM audit_log WHERE actor = 'test-mark' ORDER BY id").pluck().all() as string[];
  } finally {
    db.close();
  }
}

function mark(file: string, target: string): void {
  const db = openDatabase(file);
  try {
    db.prepare("INSERT INTO audit_log (at, actor, action, target) VALUES (?, 'test-mark', 'mark', ?)").run(Date.now(), target);
  } finally {
    db.close();
  }
}

test('writeDbCopy: a verified, self-contained copy named by its UTC time; the newest N kept', async () => {
  const dataDir = path.join(root, 'unit');
  const a = openAppliance({}, loadConfig({ dataDir }, {}));
  try {
    const t0 = Date.UTC(2026, 10, 24, 2, 30, 0);
    const made: string[] = [];
    for (let i = 0; i < 4; i++) made.push((await writeDbCopy(a.db, dataDir, 3, t0 + i * 1000)).file);
    // Two in the same second get a sequence number, and count as the newer.
    const same = await writeDbCopy(a.db, dataDir, 3, t0 + 3000);
    assert.equal(path.basename(made[0]), 'confvault-20261124T023000Z.db');
    assert.equal(path.basename(same.file), 'confvault-20261124T023003Z-2.db');
    const kept = listDbCopies(path.join(dataDir, 'backups')).map((f) => path.basename(f));
    assert.deepEqual(kept, ['confvault-20261124T023003Z-2.db', 'confvault-20261124T023003Z.db', 'confvault-20261124T023002Z.db']);
    assert.deepEqual(
      same.pruned.map((f) => path.basename(f)),
      ['confvault-20261124T023001Z.db'],
    );
    // No -wal/-shm or partial file beside the copies.
    assert.deepEqual(readdirSync(path.join(dataDir, 'backups')).sort(), [...kept].sort());
    const copy = openDatabase(same.file, { readonly: true });
    try {
      assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
      assert.equal(copy.pragma('journal_mode', { simple: true }), 'delete');
    } finally {
      copy.close();
    }
  } finally {
    a.close();
  }
});

test('serve writes copies on db_backup_schedule and keeps db_backup_keep; db restore refuses while serving, then brings a copy back', async () => {
  const dataDir = path.join(root, 'served');
  const conf = path.join(root, 'served.conf');
  writeFileSync(conf, '[maintenance]\ndb_backup_schedule = "* * * * * *"\ndb_backup_keep = 2\n');
  const dbFile = path.join(dataDir, 'confvault.db');
  const backups = path.join(dataDir, 'backups');
  const s = await spawnServe(['--config', conf, '--data-dir', dataDir, '--listen', '127.0.0.1:0'], { CONFVAULT_LOG_LEVEL: 'info' });
  let copy: string;
  try {
    mark(dbFile, 'before-copy');
    // Copies are written every second: wait for three made after the mark, and see only two kept.
    const written = () => (s.output().stdout.match(/database copy written and verified/g) ?? []).length;
    const base = written();
    const began = Date.now();
    while (written() < base + 3) {
      assert.ok(Date.now() - began < 20_000, `no copies: ${s.output().stdout}`);
      await sleep(100);
    }
    const copies = listDbCopies(backups);
    assert.equal(copies.length, 2, readdirSync(backups).join(' '));
    // Kept out of the rolling folder (as an operator would take it off the machine): the schedule keeps pruning.
    copy = path.join(root, 'chosen-copy.db');
    copyFileSync(copies[0], copy);
    assert.deepEqual(auditMarks(copy), ['before-copy']);

    // While the server runs, restore is refused and nothing changes.
    const refused = await runCliAsync(['db', 'restore', copy, '--data-dir', dataDir]);
    assert.equal(refused.status, 1, refused.stderr);
    assert.match(refused.stderr, /^confvault db: a confvault server is running on .* stop it first$/m);
    assert.ok(!readdirSync(dataDir).some((n) => n.includes('replaced')));
    // A second server on the same data dir is refused the same way.
    const second = await runCliAsync(['serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0']);
    assert.equal(second.status, 1, second.stderr);
    assert.match(second.stderr, /^confvault serve: a confvault server is running on .* stop it first$/m);
    mark(dbFile, 'after-copy');
  } finally {
    assert.equal(await s.stop(), 0);
  }

  const r = await runCliAsync(['db', 'restore', copy, '--data-dir', dataDir]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^restored .*chosen-copy\.db \(schema version \d+, \d+ bytes\) to .*confvault\.db$/m);
  const replaced = readdirSync(dataDir).filter((n) => /^confvault\.db\.replaced-\d{8}T\d{6}Z$/.test(n));
  assert.equal(replaced.length, 1);
  assert.match(r.stdout, new RegExp(`kept as .*${replaced[0]}`));
  // The data written after the copy is gone from the database, and still in the file kept aside.
  assert.deepEqual(auditMarks(dbFile), ['before-copy']);
  assert.deepEqual(auditMarks(path.join(dataDir, replaced[0])), ['before-copy', 'after-copy']);
  assert.ok(!readdirSync(dataDir).some((n) => n.includes('.restoring-')));

  // The restored appliance starts.
  const again = await spawnServe(['--data-dir', dataDir, '--listen', '127.0.0.1:0'], { CONFVAULT_LOG_LEVEL: 'info' });
  assert.equal((await fetch(`${again.url}/healthz`)).status, 200);
  assert.equal(await again.stop(), 0);
});

test('db restore refuses what is not a usable confvault database, changing nothing; usage errors exit 2', async () => {
  const dataDir = path.join(root, 'refusals');
  const a = openAppliance({}, loadConfig({ dataDir }, {}));
  a.close();
  const dbFile = path.join(dataDir, 'confvault.db');
  mark(dbFile, 'original');

  const text = path.join(root, 'notes.txt');
  writeFileSync(text, 'hello, this is not a database\n'.repeat(200));
  const other = path.join(root, 'other.db');
  const o = openDatabase(other);
  o.exec('CREATE TABLE t (x INTEGER)');
  o.close();
  const newer = path.join(root, 'newer.db');
  const copy = await (async () => {
    const b = openAppliance({}, loadConfig({ dataDir }, {}));
    try {
      return (await writeDbCopy(b.db, dataDir, 5)).file;
    } finally {
      b.close();
    }
  })();
  const n = openDatabase(copy);
  n.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'future', 0)").run();
  n.close();
  rmSync(newer, { force: true });
  renameSync(copy, newer);

  const badCron = path.join(root, 'bad-cron.conf');
  writeFileSync(badCron, '[maintenance]\ndb_backup_schedule = "every night"\n');
  const cases: [string[], number, RegExp][] = [
    [['serve', '--config', badCron], 1, /^confvault serve: invalid configuration: maintenance\.db_backup_schedule: not a valid cron expression$/m],
    [['db', 'restore'], 2, /^confvault db restore: missing FILE$/m],
    [['db', 'restore', path.join(root, 'nope.db')], 1, /nope\.db: no such file$/m],
    [['db', 'restore', text], 1, /notes\.txt is not an SQLite database .*nothing was changed$/m],
    [['db', 'restore', other], 1, /other\.db is an SQLite database but not a confvault database; nothing was changed$/m],
    [['db', 'restore', newer], 1, /newer\.db has schema version 9999, newer than this confvault knows \(\d+\)/m],
  ];
  for (const [args, status, message] of cases) {
    const r = await runCliAsync([...args, '--data-dir', dataDir]);
    assert.equal(r.status, status, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stdout, '');
  }
  assert.deepEqual(auditMarks(dbFile), ['original']);
  assert.ok(!readdirSync(dataDir).some((x) => x.includes('replaced') || x.includes('restoring')));
  assert.ok(existsSync(dbFile));
});
