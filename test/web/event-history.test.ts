// The device history and the diff page show what started a backup and, for event backups, who changed the device.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { finishBackup, startBackup } from '../../src/features/backups/backup-record.service';
import { importBackup } from '../../src/features/backups/import.service';
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
  ids.dev = seedDevice(db, {
    name: 'sw1',
    port: 22,
    credential_id: seedCredential(db, secrets, { name: 'c', username: 'u', password: 'p' }),
    template_id: tpl,
  });
  ids.a = importBackup(db, SYSTEM_ACTOR, snapshots, ids.dev, 'hostname sw1\n', Date.now() - 60_000).id;
  const started = startBackup(db, ids.dev, tpl, 'event', Date.now() - 1000, 'alice');
  const text = 'hostname sw1\ninterface Gi0/1\n description uplink\n';
  ids.b = (await finishBackup(db, snapshots, started, { ok: true, text, ignorePatterns: [] })).id;
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

test('the template form edits change events: one pattern per line, RE2 checked like the other patterns', async () => {
  const form = (change_events: string) => ({
    name: 'acme-events',
    vendor: 'ACME',
    description: '',
    mode: 'shell',
    prompt: '',
    pre_commands: '',
    commands: 'show running-config',
    strip_patterns: '',
    ignore_patterns: '',
    redact_patterns: '',
    change_events,
    exit_command: '',
  });
  const bad = await admin.post('/templates', form('(?<=x)CONFIG'), { csrf: true });
  assert.equal(bad.res.status, 422);
  assert.match(bad.html, /id="change_events-error"/);
  const ok = await admin.post('/templates', form('CONFIG_I: Configured from \\S+ by (?<user>\\S+)\n\nUI_COMMIT_COMPLETED'), { csrf: true });
  assert.equal(ok.res.status, 303);
  const id = Number(/\/templates\/(\d+)$/.exec(ok.res.headers.get('location') ?? '')?.[1]);
  const spec = JSON.parse(t.services.db.prepare('SELECT spec FROM templates WHERE id = ?').pluck().get(id) as string) as { change_events: string[] };
  assert.deepEqual(spec.change_events, ['CONFIG_I: Configured from \\S+ by (?<user>\\S+)', 'UI_COMMIT_COMPLETED']);
  const page = await admin.get(`/templates/${id}`);
  assert.match(page.html, /name="change_events"[^>]*>CONFIG_I: Configured from \\S\+ by \(\?&lt;user&gt;\\S\+\)\nUI_COMMIT_COMPLETED</);
});
