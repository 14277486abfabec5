// The web forms for devices and credentials go through the services: one audit row per change (door web), secrets only as "changed".
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedGroup } from '../helpers/seed';
import { WebClient } from './web-client';

const SECRET = 'WEB-AUDIT-SECRET-1';
let t: TestAppliance;
let web: WebClient;
let group = 0;
let tpl = 0;

const lastId = () => (t.services.db.prepare('SELECT coalesce(max(id), 0) AS id FROM audit_log').get() as { id: number }).id;
const rowsSince = (id: number) =>
  t.services.db.prepare('SELECT action, target, door, changes, details FROM audit_log WHERE id > ? ORDER BY id').all(id) as {
    action: string;
    target: string;
    door: string;
    changes: string;
    details: string;
  }[];

before(async () => {
  t = await startTestAppliance();
  group = seedGroup(t.services.db, 'web-g');
  tpl = seedBuiltinTemplate(t.services.db, 'frr');
  web = new WebClient(t.url);
  assert.equal((await web.login('admin', 'admin-password-1')).status, 303);
});
after(() => t.close());

test('credential and device created, edited and deleted through the web: one audit row each, no secret', async () => {
  let mark = lastId();
  const created = await web.post(
    '/credentials',
    { name: 'web-cred', username: 'u', password: SECRET, description: '', [`group_${group}`]: 'on' },
    { csrf: true },
  );
  assert.equal(created.res.status, 303, created.html);
  const credId = (t.services.db.prepare("SELECT id FROM credentials WHERE name = 'web-cred'").get() as { id: number }).id;
  let rows = rowsSince(mark);
  assert.deepEqual(
    rows.map((r) => [r.action, r.door]),
    [['credential.create', 'web']],
  );
  assert.deepEqual(JSON.parse(rows[0].changes).group_ids, { before: null, after: [group] });
  assert.equal(JSON.parse(rows[0].changes).password, 'changed');

  mark = lastId();
  const edited = await web.post(
    `/credentials/${credId}/edit`,
    { name: 'web-cred', username: 'u2', password: `${SECRET}-2`, description: '', [`group_${group}`]: 'on' },
    { csrf: true },
  );
  assert.equal(edited.res.status, 303, edited.html);
  rows = rowsSince(mark);
  assert.deepEqual(
    rows.map((r) => r.action),
    ['credential.update'],
  );
  assert.deepEqual(JSON.parse(rows[0].changes), { username: { before: 'u', after: 'u2' }, password: 'changed' });

  mark = lastId();
  const dev = await web.post(
    '/devices',
    {
      name: 'web-dev',
      hostname: '192.0.2.5',
      port: '',
      protocol: 'ssh',
      group_id: String(group),
      credential_id: String(credId),
      template_id: String(tpl),
      schedule: '',
      description: '',
      enabled: 'on',
    },
    { csrf: true },
  );
  assert.equal(dev.res.status, 303, dev.html);
  const devId = (t.services.db.prepare("SELECT id FROM devices WHERE name = 'web-dev'").get() as { id: number }).id;
  mark = lastId() - 1;
  const save = await web.post(
    `/devices/${devId}/edit`,
    {
      name: 'web-dev',
      hostname: '192.0.2.6',
      port: '',
      protocol: 'ssh',
      group_id: String(group),
      credential_id: String(credId),
      template_id: String(tpl),
      schedule: '',
      description: '',
      enabled: 'on',
    },
    { csrf: true },
  );
  assert.equal(save.res.status, 303, save.html);
  assert.equal((await web.post(`/devices/${devId}/delete`, { confirm_name: 'web-dev' }, { csrf: true })).res.status, 303);
  assert.equal((await web.post(`/credentials/${credId}/delete`, {}, { csrf: true })).res.status, 303);
  rows = rowsSince(mark);
  assert.deepEqual(
    rows.map((r) => [r.action, r.door]),
    [
      ['device.create', 'web'],
      ['device.update', 'web'],
      ['device.delete', 'web'],
      ['credential.delete', 'web'],
    ],
  );
  assert.deepEqual(JSON.parse(rows[1].changes), { hostname: { before: '192.0.2.5', after: '192.0.2.6' } });
  const all = JSON.stringify(t.services.db.prepare('SELECT * FROM audit_log').all());
  assert.doesNotMatch(all, new RegExp(SECRET));
});
