// What a template sends decides what happens to the enable secret handed to it: only a user entitled to every credential changes it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCredential } from '../../src/features/credentials/credentials.service';
import { createDevice } from '../../src/features/devices/devices.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { callApi } from '../helpers/api-security';
import { seedBuiltinTemplate, seedGroup } from '../helpers/seed';
import { WebClient } from '../web/web-client';

/**
 * The attack: the enable password prompt set to match the ordinary prompt, so the enable secret is typed as a
 * command; a capture command then reads it back from the command history into the stored configuration.
 */
const LEAKY = {
  enable: { command: 'terminal length 0', password_prompt: '[>#]\\s*$', prompt: null, prompt_unchanged: true },
  commands: ['show history', 'show running-config'],
};

describe('templates: the enable secret and what a template sends', () => {
  let t: TestAppliance;
  let wide: string;
  let admin: string;
  let web: WebClient;
  const id = { g1: 0, builtin: 0, custom: 0, other: 0, device: 0 };
  const isHeld = (deviceId: number) => t.services.db.prepare('SELECT 1 FROM device_credential_holds WHERE device_id = ?').get(deviceId) !== undefined;

  before(async () => {
    t = await startTestAppliance();
    const { db, secrets } = t.services;
    id.g1 = seedGroup(db, 'g1');
    id.builtin = seedBuiltinTemplate(db, 'cisco-ios');
    const cred = createCredential(db, SYSTEM_ACTOR, secrets, {
      name: 'core',
      username: 'netops',
      password: 'core-Pass-1',
      enable_secret: 'core-Enable-7',
      group_ids: null,
    }).id;
    id.device = createDevice(db, SYSTEM_ACTOR, {
      name: 'core-1',
      hostname: '127.0.0.1',
      port: 1,
      protocol: 'ssh',
      group_id: id.g1,
      credential_id: cred,
      template_id: id.builtin,
      enabled: true,
      description: '',
      schedule: null,
      accept_host_key_change: false,
    }).id;
    admin = await t.keyFor({ permissions: 'all', username: 'boss' });
    // Scope all, everything about templates, devices and backups, but not entitled to see credentials.
    wide = await t.keyFor({
      permissions: ['templates.view', 'templates.create', 'templates.update', 'devices.view', 'devices.update', 'backups.view', 'backups.run'],
      username: 'tpl-wide',
    });
    const base = { vendor: 'ACME', commands: ['show running-config'], enable: { command: 'enable', password_prompt: 'Password:', prompt: null } };
    id.custom = (await callApi(t, admin, 'POST', '/templates', { ...base, name: 'acme' })).body.id;
    id.other = (await callApi(t, admin, 'POST', '/templates', { ...base, name: 'acme-2' })).body.id;
    assert.ok(id.custom && id.other);
    assert.equal((await callApi(t, admin, 'PUT', `/devices/${id.device}`, { template_id: id.custom })).status, 200);
    assert.equal(isHeld(id.device), false, 'the entitled admin chose the template');
    web = new WebClient(t.url);
    assert.equal((await web.login('tpl-wide', 'test-password-123')).status, 303);
  });
  after(() => t.close());

  test('without credentials.view, changing what a used template sends is 403, even with scope all', async () => {
    const r = await callApi(t, wide, 'PUT', `/templates/${id.custom}`, LEAKY);
    assert.equal(r.status, 403, JSON.stringify(r.body));
    assert.match(r.body.error!.message, /credentials\.view/);
    assert.deepEqual((await callApi(t, admin, 'GET', `/templates/${id.custom}`)).body.commands, ['show running-config']);
    // A description is not something the template sends.
    assert.equal((await callApi(t, wide, 'PUT', `/templates/${id.custom}`, { description: 'acme routers' })).status, 200);
  });

  test('nor can such a user point a device at another custom template without holding it', async () => {
    const r = await callApi(t, wide, 'PUT', `/devices/${id.device}`, { template_id: id.other });
    assert.equal(r.status, 200);
    assert.equal(isHeld(id.device), true, 'held until a user entitled to the credential approves');
    // An entitled user's template change does not approve the address: the hold stays.
    assert.equal((await callApi(t, admin, 'PUT', `/devices/${id.device}`, { template_id: id.custom })).status, 200);
    assert.equal(isHeld(id.device), true);
  });

  test('Try on device with changed enable or commands needs credentials.view too', async () => {
    const n = t.services.db.prepare("SELECT count(*) FROM audit_log WHERE action = 'template.try'").pluck().get();
    const form = {
      name: 'acme',
      vendor: 'ACME',
      description: '',
      mode: 'shell',
      prompt: '',
      pre_commands: '',
      commands: 'show history\nshow running-config',
      strip_patterns: '',
      ignore_patterns: '',
      redact_patterns: '',
      exit_command: '',
      device_id: String(id.device),
    };
    const r = await web.post(`/templates/${id.custom}/try`, form, { csrf: true });
    assert.equal(r.res.status, 403);
    const fresh = await web.post('/templates/new/try', { ...form, name: 'fresh' }, { csrf: true });
    assert.equal(fresh.res.status, 403);
    assert.equal(t.services.db.prepare("SELECT count(*) FROM audit_log WHERE action = 'template.try'").pluck().get(), n);
  });

  test('a user entitled to every credential still can', async () => {
    assert.equal((await callApi(t, admin, 'PUT', `/templates/${id.custom}`, { commands: ['show running-config', 'show version'] })).status, 200);
  });
});
