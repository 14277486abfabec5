// Queries live only in *.store.ts (and the database layer, src/db): every SQL statement found anywhere else in src/ fails.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../helpers/appliance';

/** A statement prepared, a pragma, or SQL run with exec (the SSH client's exec of a command is not SQL). */
const SQL_CALL =
  /\.prepare\(|\bprepareCached\(|\.pragma\(|\.exec\(\s*[`'"]\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|VACUUM|REINDEX)\b/i;

/** Where SQL may be written: the stores, and the database layer itself (open, migrations, statement caches, generation). */
const mayHoldSql = (file: string) => file.endsWith('.store.ts') || file.startsWith('src/db/');

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(rel);
    return /\.tsx?$/.test(e.name) ? [rel] : [];
  });
}

function sqlOutsideStores(files: { file: string; text: string }[]): string[] {
  return files.flatMap(({ file, text }) =>
    mayHoldSql(file) ? [] : text.split('\n').flatMap((line, i) => (SQL_CALL.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
  );
}

test('the check finds SQL in a service, a page and the composition root, and leaves a store, src/db and an SSH exec alone', () => {
  const found = sqlOutsideStores([
    { file: 'src/features/x/x.service.ts', text: "const n = db.prepare('SELECT count(*) FROM devices').pluck().get();" },
    { file: 'src/web/pages/x.tsx', text: "prepareCached(db, 'SELECT 1').get();" },
    { file: 'src/app/x.ts', text: "db.pragma('journal_mode = DELETE');\ndb.exec('BEGIN EXCLUSIVE');" },
    { file: 'src/features/x/x.store.ts', text: "db.prepare('SELECT 1');" },
    { file: 'src/db/migrate.ts', text: "db.exec('COMMIT');" },
    { file: 'src/engine/transports/ssh.ts', text: 'client.exec(command, (err, channel) => {});' },
  ]);
  assert.deepEqual(
    found.map((f) => f.split(': ')[0]),
    ['src/features/x/x.service.ts:1', 'src/web/pages/x.tsx:1', 'src/app/x.ts:1', 'src/app/x.ts:2'],
  );
});

test('src/ holds no SQL outside *.store.ts and src/db', () => {
  const files = sourceFiles('src').map((file) => ({ file, text: readFileSync(path.join(REPO_ROOT, file), 'utf8') }));
  assert.ok(files.length > 100, `only ${files.length} source files found`);
  assert.deepEqual(sqlOutsideStores(files), []);
});
