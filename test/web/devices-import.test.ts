// The web import (issue #14): 500 devices with 3 bad rows uploaded, previewed with each row's error, all-or-nothing or the valid rows; the list's CSV export.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedCredential, seedGroup } from '../helpers/seed';
import { WebClient } from './web-client';
import { inventory500 } from '../helpers/inventory';

let t: TestAppliance;
let admin: WebClient;
let groupA = 0;
let groupB = 0;
const db = () => t.services.db;
const deviceCount = () => db().prepare('SELECT count(*) FROM devices').pluck().get() as number;

async function upload(w: WebClient, path: string, fields: Record<string, string>, file?: { name: string; text: string }) {
  const form = new FormData();
  form.set('_csrf', await w.csrf());
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  if (file) form.set('file', new Blob([file.text], { type: 'text/csv' }), file.name);
  const res = await w.fetch(path, { method: 'POST', body: form });
  return { res, html: await res.text() };
}

before(async () => {
  t = await startTestAppliance();
  seedCredential(db(), t.appliance.secrets, { name: 'web-cred', username: 'u', password: 'p' });
  groupA = seedGroup(db(), 'site-a');
  groupB = seedGroup(db(), 'site-b');
  admin = new WebClient(t.url);
  assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
});
after(() => t.close());

test('CSV import of 500 devices with 3 bad rows: the preview names each, all-or-nothing writes nothing, the valid rows are created and audited', async () => {
  const page = await admin.get('/devices');
  assert.match(page.html, /href="\/devices\/import"/);
  const form = await admin.get('/devices/import');
  assert.equal(form.res.status, 200);
  assert.match(form.html, /<td class="mono">schedule<\/td>/);

  const text = inventory500();
  const preview = await upload(admin, '/devices/import/preview', { format: 'csv', text: '', credential: '' }, { name: 'inventory.csv', text });
  assert.equal(preview.res.status, 200, preview.html);
  assert.match(preview.html, /500 row\(s\): 497 valid, 3 with errors/);
  const errorRows = [...preview.html.matchAll(/<tr><td>(\d+)<\/td><td>([^<]*)<\/td><td class="mono">(\w+)<\/td><td>([^<]*)<\/td><\/tr>/g)].map((m) => [
    Number(m[1]),
    m[3],
  ]);
  assert.deepEqual(errorRows, [
    [101, 'hostname'],
    [251, 'group'],
    [402, 'name'],
  ]);
  assert.match(preview.html, /group &quot;site-z&quot; does not exist|group "site-z" does not exist/);
  assert.match(preview.html, /the same name as row 2 of this file/);
  assert.equal(deviceCount(), 0);

  // The apply form carries the text back; all-or-nothing refuses and writes nothing.
  const all = await upload(admin, '/devices/import', { format: 'csv', text, credential: '', mode: 'all' });
  assert.equal(all.res.status, 422);
  assert.match(all.html, /Nothing was written: 3 row\(s\) have errors/);
  assert.equal(deviceCount(), 0);

  const audit = db().prepare('SELECT coalesce(max(id), 0) FROM audit_log').pluck().get() as number;
  const valid = await upload(admin, '/devices/import', { format: 'csv', text, credential: '', mode: 'valid' });
  assert.equal(valid.res.status, 303, valid.html);
  assert.equal(valid.res.headers.get('location'), '/devices');
  assert.equal(deviceCount(), 497);
  const list = await admin.get('/devices');
  assert.match(list.html, /497 device\(s\) imported\. 3 row\(s\) with errors were left out\./);
  const rows = db().prepare('SELECT action, door, count(*) AS n FROM audit_log WHERE id > ? GROUP BY action, door ORDER BY action').all(audit);
  assert.deepEqual(
    rows.map((r) => ({ ...(r as object) })),
    [
      { action: 'device.create', door: 'web', n: 497 },
      { action: 'device.import', door: 'web', n: 1 },
    ],
  );
  assert.equal(db().prepare("SELECT description FROM devices WHERE name = 'web-007'").pluck().get(), 'rack 7');
});

