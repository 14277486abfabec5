// The device history and the diff page show what started a backup and, for event backups, who changed the device.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { finishBackup, startBackup } from '../../src/features/backups/backups.service';
import { importBackup } from '../../src/features/backups/import.service';
import { changeFingerprint } from '../../src/engine/normalise';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { WebClient } from './web-client';

let t: TestAppliance;
let admin: WebClient;
const ids = { dev: 0, a: '', b: '' };

before(async () => {
  t = await startTestAppliance();
  const { db, secrets, snapshots } = t.services;
  const tpl = seedBuiltinTemplate(db, 'cisco-ios');
  ids.dev = seedDevice(db, { name: 'sw1', port: 22, credential_id: seedCredential(db, secrets, { name: 'c', username: 'u', password: 'p' }), template_id: tpl });
  ids.a = importBackup(db, SYSTEM_ACTOR, snapshots, ids.dev, 'hostname sw1\n', Date.now() - 60_000).id;
  const started = startBackup(db, ids.dev, tpl, 'event', Date.now() - 1000, 'alice');
  const text = 'hostname sw1\ninterface Gi0/1\n description uplink\n';
  ids.b = finishBackup(db, snapshots, started, { ok: true, text, fingerprint: changeFingerprint(text, []) }).id;
  admin = new WebClient(t.url);
  assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
});
after(() => t.close());

test('the history names the trigger and who changed the device', async () => {
  const r = await admin.get(`/devices/${ids.dev}`);
  assert.equal(r.res.status, 200);
  assert.match(r.html, /event\s*<span class="muted"> · changed by alice<\/span>/);
  assert.match(r.html, />import</);
});

test('the diff page says the newer version is an event backup after a change by alice', async () => {
  const r = await admin.get(`/devices/${ids.dev}/diff?a=${ids.a}&b=${ids.b}`);
  assert.equal(r.res.status, 200);
  assert.match(r.html, /Newer version: event backup, after a change by alice/);
});

test('the public API keeps exactly its six backup fields', async () => {
  const key = await t.keyFor({ permissions: 'all' });
  const r = await t.api(`/api/v1/devices/${ids.dev}/backups`, { key });
  assert.equal(r.status, 200);
  const body = (await r.json()) as { items: Record<string, unknown>[] };
  for (const item of body.items) assert.equal(Object.keys(item).length, 6, JSON.stringify(Object.keys(item)));
});
