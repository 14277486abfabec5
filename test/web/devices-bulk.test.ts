// Bulk edit from the device list (issue #25 item 3): preview writes nothing and shows old -> new per device; apply goes
// through the services (one audit row per device); scope and credential rules refuse devices one by one, with the reason.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { listAudit } from '../../src/features/audit/audit.service';
import { getDeviceRow } from '../../src/features/devices/devices.store';
import { createUser } from '../../src/features/users/users.service';
import { updateCredential } from '../../src/features/credentials/credentials.service';
import { createRole } from '../../src/features/roles/roles.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { SCOPE_ALL } from '../../src/identity/principal';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedCredential, seedDevice, seedGroup, seedTemplate } from '../helpers/seed';
import { WebClient } from './web-client';
import { postPairs } from './form-post';

let t: TestAppliance;
let admin: WebClient;
const g: Record<string, number> = {};
const c: Record<string, number> = {};
const moved: number[] = [];
let outside: number;
let templateId: number;

before(async () => {
  t = await startTestAppliance();
  const db = t.services.db;
  templateId = seedTemplate(db, 'bulk-tpl');
  g.from = seedGroup(db, 'bulk-from');
  g.to = seedGroup(db, 'bulk-to');
  g.closed = seedGroup(db, 'bulk-closed');
  c.shared = seedCredential(db, null, { name: 'bulk-shared' });
  for (let i = 1; i <= 10; i++) {
    moved.push(seedDevice(db, { name: `sw-${String(i).padStart(2, '0')}`, credential_id: c.shared, template_id: templateId, group_id: g.from }));
  }
  outside = seedDevice(db, { name: 'closed-1', credential_id: c.shared, template_id: templateId, group_id: g.closed });
  admin = new WebClient(t.url);
  assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
});
after(() => t?.close());

const ids = (list: number[]) => list.map((id) => ['device_id', String(id)] as [string, string]);

