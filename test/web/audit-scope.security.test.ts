// The audit page for a scoped audit.view user: no rows about devices outside the scope (their names, addresses, credentials).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { createDevice, deleteDevice, updateDevice } from '../../src/features/devices/devices.service';
import { recordTemplateTrial } from '../../src/features/templates/templates.service';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedGroup } from '../helpers/seed';
import { WebClient } from './web-client';

describe('audit page: device-group scope', () => {
  let t: TestAppliance;
  let scoped: WebClient;
  let admin: WebClient;
  const ids = { inside: 0, outside: 0, gone: 0 };

  before(async () => {
    t = await startTestAppliance();
    const { db, secrets } = t.services;
    const A = seedGroup(db, 'Alpha');
    const B = seedGroup(db, 'Bravo');
    const cred = seedCredential(db, secrets, { name: 'lab', username: 'netops', password: 'netops123' });
    const tpl = seedBuiltinTemplate(db, 'frr');
    const base = {
      port: 22,
      protocol: 'ssh' as const,
      credential_id: cred,
      template_id: tpl,
      enabled: true,
      description: '',
      schedule: null,
      accept_host_key_change: false,
    };
    ids.inside = createDevice(db, SYSTEM_ACTOR, { ...base, name: 'alpha-edge', hostname: 'alpha-edge.example.net', group_id: A }).id;
    ids.outside = createDevice(db, SYSTEM_ACTOR, { ...base, name: 'bravo-core', hostname: 'bravo-core.example.net', group_id: B }).id;
    updateDevice(db, SYSTEM_ACTOR, ids.outside, { hostname: 'bravo-core-2.example.net' });
    ids.gone = createDevice(db, SYSTEM_ACTOR, { ...base, name: 'bravo-old', hostname: 'bravo-old.example.net', group_id: B }).id;
    deleteDevice(db, SYSTEM_ACTOR, ids.gone);
    recordTemplateTrial(db, SYSTEM_ACTOR, tpl, { device_id: ids.outside, device_name: 'bravo-core', ok: true, failure: null, duration_ms: 5 });
    createRole(db, SYSTEM_ACTOR, { name: 'device-auditor', permissions: ['audit.view', 'devices.view'] });
    await createUser(db, SYSTEM_ACTOR, { username: 'scoped-auditor', password: 'auditor-password-1', role: 'device-auditor', groups: [A] });
    scoped = new WebClient(t.url);
    assert.equal((await scoped.login('scoped-auditor', 'auditor-password-1')).status, 303);
    admin = new WebClient(t.url);
    assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
  });
  after(() => t.close());

  test('a scoped reader sees rows about their devices, none about other groups’ devices', async () => {
    const page = await scoped.get('/audit');
    assert.equal(page.res.status, 200);
    assert.match(page.html, /alpha-edge\.example\.net/);
    for (const leak of [/bravo-core/, /bravo-old/, new RegExp(`device ${ids.outside}\\b`)]) assert.doesNotMatch(page.html, leak);
    // Not through a filter either.
    const byTarget = await scoped.get(`/audit?target=${encodeURIComponent(`device ${ids.outside}`)}`);
    assert.doesNotMatch(byTarget.html, /bravo-core/);
    // Rows about no device (users, roles, groups) stay visible: groups are read by permission only (spec 4.6).
    assert.match(page.html, /role device-auditor/);
  });

  test('a reader with scope all sees everything', async () => {
    const page = await admin.get('/audit');
    assert.match(page.html, /bravo-core-2\.example\.net/);
    assert.match(page.html, /bravo-old/);
  });
});
