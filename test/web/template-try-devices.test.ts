// "Try on device" offers the devices that use the template first, in the user's scope; with none it says so and lists the others (issue #14).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { WebClient } from './web-client';

/** The "Try on device" select: its options' text in order, and its option groups' labels. */
function picker(html: string): { options: string[]; groups: string[]; noneNote: boolean } {
  const select = /<select name="device_id">([\s\S]*?)<\/select>/.exec(html);
  assert.ok(select, 'the page has the device picker');
  return {
    options: [...select[1].matchAll(/<option [^>]*>([^<]*)<\/option>/g)].map((m) => m[1].split(' (')[0]),
    groups: [...select[1].matchAll(/<optgroup label="([^"]*)"/g)].map((m) => m[1]),
    noneNote: /No device in your scope uses this template/.test(html),
  };
}

describe('template page: Try on device picker', () => {
  let t: TestAppliance;
  let admin: WebClient;
  let scoped: WebClient;
  const tpl = { frr: 0, ios: 0, junos: 0 };
  before(async () => {
    t = await startTestAppliance();
    const { db, secrets } = t.services;
    const A = seedGroup(db, 'Alpha');
    const B = seedGroup(db, 'Bravo');
    const cred = seedCredential(db, secrets, { name: 'c', username: 'u', password: 'p' });
    tpl.frr = seedBuiltinTemplate(db, 'frr');
    tpl.ios = seedBuiltinTemplate(db, 'cisco-ios');
    tpl.junos = seedBuiltinTemplate(db, 'juniper-junos');
    // Alphabetically the IOS switches come first: the old picker chose "a-core-sw" whatever the template.
    seedDevice(db, { name: 'a-core-sw', port: 22, credential_id: cred, template_id: tpl.ios, group_id: A });
    seedDevice(db, { name: 'b-access-sw', port: 22, credential_id: cred, template_id: tpl.ios, group_id: A });
    seedDevice(db, { name: 'm-frr-rtr', port: 22, credential_id: cred, template_id: tpl.frr, group_id: A });
    seedDevice(db, { name: 'c-frr-other-group', port: 22, credential_id: cred, template_id: tpl.frr, group_id: B });
    createRole(db, SYSTEM_ACTOR, {
      name: 'template-tester',
      permissions: ['templates.view', 'templates.update', 'backups.run', 'backups.view', 'devices.view'],
    });
    await createUser(db, SYSTEM_ACTOR, { username: 'scoped', password: 'scoped-password-1', role: 'template-tester', groups: [A] });
    admin = new WebClient(t.url);
    assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
    scoped = new WebClient(t.url);
    assert.equal((await scoped.login('scoped', 'scoped-password-1')).status, 303);
  });
  after(() => t.close());

  test('the devices using the template come first, the others after them', async () => {
    const p = picker((await admin.get(`/templates/${tpl.frr}`)).html);
    assert.deepEqual(p.groups, ['Devices using this template', 'Other devices']);
    assert.deepEqual(p.options, ['c-frr-other-group', 'm-frr-rtr', 'a-core-sw', 'b-access-sw']);
    assert.equal(p.noneNote, false);
  });

  test("a scoped user is offered only devices in scope: another group's device using the template is not listed", async () => {
    const p = picker((await scoped.get(`/templates/${tpl.frr}`)).html);
    assert.deepEqual(p.options, ['m-frr-rtr', 'a-core-sw', 'b-access-sw']);
    assert.equal(p.groups[0], 'Devices using this template');
  });

  test('when no device in scope uses the template the page says so and lists the others', async () => {
    const none = picker((await admin.get(`/templates/${tpl.junos}`)).html);
    assert.equal(none.noneNote, true);
    assert.deepEqual(none.groups, []);
    assert.deepEqual(none.options, ['a-core-sw', 'b-access-sw', 'c-frr-other-group', 'm-frr-rtr']);
    assert.equal(picker((await admin.get('/templates/new')).html).noneNote, true);
  });
});
