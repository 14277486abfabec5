// API keys managed from the CLI while `serve` runs on the same data dir: every change holds from the next request.
import { after, before, test } from 'node:test';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { openAppliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { openDatabase, type DB } from '../../src/db/open';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser, ensureFirstAdmin } from '../../src/features/users/users.service';
import { runCliAsync, spawnServe, tempDir } from '../helpers/appliance';
import { rawState } from '../helpers/seed';

const root = tempDir('confvault-keys-');
const dataDir = path.join(root, 'data');
let server: Awaited<ReturnType<typeof spawnServe>>;
let db: DB;

before(async () => {
  const a = openAppliance({}, loadConfig({ dataDir }, {}));
  await ensureFirstAdmin(a.db, 'admin-password-1');
  createRole(a.db, SYSTEM_ACTOR, { name: 'viewer', permissions: ['devices.view'] });
  createRole(a.db, SYSTEM_ACTOR, { name: 'blind', permissions: ['dashboard.view'] });
  await createUser(a.db, SYSTEM_ACTOR, { username: 'alice', password: 'alice-password-1', role: 'viewer' });
  await createUser(a.db, SYSTEM_ACTOR, { username: 'bob', password: 'bob-password-1', role: 'blind' });
  a.close();
  server = await spawnServe(
    ['--data-dir', dataDir, '--listen', '127.0.0.1:0'],
    { CONFVAULT_LOG_LEVEL: 'info' },
    {
      imports: [path.join(import.meta.dirname, 'probe-route.ts')],
    },
  );
  db = openDatabase(path.join(dataDir, 'confvault.db'));
});

after(async () => {
  db?.close();
  const code = await server?.stop();
  rmSync(root, { recursive: true, force: true });
  assert.equal(code, 0);
});

const cli = (...args: string[]) => runCliAsync([...args, '--data-dir', dataDir]);

/** GET the probe route (guarded by devices.view); returns the status. */
async function probe(key: string): Promise<number> {
  const res = await fetch(`${server.url}/api/v1/test-probe`, { headers: { 'X-API-Key': key } });
  await res.arrayBuffer();
  return res.status;
}

interface KeyRow {
  id: number;
  key_hash: Buffer;
  prefix: string;
  last_used_at: number | null;
  expires_at: number | null;
}
const keyRow = (id: number) => db.prepare('SELECT * FROM api_keys WHERE id = ?').get(id) as KeyRow;

function created(r: { status: number | null; stdout: string; stderr: string }): { id: number; key: string; line: string[] } {
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  const key = lines.at(-1)!;
  assert.match(key, /^cv_[A-Za-z0-9_-]{43}$/, 'the plaintext key is the last line: cv_ + 32 bytes base64url');
  const line = lines[0].split('\t');
  return { id: Number(line[0]), key, line };
}

