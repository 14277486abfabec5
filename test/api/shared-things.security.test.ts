// Issue #20: shared things (notification channels and rules, templates, credentials) × (holds the permission, lacks it, target used outside the scope), through the API and the web doors.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createChannel, createRule } from '../../src/features/notifications/notifications.service';
import { deleteDevice } from '../../src/features/devices/devices.service';
import { createTemplate, getTemplate } from '../../src/features/templates/templates.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import type { Permission } from '../../src/identity/permissions';
import { DestinationPolicy } from '../../src/lib/destinations';
import { templateWithDefaults } from '../../src/templates/files';
import { specValues } from '../../src/web/pages/template-form';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { callApi } from '../helpers/api-security';
import { seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { WebClient } from '../web/web-client';

let t: TestAppliance;
let seq = 0;
let groupA: number;
let groupB: number;
let cred: number;
const policy = new DestinationPolicy([]);

type Who = 'holds' | 'lacks' | 'scoped' | 'no-credentials-view';
interface Door {
  key: string;
  web: WebClient;
}
const doors = {} as Record<Who, Door>;

const TEMPLATE_PERMS: Permission[] = ['templates.view', 'templates.create', 'templates.update', 'templates.delete', 'devices.view'];
const NOTIFY_PERMS: Permission[] = ['settings.view', 'settings.update'];
const CRED_PERMS: Permission[] = ['credentials.view', 'credentials.update'];

async function actor(who: Who, permissions: Permission[] | 'all', groups: number[] | null): Promise<void> {
  const username = `shared-${who}`;
  const key = await t.keyFor({ permissions, groups, username });
  const web = new WebClient(t.url);
  assert.equal((await web.login(username, 'test-password-123')).status, 303);
  doors[who] = { key, web };
}

/** A fresh custom template that redacts, used by a device in A and (when `outside`) one in B. */
function template(outside: boolean): number {
  const id = createTemplate(
    t.appliance.db,
    SYSTEM_ACTOR,
    templateWithDefaults({ name: `shared-${++seq}`, vendor: 'ACME', commands: ['show config'], redact_patterns: [{ pattern: 'secret (?<secret>\\S+)' }] }),
  ).id;
  seedDevice(t.appliance.db, { name: `in-a-${seq}`, port: 22, credential_id: cred, template_id: id, group_id: groupA });
  if (outside) seedDevice(t.appliance.db, { name: `in-b-${seq}`, port: 22, credential_id: cred, template_id: id, group_id: groupB });
  return id;
}

before(async () => {
  t = await startTestAppliance();
  const db = t.appliance.db;
  groupA = seedGroup(db, 'shared-A');
  groupB = seedGroup(db, 'shared-B');
  cred = seedCredential(db, t.appliance.secrets, { name: 'shared-cred', username: 'u', password: 'p' });
  await actor('holds', 'all', null);
  await actor('lacks', ['templates.view', 'settings.view', 'credentials.view', 'devices.view'], null);
  await actor('scoped', [...TEMPLATE_PERMS, ...NOTIFY_PERMS, ...CRED_PERMS], [groupA]);
  await actor('no-credentials-view', [...TEMPLATE_PERMS, ...NOTIFY_PERMS], null);
});
after(() => t.close());

/** A template change through a door: the API's PUT, or the web form with the template's values and `form` over them. */
async function changeTemplate(door: 'api' | 'web', who: Who, id: number, json: Record<string, unknown>, form: Record<string, string>) {
  if (door === 'api') return (await callApi(t, doors[who].key, 'PUT', `/templates/${id}`, json)).status;
  return (await doors[who].web.post(`/templates/${id}/edit`, { ...specValues(getTemplate(t.appliance.db, id)), ...form }, { csrf: true })).res.status;
}

const TEMPLATE_CHANGES: { label: string; json: Record<string, unknown>; form: Record<string, string>; changed: (id: number) => boolean }[] = [
  {
    label: 'description',
    json: { description: 'edited' },
    form: { description: 'edited' },
    changed: (id) => getTemplate(t.appliance.db, id).description === 'edited',
  },
  {
    label: 'commands',
    json: { commands: ['show config', 'show version'] },
    form: { commands: 'show config\nshow version' },
    changed: (id) => getTemplate(t.appliance.db, id).commands.length === 2,
  },
  { label: 'redaction off', json: { redact: false }, form: { redact: '' }, changed: (id) => !getTemplate(t.appliance.db, id).redact },
  {
    label: 'redact rules removed',
    json: { redact_patterns: [] },
    form: { redact_patterns: '' },
    changed: (id) => getTemplate(t.appliance.db, id).redact_patterns.length === 0,
  },
];

/** Whether each kind of actor may make the change to a template used only in A (outside: also in B). */
function templateVerdict(who: Who, change: string, outside: boolean): boolean {
  if (who === 'holds') return true;
  if (who === 'lacks') return false;
  if (who === 'scoped') return change === 'description' && !outside;
  return change === 'description'; // scope all without credentials.view: no commands, no weaker redaction
}

describe('templates × (holds, lacks, used outside the scope) × (api, web)', () => {
  for (const door of ['api', 'web'] as const) {
    for (const change of TEMPLATE_CHANGES) {
      for (const who of ['holds', 'lacks', 'scoped', 'no-credentials-view'] as const) {
        for (const outside of [false, true]) {
          const allowed = templateVerdict(who, change.label, outside);
          test(`${door}: ${who} changes ${change.label} of a template used ${outside ? 'in A and B' : 'in A only'}: ${allowed ? 'done' : 'refused'}`, async () => {
            const id = template(outside);
            const status = await changeTemplate(door, who, id, change.json, change.form);
            assert.equal(change.changed(id), allowed, `status ${status}`);
            if (door === 'api') assert.equal(status, allowed ? 200 : 403);
          });
        }
      }
    }
    for (const who of ['holds', 'lacks', 'scoped'] as const) {
      for (const outside of [false, true]) {
        test(`${door}: ${who} deletes a template ${outside ? 'still used by a device in B' : 'no longer used'}`, async () => {
          const id = template(outside);
          const db = t.appliance.db;
          for (const d of db.prepare('SELECT id FROM devices WHERE template_id = ? AND group_id = ?').pluck().all(id, groupA) as number[])
            deleteDevice(db, SYSTEM_ACTOR, d);
          const status =
            door === 'api'
              ? (await callApi(t, doors[who].key, 'DELETE', `/templates/${id}`)).status
              : (await doors[who].web.post(`/templates/${id}/delete`, {}, { csrf: true })).res.status;
          const gone = t.appliance.db.prepare('SELECT count(*) FROM templates WHERE id = ?').pluck().get(id) === 0;
          // An in-use template is never deleted (409); the owner rule answers first for a scoped actor.
          const allowed = who !== 'lacks' && !outside;
          assert.equal(gone, allowed, `status ${status}`);
          if (door === 'api') assert.equal(status, allowed ? 200 : who === 'holds' ? 409 : 403);
        });
      }
    }
  }

  test('weakening redaction writes an audit row saying so (reproduction 5 refused, the owner allowed)', async () => {
    const id = template(false);
    assert.equal((await callApi(t, doors.scoped.key, 'PUT', `/templates/${id}`, { redact: false })).status, 403);
    assert.equal((await callApi(t, doors.scoped.key, 'PUT', `/templates/${id}`, { redact_patterns: [] })).status, 403);
    assert.equal(
      (
        await callApi(t, doors.scoped.key, 'PUT', `/templates/${id}`, {
          redact_patterns: [{ pattern: 'secret (?<secret>\\S+)' }, { pattern: 'key (?<secret>\\S+)' }],
        })
      ).status,
      200,
    );
    assert.equal((await callApi(t, doors.holds.key, 'PUT', `/templates/${id}`, { redact: false })).status, 200);
    const row = t.appliance.db
      .prepare("SELECT actor, changes, details FROM audit_log WHERE action = 'template.redaction_weakened' AND target = ?")
      .get(`template ${id}`) as { actor: string; changes: string; details: string };
    assert.equal(row.actor, 'shared-holds');
    assert.deepEqual(JSON.parse(row.changes), { redact: { before: true, after: false } });
    assert.match(row.details, /stored in clear/);
    const page = await doors.holds.web.get(`/templates/${id}`);
    assert.match(page.html, /class="redaction-off" id="redaction-off"/);
    assert.match((await doors.holds.web.get('/templates')).html, /class="redaction-off"> redaction off/);
  });
});

describe('notification channels and rules × (holds, lacks, used outside the scope) (web door)', () => {
  const BASE = '/settings/notifications';
  const channelCount = (name: string) => t.appliance.db.prepare('SELECT count(*) FROM notification_channels WHERE name = ?').pluck().get(name) as number;
  const ruleCount = (name: string) => t.appliance.db.prepare('SELECT count(*) FROM notification_rules WHERE name = ?').pluck().get(name) as number;
  /** A channel used by an all-devices rule (outside) or by a rule for group A only. */
  async function channelWithRule(outside: boolean): Promise<{ channel: string; rule: string }> {
    const channel = `ch-${++seq}`;
    const rule = `rule-${seq}`;
    await createChannel(t.appliance.db, SYSTEM_ACTOR, t.appliance.secrets, policy, { name: channel, type: 'webhook', url: 'http://192.0.2.1/hook' });
    createRule(t.appliance.db, SYSTEM_ACTOR, { name: rule, events: ['config_changed'], channels: [channel], groups: outside ? [] : [groupA] });
    return { channel, rule };
  }

  for (const who of ['holds', 'lacks', 'scoped'] as const) {
    test(`${who} adds a channel: ${who === 'holds' ? 'done' : 'refused'}`, async () => {
      const name = `new-${++seq}`;
      await doors[who].web.post(`${BASE}/channels`, { name, type: 'webhook', url: 'http://192.0.2.1/hook' }, { csrf: true });
      assert.equal(channelCount(name), who === 'holds' ? 1 : 0);
    });
    for (const outside of [false, true]) {
      const allowed = who === 'holds' || (who === 'scoped' && !outside);
      test(`${who} removes a channel used by a rule ${outside ? 'for all devices' : 'for group A'}: ${allowed ? 'done' : 'refused'}`, async () => {
        const { channel } = await channelWithRule(outside);
        const r = await doors[who].web.post(`${BASE}/channels/${channel}/remove`, {}, { csrf: true });
        assert.equal(channelCount(channel), allowed ? 0 : 1, `status ${r.res.status}`);
        if (!allowed) assert.equal(r.res.status, 403);
      });
      test(`${who} adds a rule ${outside ? 'for group B' : 'for group A'}: ${allowed ? 'done' : 'refused'}`, async () => {
        const { channel } = await channelWithRule(false);
        const name = `made-${++seq}`;
        await doors[who].web.post(
          `${BASE}/rules`,
          { name, event_config_changed: 'on', [`channel_${channel}`]: 'on', [`group_${outside ? groupB : groupA}`]: 'on' },
          { csrf: true },
        );
        assert.equal(ruleCount(name), allowed ? 1 : 0);
      });
      test(`${who} removes a rule ${outside ? 'for all devices' : 'for group A'}: ${allowed ? 'done' : 'refused'}`, async () => {
        const { rule } = await channelWithRule(outside);
        await doors[who].web.post(`${BASE}/rules/${rule}/remove`, {}, { csrf: true });
        assert.equal(ruleCount(rule), allowed ? 0 : 1);
      });
    }
    test(`${who} sends a test message: ${who === 'lacks' ? 'refused' : 'allowed'}`, async () => {
      const { channel } = await channelWithRule(false);
      const r = await doors[who].web.post(`${BASE}/channels/${channel}/test`, {}, { csrf: true });
      assert.equal(r.res.status, who === 'lacks' ? 403 : 303);
    });
  }

  test('reproduction 2: a user scoped to A cannot remove the channel of an administrator’s all-devices rule', async () => {
    const { channel, rule } = await channelWithRule(true);
    const r = await doors.scoped.web.post(`${BASE}/channels/${channel}/remove`, {}, { csrf: true });
    assert.equal(r.res.status, 403);
    assert.match(r.html, /used by 1 notification rule outside your device-group scope/);
    assert.equal(channelCount(channel), 1);
    assert.equal(ruleCount(rule), 1);
  });
});

describe('credentials: a login shared with devices outside the scope (API and web)', () => {
  function credential(outside: boolean): number {
    const id = seedCredential(t.appliance.db, t.appliance.secrets, { name: `login-${++seq}`, username: 'netops', password: 'old-password' });
    seedDevice(t.appliance.db, { name: `cred-a-${seq}`, port: 22, credential_id: id, template_id: template(false), group_id: groupA });
    if (outside) seedDevice(t.appliance.db, { name: `cred-b-${seq}`, port: 22, credential_id: id, template_id: template(false), group_id: groupB });
    return id;
  }
  const username = (id: number) => t.appliance.db.prepare('SELECT username FROM credentials WHERE id = ?').pluck().get(id);

  for (const who of ['holds', 'lacks', 'scoped'] as const) {
    for (const outside of [false, true]) {
      const allowed = who === 'holds' || (who === 'scoped' && !outside);
      test(`api: ${who} changes password and username of a credential used ${outside ? 'in A and B' : 'in A only'}: ${allowed ? 'done' : 'refused'}`, async () => {
        const id = credential(outside);
        const r = await callApi(t, doors[who].key, 'PUT', `/credentials/${id}`, { username: 'taken-over', password: 'new-password' });
        assert.equal(r.status, allowed ? 200 : 403);
        assert.equal(username(id), allowed ? 'taken-over' : 'netops');
        if (who === 'scoped' && outside) assert.match(r.body.error?.message ?? '', /Credential \d+ is used by 1 device outside your device-group scope/);
      });
    }
  }

  test('web: the scoped user cannot change the password of a credential used in B; its description is still theirs to change', async () => {
    const id = credential(true);
    const r = await doors.scoped.web.post(
      `/credentials/${id}/edit`,
      { name: `login-${seq}`, username: 'netops', password: 'web-new-password', description: '' },
      { csrf: true },
    );
    assert.notEqual(r.res.status, 303);
    assert.match(r.html, /outside your device-group scope/);
    const ok = await callApi(t, doors.scoped.key, 'PUT', `/credentials/${id}`, { description: 'note' });
    assert.equal(ok.status, 200);
  });
});
