// The policy table (src/features/*/<f>.policy.ts) walked door by door: for every operation, an actor lacking any one of
// its permissions is refused (API 403 PERMISSION_DENIED, web 403 page) and one holding exactly them gets through; the
// API doors are spec section 4 with the spec's permissions; the read services refuse on their own; the CLI offers
// what the table says; the built-in roles hold what their definition says and cannot be edited.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN_ROLES, OPERATIONS } from '../../src/features/policy';
import { PERMISSIONS, type Permission } from '../../src/identity/permissions';
import { apiDoors, missingFor, type Operation } from '../../src/identity/policy';
import type { Command } from '../../src/cli/common';
import { apikeyCommand } from '../../src/cli/apikey';
import { auditCommand } from '../../src/cli/audit';
import { collectorCommand } from '../../src/cli/collector';
import { complianceCommand } from '../../src/cli/compliance';
import { backupCommand } from '../../src/cli/backup';
import { credentialCommand } from '../../src/cli/credential';
import { deviceCommand } from '../../src/cli/device';
import { notifyCommand } from '../../src/cli/notify';
import { roleCommand } from '../../src/cli/role';
import { templateCommand } from '../../src/cli/template';
import { userCommand } from '../../src/cli/user';
import { inventoryCommand } from '../../src/cli/inventory';
import { listSources } from '../../src/features/inventory/inventory.service';
import { listCollectors, listEnrolTokens } from '../../src/features/collectors/collectors.service';
import { cliActor, SYSTEM_ACTOR } from '../../src/identity/actor';
import type { Principal } from '../../src/identity/principal';
import { createRole, getRole, setRolePermissions } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { createApiKey } from '../../src/features/apikeys/apikeys.service';
import { getDeviceFor, listDevicesFor } from '../../src/features/devices/devices.service';
import { getDeviceHoldView } from '../../src/features/devices/device-holds.service';
import { getGroupFor, getGroupTreeFor, listGroupsFor } from '../../src/features/groups/groups.service';
import { getCredentialFor, listCredentialsFor } from '../../src/features/credentials/credentials.service';
import { getTemplateFor, listTemplatesFor } from '../../src/features/templates/templates.service';
import { getBackupContent } from '../../src/features/backups/backups.service';
import { renderHistoryPage } from '../../src/features/backups/history-pages';
import { getStatisticsFor } from '../../src/features/stats/stats.service';
import { listAuditFor } from '../../src/features/audit/audit.service';
import { complianceRuleSchema } from '../../src/features/compliance/compliance-rule.schemas';
import { getRule, listRules } from '../../src/features/compliance/compliance-rules.service';
import { createRule } from '../../src/features/compliance/compliance-rule-admin.service';
import { createWaiver, deviceCompliance, fleetCompliance, listWaivers } from '../../src/features/compliance/compliance-fleet.service';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { recordBackup, seedInventory } from './backups.seed';
import { seedCredential, seedDevice, seedGroup, seedTemplate } from '../helpers/seed';
import { ADDITIVE_ENDPOINTS, SPEC_ENDPOINTS } from './openapi.endpoints';
import { AUTOMATION_ENDPOINTS } from './automation.endpoints';
import { compareVersionsFor } from '../../src/features/configs/compare.service';
import { searchConfigsAs } from '../../src/features/configs/search.service';
import { pageBackupJobs } from '../../src/features/backups/jobs.service';
import { listChannels } from '../../src/features/notifications/notifications.service';
import { WebClient } from '../web/web-client';
import { SESSION_COOKIE, createSession } from '../../src/web/session/sessions.service';
import type { Json } from '../helpers/api';

const MISSING = 999_999;