test('keys made by the CLI work at once on the running server; only their SHA-256 is stored', async () => {
  const [ci, later, bobKey, nobody] = await Promise.all([
    cli('apikey', 'create', 'alice', '--name', 'ci'),
    cli('apikey', 'create', 'alice', '--name', 'later', '--expires-in-days', '30'),
    cli('apikey', 'create', 'bob'),
    cli('apikey', 'create', 'nobody'),
  ]);
  const k1 = created(ci);
  const k2 = created(later);
  const k3 = created(bobKey);
  assert.equal(nobody.status, 1);
  assert.match(nobody.stderr, /user "nobody" not found/);
  assert.match(ci.stderr, /shown only once/);

  // Stored: the digest and a short display prefix, never the key.
  const row = keyRow(k1.id);
  assert.deepEqual(row.key_hash, createHash('sha256').update(k1.key).digest());
  assert.ok(k1.key.startsWith(row.prefix) && row.prefix.length < 16);
  const dump = JSON.stringify(db.prepare('SELECT * FROM api_keys').all());
  for (const k of [k1, k2, k3]) assert.ok(!dump.includes(k.key.slice(3)));
  const expiresIn = keyRow(k2.id).expires_at! - Date.now();
  assert.ok(expiresIn > 29 * 86_400_000 && expiresIn <= 30 * 86_400_000);

  assert.equal(await probe(k1.key), 200);
  const who = await (await fetch(`${server.url}/api/v1/test-probe`, { headers: { 'X-API-Key': k2.key } })).json();
  assert.deepEqual(who, { username: 'alice', role: 'viewer', api_key_id: k2.id });
  // An authenticated request to a path with no route is a 404, not a 401.
  const missing = await fetch(`${server.url}/api/v1/no-such-endpoint`, { headers: { 'X-API-Key': k1.key } });
  assert.equal(missing.status, 404);
  // bob's role lacks devices.view.
  assert.equal(await probe(k3.key), 403);

  // last_used_at: written by the first use, not rewritten by every request (the refresh once a minute has
  // passed is timed with a given clock in auth-cache.test.ts).
  const firstUse = keyRow(k1.id).last_used_at;
  assert.ok(firstUse !== null && Math.abs(firstUse - Date.now()) < 60_000);
  for (let i = 0; i < 3; i++) assert.equal(await probe(k1.key), 200);
  assert.equal(keyRow(k1.id).last_used_at, firstUse);
  assert.equal(keyRow(k3.id).last_used_at !== null, true, 'a 403 still counts as a use of a valid key');

  // apikey list: id, name, display prefix, owner, created, last used, expires, state.
  const list = await cli('apikey', 'list', 'alice');
  assert.equal(list.status, 0, list.stderr);
  const rows = list.stdout
    .trimEnd()
    .split('\n')
    .map((l) => l.split('\t'));
  assert.equal(rows.length, 2);
  assert.deepEqual(
    rows.map((r) => Number(r[0])),
    [k1.id, k2.id].sort((a, b) => a - b),
    'ordered by id',
  );
  const r1 = rows.find((r) => r[0] === String(k1.id))!;
  const r2 = rows.find((r) => r[0] === String(k2.id))!;
  const ts = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
  assert.deepEqual([r1[0], r1[1], r1[2], r1[3], r1[7]], [String(k1.id), 'ci', row.prefix, 'alice', 'active']);
  assert.match(r1[4], ts);
  assert.match(r1[5], ts);
  assert.equal(r1[6], '-');
  assert.deepEqual([r2[0], r2[1], r2[3], r2[7]], [String(k2.id), 'later', 'alice', 'active']);
  assert.match(r2[6], ts);
  assert.ok(!list.stdout.includes(k1.key) && !list.stdout.includes(k2.key));

  // Revoke, disable, role and permission changes from the CLI: in force on the next request.
  const [revoke, grant, revokeMissing] = await Promise.all([
    cli('apikey', 'revoke', String(k1.id)),
    cli('role', 'set-permissions', 'blind', '--permissions', 'dashboard.view,devices.view'),
    cli('apikey', 'revoke', '999999'),
  ]);
  assert.equal(revoke.status, 0, revoke.stderr);
  assert.equal(grant.status, 0, grant.stderr);
  assert.equal(revokeMissing.status, 1);
  assert.equal(await probe(k1.key), 401);
  assert.equal(await probe(k2.key), 200, "the owner's other key still works");
  assert.equal(await probe(k3.key), 200, "bob's role now holds devices.view");

  const [disable, demote] = await Promise.all([cli('user', 'disable', 'alice'), cli('user', 'set-role', 'bob', 'viewer')]);
  assert.equal(disable.status, 0, disable.stderr);
  assert.equal(demote.status, 0, demote.stderr);
  assert.equal(await probe(k2.key), 401, "a disabled user's keys stop working");
  assert.equal(await probe(k3.key), 200);
  const [enable, toBlind] = await Promise.all([cli('user', 'enable', 'alice'), cli('role', 'set-permissions', 'viewer', '--permissions', 'dashboard.view')]);
  assert.equal(enable.status, 0, enable.stderr);
  assert.equal(toBlind.status, 0, toBlind.stderr);
  assert.equal(await probe(k2.key), 403, 'enabled again, but viewer lost devices.view');
  assert.equal(await probe(k3.key), 403);

  // Expiry is checked on every request: set it in the past through the database.
  rawState(db, 'a key past its expiry: only the clock makes it', 'UPDATE api_keys SET expires_at = ? WHERE id = ?', Date.now() - 1000, k3.id);
  assert.equal(await probe(k3.key), 401);
  const body = (await (await fetch(`${server.url}/api/v1/test-probe`, { headers: { 'X-API-Key': k3.key } })).json()) as { error: { code: string } };
  assert.equal(body.error.code, 'UNAUTHORIZED');
  const all = await cli('apikey', 'list');
  const states = Object.fromEntries(
    all.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'))
      .map((f) => [f[0], f[7]]),
  );
  assert.deepEqual(states, { [k1.id]: 'revoked', [k2.id]: 'active', [k3.id]: 'expired' });
});