test('a pasted router.db with one credential; a file-level problem is shown on the form', async () => {
  const pasted = await upload(admin, '/devices/import/preview', {
    format: 'router.db',
    text: 'ox-1:ios:site-a:admin:secret\nox-2:junos\n',
    credential: 'web-cred',
    fields: 'name:model:group',
  });
  assert.equal(pasted.res.status, 200, pasted.html);
  assert.match(pasted.html, /2 row\(s\): 2 valid, 0 with errors/);
  const applied = await upload(admin, '/devices/import', {
    format: 'router.db',
    text: 'ox-1:ios:site-a:admin:secret\nox-2:junos\n',
    credential: 'web-cred',
    fields: 'name:model:group',
    mode: 'all',
  });
  assert.equal(applied.res.status, 303, applied.html);
  assert.equal(db().prepare("SELECT count(*) FROM devices WHERE name LIKE 'ox-%'").pluck().get(), 2);

  // Update existing devices: the row's non-empty cells are set.
  const edit = 'name,description\nox-1,edited on the web\n';
  const refused = await upload(admin, '/devices/import/preview', { format: 'csv', text: edit });
  assert.match(refused.html, /the header lacks the column hostname/);
  const preview = await upload(admin, '/devices/import/preview', { format: 'csv', text: edit, update: 'on' });
  assert.match(preview.html, /1 would update an existing device/);
  assert.match(preview.html, /name="update" value="on"/);
  const updated = await upload(admin, '/devices/import', { format: 'csv', text: edit, update: 'on', mode: 'all' });
  assert.equal(updated.res.status, 303, updated.html);
  assert.equal(db().prepare("SELECT description FROM devices WHERE name = 'ox-1'").pluck().get(), 'edited on the web');

  const bad = await upload(admin, '/devices/import/preview', { format: 'csv', text: 'name,hostname,colour\nx,192.0.2.1,red\n' });
  assert.equal(bad.res.status, 422);
  assert.match(bad.html, /unknown column &quot;colour&quot;|unknown column "colour"/);
  const empty = await upload(admin, '/devices/import/preview', { format: 'csv', text: '' });
  assert.equal(empty.res.status, 422);
  assert.match(empty.html, /Choose a file or paste the device list/);
});

test('Export CSV carries the list’s filters and the user’s scope; import needs devices.create', async () => {
  const filtered = await admin.get(`/devices?q=web-00&group_id=${groupB}`);
  const href = /href="(\/devices\/export\.csv[^"]*)"/.exec(filtered.html)?.[1]?.replace(/&amp;/g, '&');
  assert.equal(href, `/devices/export.csv?q=web-00&group_id=${groupB}`);
  const csv = await admin.fetch(href);
  assert.equal(csv.status, 200);
  assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
  assert.match(csv.headers.get('content-disposition') ?? '', /attachment; filename="devices.csv"/);
  const names = (await csv.text())
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split(',')[0]);
  assert.deepEqual(names, ['web-002', 'web-004', 'web-006', 'web-008']);

  await t.keyFor({ permissions: ['devices.view'], groups: [groupA], username: 'viewer-a' });
  const viewer = new WebClient(t.url);
  assert.equal((await viewer.login('viewer-a', 'test-password-123')).status, 303);
  const theirs = await (await viewer.fetch('/devices/export.csv?q=web-00')).text();
  assert.deepEqual(
    theirs
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(',')[0]),
    ['web-001', 'web-003', 'web-005', 'web-007', 'web-009'],
  );
  assert.doesNotMatch((await viewer.get('/devices')).html, /href="\/devices\/import"/);
  assert.equal((await viewer.get('/devices/import')).res.status, 403);
  const before = deviceCount();
  const refused = await upload(viewer, '/devices/import', {
    format: 'csv',
    text: 'name,hostname,credential,template\nv1,192.0.2.9,web-cred,cisco-ios\n',
    mode: 'all',
  });
  assert.equal(refused.res.status, 403);
  assert.equal(deviceCount(), before);
});