/** A valid body for the API rows that need one. */
const API_BODIES: Record<string, (ids: Ids) => unknown> = {
  'POST /devices': (ids) => ({ name: 'matrix-device', hostname: '192.0.2.10', credential_id: ids.credential_id, template_id: ids.template_id }),
  'PUT /devices/{device_id}': () => ({ description: 'changed by the policy matrix' }),
  'POST /groups': () => ({ name: 'matrix-group' }),
  'PUT /groups/{group_id}': () => ({ description: 'changed by the policy matrix' }),
  'POST /credentials': () => ({ name: 'matrix-credential', username: 'backup', password: 'matrix-password' }),
  'PUT /credentials/{credential_id}': () => ({ description: 'changed by the policy matrix' }),
  'POST /templates': () => ({ name: 'matrix-template', vendor: 'Test', commands: ['show running-config'] }),
  'PUT /templates/{template_id}': () => ({ description: 'changed by the policy matrix' }),
  'POST /compliance/rules': () => ({ ...MATRIX_RULE, id: 'matrix-new-rule' }),
  'PUT /compliance/rules/{rule_id}': () => ({ title: MATRIX_RULE.title, severity: 'high', check: MATRIX_RULE.check }),
  'POST /devices/{device_id}/compliance/waivers': () => ({
    rule_id: MATRIX_RULE.id,
    reason: 'policy matrix',
    owner: 'matrix',
    expires_at: '2099-01-01 00:00:00',
  }),
  'POST /devices/{device_id}/retire': () => ({}),
  'POST /devices/{device_id}/reactivate': () => ({}),
  // A device that does not exist: past the guard (404), and no backup runs against a seeded address.
  'POST /jobs': () => ({ device_id: MISSING }),
  'POST /jobs/{job_id}/cancel': () => ({}),
  // A type no channel has: past the guard (422), and nothing is written.
  'POST /notifications/channels': () => ({ name: 'matrix-channel', type: 'pigeon' }),
  'PUT /notifications/channels/{name}': () => ({ url: 'ftp://refused.invalid/' }),
  'PUT /notifications/rules/{name}': () => ({ events: ['config_changed'], channels: ['no-such-channel'], groups: [MISSING] }),
  'POST /notifications/rules': () => ({ name: 'matrix-rule', events: ['config_changed'], channels: ['no-such-channel'], groups: [MISSING] }),
  // A kind no source has: past the guard (422), nothing written; the other inventory doors name a missing source (404).
  'POST /inventory-sources': () => ({ name: 'matrix-source', kind: 'pigeon' }),
  'PUT /inventory-sources/{source_id}': () => ({}),
  'POST /inventory-sources/{source_id}/sync': () => ({}),
  // A zone name the rule refuses: past the guard (422), no token made; the other collector doors name a missing record (404).
  'POST /collectors/tokens': () => ({ zone: 'not a zone!' }),
  'POST /collectors/{collector_id}/revoke': () => ({}),
  'PUT /collectors/{collector_id}': () => ({ zone: 'matrix-zone' }),
};

const MATRIX_RULE = { id: 'matrix-rule', title: 'A hostname', severity: 'low', check: { kind: 'must_exist', line: '^hostname ' } } as const;

interface Ids {
  device_id: number;
  group_id: number;
  credential_id: number;
  template_id: number;
  backup_id: string;
  rule_id: string;
  waiver_id: number;
  job_id: string;
  source_id: number;
  collector_id: number;
  token_id: string;
  deletable: { device_id: number; group_id: number; credential_id: number; template_id: number; rule_id: string; waiver_id: number };
}

function apiPath(door: string, ids: Ids): { method: string; path: string } {
  const [method, spec] = door.split(' ');
  const { deletable, ...existing } = ids;
  const values: Record<string, string | number> = method === 'DELETE' ? { ...existing, ...deletable } : existing;
  return { method, path: '/api/v1' + spec.replace(/\{(\w+)\}/g, (_, name: string) => String(values[name])) };
}