describe('bulk edit', () => {
  test('the list offers it: a box per row, "All" on the page and "Edit selected"', async () => {
    const list = await admin.get(`/devices?group_id=${g.from}`);
    assert.match(list.html, /data-select-all="device_id"/);
    assert.match(list.html, /id="bulk-edit-selected"/);
    assert.equal(list.html.match(/name="device_id"/g)?.length, 10);
  });

  test('"All" without script takes every device of the page', async () => {
    const pairs: [string, string][] = [['all_on_page', '1'], ...moved.map((id) => ['page_device_id', String(id)] as [string, string])];
    const { res, html } = await postPairs(admin, '/devices/bulk', pairs);
    assert.equal(res.status, 200);
    assert.match(html, /Edit 10 selected device/);
  });

  test('the preview lists each device old -> new and writes nothing; apply moves all ten, one audit row each', async () => {
    const choice: [string, string][] = [
      ['step', 'preview'],
      ['group_id', String(g.to)],
    ];
    const preview = await postPairs(admin, '/devices/bulk', [...ids(moved), ...choice]);
    assert.equal(preview.res.status, 200);
    assert.equal(preview.html.match(/Group: bulk-from → bulk-to/g)?.length, 10, preview.html);
    assert.match(preview.html, /Apply to 10 device/);
    for (const id of moved) assert.equal(getDeviceRow(t.services.db, id)?.group_id, g.from, 'the preview wrote nothing');
    const before = listAudit(t.services.db, SCOPE_ALL, { action: 'device.update' }, 1, 100).total;

    const applied = await postPairs(admin, '/devices/bulk/apply', [...ids(moved), ...choice]);
    assert.equal(applied.res.status, 200);
    assert.match(applied.html, /10 device\(s\) changed/);
    for (const id of moved) assert.equal(getDeviceRow(t.services.db, id)?.group_id, g.to);
    const rows = listAudit(t.services.db, SCOPE_ALL, { action: 'device.update' }, 1, 100);
    assert.equal(rows.total - before, 10);
    for (const id of moved) assert.ok(rows.items.some((r) => r.target === `device ${id}` && r.changes.includes('group_id')));
  });

  test('schedule, enabled and retire in one go; a bad schedule is said next to its field', async () => {
    const two = moved.slice(0, 2);
    const bad = await postPairs(admin, '/devices/bulk', [...ids(two), ['step', 'preview'], ['schedule_mode', 'set'], ['schedule', 'every day']]);
    assert.equal(bad.res.status, 422);
    assert.match(bad.html, /id="schedule-error"/);
    const ok = await postPairs(admin, '/devices/bulk/apply', [...ids(two), ['schedule_mode', 'set'], ['schedule', '15 1 * * *'], ['retired', 'retire']]);
    assert.equal(ok.res.status, 200);
    for (const id of two) {
      const row = getDeviceRow(t.services.db, id);
      assert.equal(row?.schedule, '15 1 * * *');
      assert.notEqual(row?.retired_at, null);
      assert.equal(row?.enabled, 0);
    }
    const back = await postPairs(admin, '/devices/bulk/apply', [...ids(two), ['retired', 'reactivate']]);
    assert.match(back.html, /2 device\(s\) changed/);
    assert.equal(getDeviceRow(t.services.db, two[0])?.retired_at, null);
  });

  test('a scoped user: devices outside the scope and a credential they may not use are refused one by one, with the reason', async () => {
    const db = t.services.db;
    createRole(db, SYSTEM_ACTOR, { name: 'bulk-editor', permissions: ['devices.view', 'devices.update', 'credentials.view'] });
    await createUser(db, SYSTEM_ACTOR, { username: 'scoped', password: 'scoped-password-1', role: 'bulk-editor', groups: [g.to] });
    const limited = seedCredential(db, null, { name: 'closed-only' });
    // Its usage scope (bulk-closed) lies outside the user's scope: not theirs to hand out.
    updateCredential(db, SYSTEM_ACTOR, t.services.secrets, limited, { group_ids: [g.closed] });
    const w = new WebClient(t.url);
    assert.equal((await w.login('scoped', 'scoped-password-1')).status, 303);

    const desc = await postPairs(w, '/devices/bulk/apply', [...ids([moved[3], outside]), ['enabled', 'off']]);
    assert.equal(desc.res.status, 200);
    assert.match(desc.html, /1 device\(s\) changed, 1 refused/);
    assert.match(
      desc.html,
      new RegExp(`device ${outside}</td><td><span class="refused"><span class="badge failed">refused</span> The device is outside your device-group scope`),
    );
    assert.doesNotMatch(desc.html, /closed-1/, 'the name of a device out of scope is not shown');
    assert.equal(getDeviceRow(db, outside)?.enabled, 1);
    assert.equal(getDeviceRow(db, moved[3])?.enabled, 0);

    const cred = await postPairs(w, '/devices/bulk/apply', [...ids([moved[4], moved[5]]), ['credential_id', String(limited)]]);
    assert.match(cred.html, /0 device\(s\) changed, 2 refused/);
    assert.match(cred.html, /needs a user entitled to credential/);
    assert.equal(getDeviceRow(db, moved[4])?.credential_id, c.shared);
  });

  test('a credential that does not cover the target group refuses that device; nothing selected goes back to the list', async () => {
    const db = t.services.db;
    const narrow = seedCredential(db, null, { name: 'to-only' });
    updateCredential(db, SYSTEM_ACTOR, t.services.secrets, narrow, { group_ids: [g.to] });
    const r = await postPairs(admin, '/devices/bulk', [...ids([moved[6], outside]), ['step', 'preview'], ['credential_id', String(narrow)]]);
    assert.match(r.html, /Credential: bulk-shared → to-only/);
    assert.match(r.html, /may not be used by devices in group/);
    const none = await postPairs(admin, '/devices/bulk', [['step', 'preview']]);
    assert.equal(none.res.status, 303);
  });
});
