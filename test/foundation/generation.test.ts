// The database generation: it moves with this connection's changes at once and with another connection's commits
// from the next event-loop turn; values kept by it are read again once it moves, per database handle.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { databaseGeneration, GenerationMemo } from '../../src/db/generation';
import { openDatabase, type DB } from '../../src/db/open';
import { tempDir } from '../helpers/appliance';

const dir = tempDir('confvault-gen-');
const handles: DB[] = [];
after(() => {
  for (const h of handles) h.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(name: string): DB {
  const db = openDatabase(path.join(dir, name));
  handles.push(db);
  return db;
}

test('a change through the same handle moves the generation at once; reads do not', async () => {
  const db = open('one.db');
  db.exec('CREATE TABLE t (v INTEGER)');
  await nextTurn();
  const g0 = databaseGeneration(db);
  db.prepare('SELECT count(*) FROM t').get();
  assert.equal(databaseGeneration(db), g0);
  db.prepare('INSERT INTO t VALUES (1)').run();
  const g1 = databaseGeneration(db);
  assert.notEqual(g1, g0);
  db.prepare('UPDATE t SET v = 1 WHERE v = 1').run(); // a row changed to the value it had still counts
  assert.notEqual(databaseGeneration(db), g1);
});

test('a commit by another connection moves it from the next event-loop turn on', async () => {
  const db = open('two.db');
  db.exec('CREATE TABLE t (v INTEGER)');
  const other = openDatabase(path.join(dir, 'two.db'));
  handles.push(other);
  await nextTurn();
  const g0 = databaseGeneration(db);
  other.prepare('INSERT INTO t VALUES (1)').run();
  await nextTurn();
  assert.notEqual(databaseGeneration(db), g0);
});

test('inside a transaction there is no generation, so nothing read there is kept past a rollback', () => {
  const db = open('three.db');
  db.exec('CREATE TABLE t (v INTEGER)');
  const memo = new GenerationMemo<string, number>(10);
  const count = () => memo.get(db, 'count', (h) => h.prepare('SELECT count(*) AS n FROM t').pluck().get() as number);
  assert.equal(count(), 0);
  assert.throws(
    db.transaction(() => {
      db.prepare('INSERT INTO t VALUES (1)').run();
      assert.equal(databaseGeneration(db), null);
      assert.equal(count(), 1, 'read inside the transaction sees its own row');
      throw new Error('roll back');
    }),
    /roll back/,
  );
  assert.equal(count(), 0, 'the rolled-back row is not remembered');
});

test("a memo re-reads after a change, and keeps each handle's values apart", async () => {
  const x = open('x.db');
  const y = open('y.db');
  for (const db of [x, y]) db.exec('CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1)');
  y.prepare('INSERT INTO t VALUES (2)').run();
  await nextTurn();
  let reads = 0;
  const memo = new GenerationMemo<number, number>(10);
  const sum = (db: DB) => memo.get(db, 1, (h) => (reads++, h.prepare('SELECT sum(v) FROM t').pluck().get() as number));
  assert.deepEqual([sum(x), sum(y), sum(x), sum(y)], [1, 3, 1, 3]);
  assert.equal(reads, 2, 'the same key on two handles: two values, each read once');
  x.prepare('INSERT INTO t VALUES (10)').run();
  assert.equal(sum(x), 11);
  assert.equal(reads, 3);
});