/** Web paths with existing records for a GET (the page renders), a missing one for a POST (nothing changes). */
function webPath(door: string, ids: Ids): { method: string; path: string } {
  const [method, pattern] = door.split(' ');
  const get = method === 'GET';
  const idOf: Record<string, number | string> = {
    devices: get ? ids.device_id : MISSING,
    templates: get ? ids.template_id : MISSING,
    credentials: get ? ids.credential_id : MISSING,
    groups: MISSING,
    'api-keys': MISSING,
    jobs: 'no-such-job',
    inventory: MISSING,
  };
  const path = pattern
    .replace(/^\/(api\/)?(\w[\w-]*)\/:id/, (_, api: string | undefined, noun: string) => `/${api ?? ''}${noun}/${idOf[noun]}`)
    .replace('/compliance/rules/:id', `/compliance/rules/${get ? ids.rule_id : 'no-such-rule'}`)
    .replace(':wid', String(MISSING))
    .replace(':bid', get ? ids.backup_id : 'no-such-backup')
    .replace(':username', get ? 'admin' : 'no-such-user')
    .replace(':name', get ? 'administrator' : 'no-such-name');
  return { method, path };
}

/** Everyone who acts in this file holds scope "all": what is tested is the permission, not the scope. */
function principalWith(permissions: readonly Permission[]): Principal {
  return { ...SYSTEM_ACTOR.principal, userId: -1, username: 'matrix-reader', permissions: new Set(permissions) };
}

function allBut(p: Permission): Permission[] {
  return PERMISSIONS.filter((x) => x !== p);
}

