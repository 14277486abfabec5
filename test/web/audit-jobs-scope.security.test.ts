// Issue #20 item 4: a reader scoped to some groups sees no audit row, id or count about devices outside them (the web page, the only scoped door).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { listAudit } from '../../src/features/audit/audit.service';
import { requestBackupJob } from '../../src/features/backups/jobs.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { WebClient } from './web-client';

describe('scoped audit (issue #20)', () => {
  let t: TestAppliance;
  let reader: WebClient;
  const ids: Record<string, number> = {};
  let g1: number;
  let g2: number;
  let g3: number;

  before(async () => {
    t = await startTestAppliance();
    const db = t.appliance.db;
    g1 = seedGroup(db, 'audit-g1');
    g2 = seedGroup(db, 'audit-g2');
    g3 = seedGroup(db, 'audit-g3');
    const tpl = seedBuiltinTemplate(db, 'cisco-ios');
    const cred = seedCredential(db, t.appliance.secrets, { name: 'c', username: 'u', password: 'p' });
    const dev = (name: string, group: number) => (ids[name] = seedDevice(db, { name, port: 22, credential_id: cred, template_id: tpl, group_id: group }));
    dev('in-g1', g1);
    dev('in-g2', g2);
    for (const n of ['b-1', 'b-2', 'b-3', 'b-4']) dev(n, g3);
    // Reproduction 4: a run of group 3 (all outside), and a run of all devices (two inside, four outside).
    requestBackupJob(db, SYSTEM_ACTOR, { groupId: g3 }, null);
    requestBackupJob(db, SYSTEM_ACTOR, { all: true }, null);
    requestBackupJob(db, SYSTEM_ACTOR, { deviceIds: [ids['in-g1'], ids['b-1']] }, null);
    await t.keyFor({ permissions: ['audit.view'], groups: [g1, g2], username: 'audit-reader' });
    reader = new WebClient(t.url);
    assert.equal((await reader.login('audit-reader', 'test-password-123')).status, 303);
  });

  after(() => t.close());

  test('the web page: the group-3 run is hidden; the all-devices run shows only in-scope ids and counts', async () => {
    const page = await reader.get('/audit?action=backup.run');
    assert.equal(page.res.status, 200);
    const outside = ['b-1', 'b-2', 'b-3', 'b-4'].map((n) => ids[n]);
    const cells = [...page.html.matchAll(/device_ids: ([\d, ]+)/g)].map((m) => m[1].split(', ').map(Number));
    assert.equal(cells.length, 2, 'the run of group 3 is hidden; the all-devices run and the two-device run show');
    for (const listed of cells)
      assert.ok(
        listed.every((id) => !outside.includes(id)),
        `no id outside the scope: ${listed.join(',')}`,
      );
    assert.ok(!page.html.includes(`group ${g3}`), 'no group outside the scope named');
    assert.match(page.html, /devices: 2\b/);
    assert.match(page.html, /devices: 1\b/);
    assert.ok(!page.html.includes('devices: 6') && !page.html.includes('devices: 4'));
  });

  test('the service every door reads: counts and totals agree with what is shown; scope all sees everything', () => {
    const scoped = listAudit(t.appliance.db, { all: false, groupIds: new Set([g1, g2]) }, { action: 'backup.run' }, 1, 50);
    assert.equal(scoped.total, 2);
    const all = listAudit(t.appliance.db, { all: true }, { action: 'backup.run' }, 1, 50);
    assert.equal(all.total, 3);
    assert.ok(all.items.some((r) => r.target === `group ${g3}`));
    assert.deepEqual(JSON.parse(all.items.find((r) => r.target === 'all devices')!.details).devices, 6);
  });
});
