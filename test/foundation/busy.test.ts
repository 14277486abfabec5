// A database held by another process (a long CLI transaction): requests wait the busy timeout, then 503 in the error shape.
// Heavy scenario: runs in npm run test:lab (test/run.sh), beside the device lab; CI runs it after npm test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { BUSY_TIMEOUT_MS } from '../../src/db/open';
import { REPO_ROOT, startTestAppliance } from '../helpers/appliance';

// Plain better-sqlite3 in another process, as a long `confvault` command would hold the file.
const HOLDER = `
const Database = require('better-sqlite3');
const db = new Database(process.argv[1]);
db.exec('BEGIN IMMEDIATE');
db.prepare("UPDATE settings SET value = value WHERE 0").run();
process.stdout.write('locked\\n');
process.stdin.on('data', () => {}).on('end', () => { db.exec('ROLLBACK'); db.close(); });
`;

test('a write while another process holds the database is 503 SERVICE_UNAVAILABLE after the busy timeout, not a 500', { timeout: 60_000 }, async () => {
  const t = await startTestAppliance();
  try {
    const key = await t.keyFor({ permissions: 'all' });
    const holder = spawn(process.execPath, ['-e', HOLDER, path.join(t.appliance.dataDir, 'confvault.db')], {
      cwd: REPO_ROOT,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      holder.stdout.once('data', () => resolve());
      holder.once('exit', (code) => reject(new Error(`holder exited ${code}`)));
    });
    try {
      const began = Date.now();
      const res = await t.api('/api/v1/groups', { method: 'POST', key, json: { name: 'while-locked' } });
      const ms = Date.now() - began;
      const body = (await res.json()) as { error: { code: string; request_id: string; message: string } };
      assert.equal(res.status, 503, JSON.stringify(body));
      assert.equal(body.error.code, 'SERVICE_UNAVAILABLE');
      assert.equal(body.error.request_id, res.headers.get('x-request-id'));
      assert.match(body.error.message, /busy/);
      assert.ok(ms >= BUSY_TIMEOUT_MS - 500, `answered after ${ms} ms, before the busy timeout`);
    } finally {
      holder.stdin.end();
      await new Promise((resolve) => holder.once('exit', resolve));
    }
    // Released: the same write goes through, and the refused one left nothing.
    const ok = await t.api('/api/v1/groups', { method: 'POST', key, json: { name: 'while-locked' } });
    assert.equal(ok.status, 201);
  } finally {
    await t.close();
  }
});