describe('policy matrix: every operation of the table, at every door it has', () => {
  let t: TestAppliance;
  let ids: Ids;
  const keys = new Map<string, string>();
  const sessions = new Map<string, WebClient>();
  let seq = 0;

  async function makeActor(perms: readonly Permission[]): Promise<void> {
    const n = ++seq;
    const username = `matrix${n}`;
    createRole(t.services.db, SYSTEM_ACTOR, { name: `matrix-role-${n}`, permissions: [...perms] });
    const user = await createUser(t.services.db, SYSTEM_ACTOR, { username, password: 'matrix-password-1', role: `matrix-role-${n}` });
    const name = [...perms].sort().join(',');
    keys.set(name, createApiKey(t.services.db, SYSTEM_ACTOR, { username }).key);
    // A session as the login form makes it (the login itself is tested elsewhere; its password check costs 100 ms).
    const web = new WebClient(t.url);
    web.cookies.set(SESSION_COOKIE, createSession(t.services.db, user.id, { address: '127.0.0.1', userAgent: 'policy-matrix' }));
    sessions.set(name, web);
  }

  function actor(perms: readonly Permission[]): { key: string; web: WebClient } {
    const name = [...perms].sort().join(',');
    return { key: keys.get(name)!, web: sessions.get(name)! };
  }

  async function callApi(door: string, key: string): Promise<{ status: number; body: Json }> {
    const { method, path } = apiPath(door, ids);
    const body = API_BODIES[door]?.(ids);
    const res = await t.api(path, { method, key, ...(body !== undefined ? { json: body } : {}) });
    return { status: res.status, body: (await res.json().catch(() => null)) as Json };
  }

  async function callWeb(door: string, web: WebClient): Promise<{ status: number; html: string }> {
    const { method, path } = webPath(door, ids);
    const r = method === 'GET' ? await web.get(path) : await web.post(path, {}, { csrf: true });
    return { status: r.res.status, html: r.html };
  }

  before(async () => {
    t = await startTestAppliance();
    const { db } = t.services;
    const inv = seedInventory(db);
    for (const id of [MATRIX_RULE.id, 'matrix-doomed-rule'])
      createRule(db, t.services.snapshots, SYSTEM_ACTOR, complianceRuleSchema.parse({ ...MATRIX_RULE, id }));
    const waiver = (device: number) =>
      createWaiver(db, t.services.snapshots, SYSTEM_ACTOR, device, {
        rule_id: MATRIX_RULE.id,
        reason: 'matrix',
        owner: 'matrix',
        expires_at: Date.now() + 86_400_000,
      }).id;
    const doomedDevice = seedDevice(db, { name: 'matrix-doomed-device', credential_id: inv.credentialId, template_id: inv.templateId, group_id: inv.groups.A });
    ids = {
      device_id: inv.devices.dA,
      group_id: inv.groups.B,
      credential_id: inv.credentialId,
      template_id: inv.templateId,
      backup_id: recordBackup(t.services, inv.devices.dA, { text: 'hostname matrix\n' }),
      rule_id: MATRIX_RULE.id,
      waiver_id: waiver(inv.devices.dA),
      job_id: '00000000-0000-4000-8000-000000000000',
      source_id: MISSING,
      collector_id: MISSING,
      token_id: '0000000000000000',
      deletable: {
        device_id: doomedDevice,
        rule_id: 'matrix-doomed-rule',
        waiver_id: waiver(inv.devices.dA),
        group_id: seedGroup(db, 'matrix-doomed-group'),
        credential_id: seedCredential(db, null, { name: 'matrix-doomed-credential' }),
        template_id: seedTemplate(db, 'matrix-doomed-template'),
      },
    };
    // Every actor up front, so that their password hashes are computed side by side rather than one after another.
    const sets = new Map<string, readonly Permission[]>();
    for (const op of OPERATIONS) for (const perms of [op.permissions, ...op.permissions.map(allBut)]) sets.set([...perms].sort().join(','), perms);
    await Promise.all([...sets.values()].map(makeActor));
  });
  after(() => t.close());

  test('the API doors of the table are spec section 4, the additive endpoints and the automation API (issue #26), each with its permission', () => {
    const table = OPERATIONS.flatMap((op) => apiDoors(op).map((door) => `${door} ${op.permissions.join('+')}`));
    const spec = [...SPEC_ENDPOINTS, ...ADDITIVE_ENDPOINTS].map((e) => `${e.method} ${e.path} ${e.permission}`);
    const automation = AUTOMATION_ENDPOINTS.map((e) => `${e.method} ${e.path} ${e.permissions.join('+')}`);
    assert.deepEqual([...table].sort(), [...spec, ...automation].sort());
  });

  test('every permission of the catalogue guards some operation', () => {
    const used = new Set(OPERATIONS.flatMap((op) => op.permissions));
    // In the catalogue, but no door deletes a user or a role yet.
    assert.deepEqual(
      PERMISSIONS.filter((p) => !used.has(p)),
      ['users.delete', 'roles.delete'],
    );
  });

  for (const op of OPERATIONS) {
    test(`${op.id} needs ${op.permissions.join(' + ')}`, async () => {
      // Lacking any one permission is refused at each door; denied first, so the record a holder changes is still there.
      for (const p of op.permissions) {
        const lacking = actor(allBut(p));
        for (const door of apiDoors(op)) {
          const r = await callApi(door, lacking.key);
          assert.equal(r.status, 403, `API ${door} without ${p}: ${r.status} ${JSON.stringify(r.body)}`);
          assert.equal(r.body?.error?.code, 'PERMISSION_DENIED');
          assert.equal(r.body?.error?.details?.permission, p);
        }
        for (const door of op.doors.web ?? []) {
          const r = await callWeb(door, lacking.web);
          assert.equal(r.status, 403, `web ${door} without ${p}: ${r.status}`);
          assert.match(r.html, new RegExp(`needs the permission ${p.replace('.', '\\.')}`), `web ${door}: refused for ${p}`);
        }
      }
      // Holding exactly the operation's permissions gets past every door's guard.
      const holder = actor(op.permissions);
      for (const door of apiDoors(op)) {
        const r = await callApi(door, holder.key);
        assert.notEqual(r.body?.error?.code, 'ROUTE_NOT_FOUND', 'the route exists');
        assert.ok(![401, 403].includes(r.status), `API ${door} with ${op.permissions.join(',')}: ${r.status} ${JSON.stringify(r.body)}`);
        if (door === 'POST /devices') {
          // Spec 4.6 rule 3: devices.create alone creates the device, held until someone entitled to its credential approves.
          assert.equal(r.status, 201);
          assert.match(getDeviceHoldView(t.services.db, SYSTEM_ACTOR, r.body.id)?.hold.reason ?? '', /credentials\.view/, 'created, and held');
        }
      }
      for (const door of op.doors.web ?? []) {
        const r = await callWeb(door, holder.web);
        assert.notEqual(r.status, 403, `web ${door} with ${op.permissions.join(',')}: ${r.status}`);
      }
    });
  }

  test('the CLI offers each operation the table gives it, as the console actor that holds every permission', () => {
    const commands: Record<string, Command> = {
      apikey: apikeyCommand,
      audit: auditCommand,
      backup: backupCommand,
      collector: collectorCommand,
      compliance: complianceCommand,
      credential: credentialCommand,
      device: deviceCommand,
      inventory: inventoryCommand,
      notify: notifyCommand,
      role: roleCommand,
      template: templateCommand,
      user: userCommand,
    };
    for (const op of OPERATIONS.filter((o) => o.doors.cli)) {
      const cli = op.doors.cli!;
      const cmd = commands[cli.split(' ')[0]];
      assert.ok(cmd.help.includes(`confvault ${cli} `) || cmd.help.includes(`confvault ${cli}\n`), `confvault ${cli} is in its --help`);
      assert.equal(missingFor(cliActor('matrix').principal, op), null);
    }
  });

  test('the read services check the view permission themselves (not only the route guard)', () => {
    const db = t.services.db;
    const reads: [Operation, (p: Principal) => unknown][] = [];
    const byId = new Map(OPERATIONS.map((o) => [o.id, o]));
    const read = (id: string, call: (p: Principal) => unknown) => reads.push([byId.get(id)!, call]);
    read('devices.list', (p) => listDevicesFor(db, p, {}, 1, 10));
    read('devices.list_unreachable', (p) => listDevicesFor(db, p, { reachability: 'unreachable' }, 1, 10));
    read('devices.get', (p) => getDeviceFor(db, p, ids.device_id));
    read('groups.list', (p) => listGroupsFor(db, p, {}, 1, 10));
    read('groups.tree', (p) => getGroupTreeFor(db, p));
    read('groups.get', (p) => getGroupFor(db, p, ids.group_id));
    read('credentials.list', (p) => listCredentialsFor(db, p, { page: 1, limit: 10 }));
    read('credentials.get', (p) => getCredentialFor(db, p, ids.credential_id));
    read('templates.list', (p) => listTemplatesFor(db, p, { page: 1, limit: 10 }));
    read('templates.get', (p) => getTemplateFor(db, p, ids.template_id));
    read('backups.list', (p) => renderHistoryPage(db, p, ids.device_id, 1, 10, 'UTC'));
    read('backups.content', (p) => getBackupContent(db, t.services.snapshots, null, p, ids.backup_id));
    read('stats.dashboard', (p) => getStatisticsFor(db, p));
    read('audit.list', (p) => listAuditFor(db, p, {}, 1, 10));
    const as = (p: Principal) => ({ principal: p, door: { kind: 'system' as const }, requestId: null });
    read('compliance.rules', (p) => listRules(db, as(p), t.services.dataDir));
    read('compliance.rule_get', (p) => getRule(db, as(p), t.services.dataDir, ids.rule_id));
    read('compliance.summary', (p) => fleetCompliance(db, t.services.snapshots, as(p)));
    read('compliance.check', (p) => deviceCompliance(db, t.services.snapshots, as(p), ids.device_id));
    read('compliance.waivers', (p) => listWaivers(db, as(p), ids.device_id));
    read('notifications.view', (p) => listChannels(db, { principal: p, door: { kind: 'system' }, requestId: null }));
    read('backups.jobs', (p) => pageBackupJobs(db, p, { offset: 0 }));
    read('inventory.view', (p) => listSources(db, as(p)));
    read('collectors.list', (p) => listCollectors(db, p, 60_000));
    read('collectors.token_list', (p) => listEnrolTokens(db, as(p), 1, 10));
    // The two that work on a pool worker check at once, before they return their promise.
    const same = { from: ids.backup_id, to: ids.backup_id };
    read('backups.browse', (p) => void compareVersionsFor(t.services, p, same, false).catch(() => undefined));
    read('backups.search', (p) => {
      const q = { query: 'hostname', mode: 'text' as const, caseSensitive: false };
      void searchConfigsAs(t.services, { principal: p, door: { kind: 'system' }, requestId: null }, q).catch(() => undefined);
    });
    // Every read the API offers is here.
    const apiReads = OPERATIONS.filter((o) => apiDoors(o).some((d) => d.startsWith('GET '))).map((o) => o.id);
    for (const id of apiReads)
      assert.ok(
        reads.some(([o]) => o.id === id),
        `read service of ${id} is in this list`,
      );
    for (const [op, call] of reads) {
      for (const p of op.permissions) {
        assert.throws(
          () => call(principalWith(allBut(p))),
          (e: { code?: string; details?: { permission?: string } }) => {
            return e.code === 'PERMISSION_DENIED' && e.details?.permission === p;
          },
          `${op.id} without ${p}`,
        );
      }
      assert.doesNotThrow(() => call(principalWith(op.permissions)), `${op.id} with ${op.permissions.join(',')}`);
    }
  });

  test('the built-in roles: created with the appliance, holding their table’s permissions, not editable', async () => {
    const db = t.services.db;
    for (const r of BUILTIN_ROLES) {
      const role = getRole(db, r.name);
      assert.ok(role?.builtin, `${r.name} is built in`);
      assert.deepEqual(
        role.permissions,
        PERMISSIONS.filter((p) => r.permissions.includes(p)),
        r.name,
      );
      assert.throws(() => setRolePermissions(db, SYSTEM_ACTOR, r.name, ['devices.view']), { code: 'ROLE_BUILTIN_READONLY' });
    }
    // Through the API, each built-in role reaches exactly the operations its permissions allow.
    for (const r of BUILTIN_ROLES.filter((x) => x.name !== 'administrator')) {
      const username = `builtin-${r.name}`;
      await createUser(db, SYSTEM_ACTOR, { username, password: 'matrix-password-1', role: r.name });
      const key = createApiKey(db, SYSTEM_ACTOR, { username }).key;
      for (const op of OPERATIONS)
        for (const door of apiDoors(op).filter((d) => d.startsWith('GET '))) {
          const res = await callApi(door, key);
          const allowed = op.permissions.every((p) => r.permissions.includes(p));
          assert.equal(res.status === 403, !allowed, `${r.name} ${door}: ${res.status}`);
        }
    }
    const names = BUILTIN_ROLES.map((r) => r.name);
    assert.deepEqual(names, ['administrator', 'read-only', 'backup-operator', 'auditor']);
    const perms = (n: string) => BUILTIN_ROLES.find((r) => r.name === n)!.permissions;
    assert.ok(perms('backup-operator').includes('backups.run') && !perms('read-only').includes('backups.run'));
    assert.ok(perms('auditor').includes('audit.view') && !perms('read-only').includes('audit.view'));
    for (const n of ['read-only', 'backup-operator', 'auditor']) {
      for (const p of perms(n)) assert.match(p, /\.view$|^api_keys\.|^backups\.run$/, `${n} changes nothing but running backups and its own keys`);
      assert.ok(!perms(n).includes('credentials.view'), `${n} does not see credentials`);
    }
  });
});
