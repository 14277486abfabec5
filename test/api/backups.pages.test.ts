// A running `confvault serve` reuses rendered history pages: every change to a device's records or its group, made by
// the server, by the CLI or by another connection, shows on the next request, and the scope is checked every time.
import { after, before, describe, test } from 'node:test';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openAppliance, type Appliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { createApiKey } from '../../src/features/apikeys/apikeys.service';
import { finishBackup, startBackup } from '../../src/features/backups/backup-record.service';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser, ensureFirstAdmin } from '../../src/features/users/users.service';
import { sha256Hex } from '../../src/store/snapshots';
import { runCliAsync, spawnServe, tempDir } from '../helpers/appliance';
import { rawState, seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import type { Json } from '../helpers/api';

describe('history pages of a running server', () => {
  const root = tempDir('confvault-pages-');
  const dataDir = path.join(root, 'data');
  let server: Awaited<ReturnType<typeof spawnServe>>;
  // The test's own connection: for the server, another process writing.
  let a: Appliance;
  let groupA: number;
  let groupB: number;
  let dA: number;
  let adminKey: string;
  let readerA: string;
  let readerB: string;

  before(async () => {
    a = openAppliance({}, loadConfig({ dataDir }, {}));
    await ensureFirstAdmin(a.db, 'admin-password-1');
    createRole(a.db, SYSTEM_ACTOR, { name: 'reader', permissions: ['backups.view'] });
    groupA = seedGroup(a.db, 'A');
    groupB = seedGroup(a.db, 'B');
    await createUser(a.db, SYSTEM_ACTOR, { username: 'ra', password: 'reader-password-1', role: 'reader', groups: [groupA] });
    await createUser(a.db, SYSTEM_ACTOR, { username: 'rb', password: 'reader-password-1', role: 'reader', groups: [groupB] });
    const credential = seedCredential(a.db, a.secrets, { name: 'c', username: 'u', password: 'p' });
    const template = seedBuiltinTemplate(a.db, 'frr');
    dA = seedDevice(a.db, { name: 'a-core', port: 22, credential_id: credential, template_id: template, group_id: groupA });
    adminKey = createApiKey(a.db, SYSTEM_ACTOR, { username: 'admin' }).key;
    readerA = createApiKey(a.db, SYSTEM_ACTOR, { username: 'ra' }).key;
    readerB = createApiKey(a.db, SYSTEM_ACTOR, { username: 'rb' }).key;
    server = await spawnServe(['--data-dir', dataDir, '--listen', '127.0.0.1:0'], { CONFVAULT_LOG_LEVEL: 'info' });
  });

  after(async () => {
    a?.close();
    const code = await server?.stop();
    rmSync(root, { recursive: true, force: true });
    assert.equal(code, 0);
  });

  async function history(key: string, query = '', headers: Record<string, string> = {}): Promise<{ status: number; body: Json; text: string }> {
    const res = await fetch(`${server.url}/api/v1/devices/${dA}/backups${query}`, { headers: { 'X-API-Key': key, ...headers } });
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text), text };
  }

  test('a backup imported by the CLI while the server runs is on the next page read, newest first', async () => {
    const empty = await history(readerA);
    assert.equal(empty.body.pagination.total, 0);
    assert.equal((await history(readerA)).text, empty.text, 'the same page twice');

    const imports: string[] = [];
    for (const [i, started] of ['2025-03-01 02:00:00', '2025-03-02 02:00:00'].entries()) {
      const file = path.join(root, `config-${i}.txt`);
      const text = `hostname a-core\n! version ${i}\n`;
      writeFileSync(file, text);
      const r = await runCliAsync(['backup', 'import', '--device', String(dA), '--file', file, '--started-at', started, '--data-dir', dataDir]);
      assert.equal(r.status, 0, r.stderr);
      imports.push(sha256Hex(text));
      const page = await history(readerA);
      assert.equal(page.body.pagination.total, i + 1);
      assert.equal(page.body.items[0].config_snapshot_hash, sha256Hex(text), 'the import just made comes first');
      assert.equal(page.body.items[0].success, true);
    }
    assert.deepEqual(
      (await history(readerA)).body.items.map((r: Json) => r.config_snapshot_hash),
      [...imports].reverse(),
    );
  });

  test('a backup that starts, finishes and is deleted by another connection changes the page each time', async () => {
    const before = (await history(readerA)).body.pagination.total;
    const started = startBackup(a.db, dA, null, 'cli');
    const running = await history(readerA);
    assert.equal(running.body.pagination.total, before + 1);
    assert.deepEqual([running.body.items[0].id, running.body.items[0].finished_at, running.body.items[0].success], [started.id, null, false]);

    await finishBackup(a.db, a.snapshots, started, { ok: false, failure: 'TIMEOUT', message: 'Timed out waiting for the prompt' });
    const failed = (await history(readerA)).body.items[0];
    assert.equal(failed.id, started.id);
    assert.equal(failed.error_message, 'Timed out waiting for the prompt');
    assert.notEqual(failed.finished_at, null);

    rawState(
      a.db,
      'a record removed by another process (retention in the server, say): the page must see it gone',
      'DELETE FROM backups WHERE id = ?',
      started.id,
    );
    const after = await history(readerA);
    assert.equal(after.body.pagination.total, before);
    assert.ok(!after.body.items.some((r: Json) => r.id === started.id));
  });

  test("the scope is checked on every request: a device moved out of the reader's group is 403 at once, and back", async () => {
    assert.equal((await history(readerA)).status, 200);
    assert.equal((await history(readerB)).status, 403, "another group's reader never gets the page another reader made");

    // Moved by the server itself (the API)...
    const moved = await fetch(`${server.url}/api/v1/devices/${dA}`, {
      method: 'PUT',
      headers: { 'X-API-Key': adminKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ group_id: groupB }),
    });
    assert.equal(moved.status, 200, await moved.text());
    const refused = await history(readerA);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error?.code, 'BACKUP_DEVICE_FORBIDDEN');
    assert.equal((await history(readerB)).status, 200);

    // ...and back by another process.
    rawState(a.db, 'a write by another process, seen by the server only through the database', 'UPDATE devices SET group_id = ? WHERE id = ?', groupA, dA);
    assert.equal((await history(readerA)).status, 200);
    assert.equal((await history(readerB)).status, 403);
  });

  test("a page is rendered in each request's time zone", async () => {
    const utc = (await history(readerA, '', { 'X-Timezone': 'UTC' })).body.items.at(-1);
    const tokyo = (await history(readerA, '', { 'X-Timezone': 'Asia/Tokyo' })).body.items.at(-1);
    assert.equal(utc.id, tokyo.id);
    assert.equal(utc.started_at, '2025-03-01 02:00:00');
    assert.equal(tokyo.started_at, '2025-03-01 11:00:00');
    assert.equal((await history(readerA, '', { 'X-Timezone': 'UTC' })).body.items.at(-1).started_at, '2025-03-01 02:00:00');
  });
});
