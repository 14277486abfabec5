// Inventory sources (issue #26): a NetBox-shaped source of 500 devices over several pages syncs; a second state with three
// removed and one renamed retires three and renames one (dry run first); Nautobot and Oxidized-http sources; the token
// never leaves; a narrow role cannot sync; a source-owned field is refused elsewhere. NetBox's API shape is replayed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { listAudit } from '../../src/features/audit/audit.service';
import { syncDueSources } from '../../src/features/inventory/inventory.schedule';
import { SCOPE_ALL } from '../../src/identity/principal';
import { runCliAsync, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { apiCall, expectError, type CallInit } from '../helpers/api';
import { seedCredential, seedGroup } from '../helpers/seed';
import { recordBackup } from '../api/backups.seed';
import { startSourceServer, type NbDevice, type SourceServer } from './source-server';
import { WebClient } from '../web/web-client';

const TOKEN = 'nb-0123456789abcdef-secret';
let t: TestAppliance;
let src: SourceServer;
let key: string;
let credential_id: number;
const logLines: string[] = [];
const responses: string[] = [];

const call = async (path: string, init: Omit<CallInit, 'key'> & { k?: string } = {}) => {
  const r = await apiCall(t, path, { ...init, key: init.k ?? key });
  responses.push(r.text);
  return r;
};

function fleet(n: number): NbDevice[] {
  return Array.from({ length: n }, (_, i) => ({
    id: i + 1,
    name: `nb-${String(i + 1).padStart(3, '0')}`,
    ip: `10.20.${Math.floor((i + 1) / 250)}.${(i + 1) % 250}`,
    platform: i % 2 ? 'cisco-ios' : 'junos',
    site: i % 3 ? 'ams1' : 'nyc1',
  }));
}

const deviceByName = (name: string) => t.services.db.prepare('SELECT * FROM devices WHERE name = ?').get(name) as Record<string, unknown> | undefined;

before(async () => {
  src = await startSourceServer();
  const log = new PassThrough();
  log.on('data', (c: Buffer) => logLines.push(c.toString('utf8')));
  t = await startTestAppliance({ CONFVAULT_NOTIFY_ALLOWED_DESTINATIONS: '127.0.0.1', CONFVAULT_LOG_LEVEL: 'debug' }, { log });
  key = await t.keyFor({ permissions: 'all' });
  credential_id = seedCredential(t.services.db, null, { name: 'inventory-cred' });
});
after(async () => {
  await t?.close();
  await src?.close();
});

describe('a NetBox source', () => {
  let sourceId: number;

  test('is added with its token kept secret, and a URL outside allowed_destinations is refused', async () => {
    const body = {
      name: 'netbox-prod',
      kind: 'netbox',
      url: src.url,
      token: TOKEN,
      credential_id,
      filters: { status: ['active'] },
      platform_map: { 'cisco-ios': 'cisco-ios', junos: 'juniper-junos' },
      group_path: '{region}/{site}',
    };
    const refused = await call('/inventory-sources', { method: 'POST', json: { ...body, name: 'elsewhere', url: 'http://127.0.0.2:9/' } });
    expectError(refused, 422, 'VALIDATION_ERROR', ['url']);
    const missing = await call('/inventory-sources', { method: 'POST', json: { ...body, name: 'bad-map', platform_map: { x: 'no-such-template' } } });
    expectError(missing, 422, 'VALIDATION_ERROR', ['platform_map']);
    const r = await call('/inventory-sources', { method: 'POST', json: body });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.has_token, true);
    assert.equal(r.body.token, undefined);
    sourceId = r.body.id;
    const again = await call('/inventory-sources', { method: 'POST', json: body });
    expectError(again, 409, 'CONFLICT');
  });

  test('a dry run of 500 devices over several pages lists 500 creates and writes nothing', async () => {
    src.netbox = [...fleet(500), { id: 9001, name: 'planned-one', ip: '10.99.0.1', platform: 'cisco-ios', site: 'ams1', status: 'planned' }];
    src.requests.length = 0;
    const r = await call(`/inventory-sources/${sourceId}/sync?dry_run=true`, { method: 'POST', json: {} });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.dry_run, true);
    assert.equal(r.body.fetched, 500, 'the status filter reached NetBox');
    assert.equal(r.body.creates.length, 500);
    assert.deepEqual(r.body.creates[0], { external_id: '1', name: 'nb-001', hostname: '10.20.0.1', template: 'juniper-junos', group_path: 'Americas/NYC1' });
    const pages = src.requests.filter((q) => q.path.startsWith('/api/dcim/devices/'));
    assert.equal(pages.length, 3, 'three pages of 200, following next');
    assert.ok(src.requests.every((q) => q.auth === `Token ${TOKEN}`));
    assert.equal(deviceByName('nb-001'), undefined, 'nothing written');
  });

  test('the sync creates 500 devices in region/site groups, audited through the door inventory naming the source', async () => {
    const r = await call(`/inventory-sources/${sourceId}/sync`, { method: 'POST', json: {} });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.creates.length, 500);
    const n = t.services.db.prepare('SELECT count(*) FROM inventory_devices WHERE source_id = ?').pluck().get(sourceId);
    assert.equal(n, 500);
    const d = deviceByName('nb-002')!;
    assert.equal(d.hostname, '10.20.0.2');
    const group = t.services.db
      .prepare('SELECT g.name, p.name AS parent FROM device_groups g JOIN device_groups p ON p.id = g.parent_id WHERE g.id = ?')
      .get(d.group_id);
    assert.deepEqual({ ...(group as object) }, { name: 'AMS1', parent: 'Europe' });
    const audit = listAudit(t.services.db, SCOPE_ALL, { action: 'device.create' }, 1, 5).items[0];
    assert.equal(audit.door, 'inventory');
    assert.equal(audit.actor, 'inventory:netbox-prod');
    assert.match(audit.door_ref ?? '', /source netbox-prod, started by /);
    const listed = await call(`/inventory-sources/${sourceId}`);
    assert.equal(listed.body.devices, 500);
    assert.equal(listed.body.last_sync_error, null);
  });

  test('a second state with three removed and one renamed: the dry run lists exactly that, the sync retires three and renames one', async () => {
    const renamed = deviceByName('nb-010')!;
    const version = recordBackup(t.services, renamed.id as number, { text: 'hostname nb-010\n' });
    src.netbox = fleet(500)
      .filter((d) => ![20, 30, 40].includes(d.id))
      .map((d) => (d.id === 10 ? { ...d, name: 'nb-010-renamed' } : d));
    const dry = await call(`/inventory-sources/${sourceId}/sync?dry_run=true`, { method: 'POST', json: {} });
    assert.equal(dry.status, 200, dry.text);
    assert.deepEqual(
      dry.body.retirements.map((x: { name: string }) => x.name),
      ['nb-020', 'nb-030', 'nb-040'],
    );
    assert.deepEqual(dry.body.updates, [
      { device_id: renamed.id, external_id: '10', name: 'nb-010-renamed', changes: { name: { before: 'nb-010', after: 'nb-010-renamed' } } },
    ]);
    assert.deepEqual([dry.body.creates.length, dry.body.reactivations.length, dry.body.unchanged], [0, 0, 496]);
    assert.equal(deviceByName('nb-020')!.retired_at, null, 'the dry run wrote nothing');

    const r = await call(`/inventory-sources/${sourceId}/sync`, { method: 'POST', json: {} });
    assert.equal(r.status, 200, r.text);
    for (const name of ['nb-020', 'nb-030', 'nb-040']) {
      const d = deviceByName(name)!;
      assert.notEqual(d.retired_at, null, `${name} retired, not deleted`);
      assert.equal(d.enabled, 0);
    }
    assert.equal(deviceByName('nb-010'), undefined);
    assert.equal(deviceByName('nb-010-renamed')!.id, renamed.id, 'same device');
    const history = await call(`/devices/${renamed.id}/backups`);
    assert.equal(history.body.items[0].id, version, 'its history is kept');
    const again = await call(`/inventory-sources/${sourceId}/sync?dry_run=true`, { method: 'POST', json: {} });
    assert.deepEqual([again.body.creates.length, again.body.updates.length, again.body.retirements.length], [0, 0, 0], 'nothing left to do');
  });

  test('a device back in the source is reactivated', async () => {
    src.netbox = fleet(500)
      .filter((d) => ![30, 40].includes(d.id))
      .map((d) => (d.id === 10 ? { ...d, name: 'nb-010-renamed' } : d));
    const r = await call(`/inventory-sources/${sourceId}/sync`, { method: 'POST', json: {} });
    assert.deepEqual(r.body.reactivations, [{ device_id: deviceByName('nb-020')!.id, name: 'nb-020' }]);
    assert.equal(deviceByName('nb-020')!.retired_at, null);
  });

  test('a field the source owns is refused through the API (409 naming the source); the others change', async () => {
    const id = deviceByName('nb-002')!.id as number;
    const r = await call(`/devices/${id}`, { method: 'PUT', json: { name: 'hand-edited' } });
    const e = expectError(r, 409, 'CONFLICT');
    assert.match(e.message, /comes from inventory source netbox-prod: its name changes there/);
    const moved = await call(`/devices/${id}`, { method: 'PUT', json: { group_id: seedGroup(t.services.db, 'hand-group') } });
    expectError(moved, 409, 'CONFLICT');
    const ok = await call(`/devices/${id}`, { method: 'PUT', json: { description: 'rack 4', name: 'nb-002' } });
    assert.equal(ok.status, 200, ok.text);
  });

  test('a source that cannot be read whole changes nothing and says why', async () => {
    src.failWith = 500;
    try {
      const r = await call(`/inventory-sources/${sourceId}/sync`, { method: 'POST', json: {} });
      const e = expectError(r, 409, 'CONFLICT');
      assert.match(e.message, /could not be read: .*answered HTTP 500/);
    } finally {
      src.failWith = null;
    }
    assert.equal(deviceByName('nb-003')!.retired_at, null);
    assert.match((await call(`/inventory-sources/${sourceId}`)).body.last_sync_error, /HTTP 500/);
  });

  test('a narrow role cannot sync: without inventory.sync, or with a scope short of all', async () => {
    const viewer = await t.keyFor({ permissions: ['inventory.view'] });
    expectError(await call(`/inventory-sources/${sourceId}/sync?dry_run=true`, { method: 'POST', json: {}, k: viewer }), 403, 'PERMISSION_DENIED');
    const scoped = await t.keyFor({ permissions: ['inventory.view', 'inventory.sync'], groups: [seedGroup(t.services.db, 'scoped-sync')] });
    expectError(await call(`/inventory-sources/${sourceId}/sync?dry_run=true`, { method: 'POST', json: {}, k: scoped }), 403, 'PERMISSION_DENIED');
    const reader = await t.keyFor({ permissions: ['devices.view'] });
    expectError(await call('/inventory-sources', { k: reader }), 403, 'PERMISSION_DENIED');
  });
});

describe('other kinds', () => {
  test('a Nautobot source reads depth-1 pages and groups by location', async () => {
    src.netbox = fleet(3).map((d) => ({ ...d, name: `nauto-${d.id}` }));
    const r = await call('/inventory-sources', {
      method: 'POST',
      json: {
        name: 'nautobot',
        kind: 'nautobot',
        url: `${src.url}/nautobot`,
        token: TOKEN,
        credential_id,
        default_template: 'cisco-ios',
        group_path: 'nautobot/{location}',
      },
    });
    assert.equal(r.status, 201, r.text);
    const s = await call(`/inventory-sources/${r.body.id}/sync`, { method: 'POST', json: {} });
    assert.equal(s.status, 200, s.text);
    assert.deepEqual(
      s.body.creates.map((c: { name: string; hostname: string; group_path: string; template: string }) => [c.name, c.hostname, c.group_path, c.template]),
      [
        ['nauto-1', '10.20.0.1', 'nautobot/NYC1', 'cisco-ios'],
        ['nauto-2', '10.20.0.2', 'nautobot/AMS1', 'cisco-ios'],
        ['nauto-3', '10.20.0.3', 'nautobot/AMS1', 'cisco-ios'],
      ],
    );
  });

  test("a generic HTTP source in Oxidized's layout, with its map of field names, and an unmapped platform skipped", async () => {
    src.oxidized = [
      { name: 'ox-1', ip: '192.0.2.1', model: 'ios', group: 'branch' },
      { name: 'ox-2', ip: '192.0.2.2', model: 'eos', group: 'branch' },
      { name: 'ox-3', ip: '192.0.2.3', model: 'weird', group: 'lab' },
    ];
    const base = {
      kind: 'http',
      url: `${src.url}/oxidized/nodes.json`,
      credential_id,
      platform_map: { ios: 'cisco-ios', eos: 'arista-eos' },
      group_path: 'oxidized/{group}',
    };
    const r = await call('/inventory-sources', { method: 'POST', json: { ...base, name: 'oxidized' } });
    assert.equal(r.status, 201, r.text);
    const s = await call(`/inventory-sources/${r.body.id}/sync`, { method: 'POST', json: {} });
    assert.equal(s.status, 200, s.text);
    assert.deepEqual(
      s.body.creates.map((c: { name: string; hostname: string; template: string; group_path: string }) => [c.name, c.hostname, c.template, c.group_path]),
      [
        ['ox-1', '192.0.2.1', 'cisco-ios', 'oxidized/branch'],
        ['ox-2', '192.0.2.2', 'arista-eos', 'oxidized/branch'],
      ],
    );
    assert.deepEqual(s.body.skipped, [
      { external_id: 'ox-3', name: 'ox-3', reason: 'platform "weird" is not in platform_map and there is no default_template' },
    ]);
    // Field names as Oxidized's `map` sets them, nested keys dotted.
    src.oxidized = [{ hostname: 'ox-nested', node: { mgmt: '192.0.2.9' }, os: 'ios', site: 'x' }];
    const m = await call('/inventory-sources', {
      method: 'POST',
      json: { ...base, name: 'oxidized-map', fields: { name: 'hostname', ip: 'node.mgmt', model: 'os', group: 'site' } },
    });
    assert.equal(m.status, 201, m.text);
    const p = await call(`/inventory-sources/${m.body.id}/sync?dry_run=true`, { method: 'POST', json: {} });
    assert.deepEqual(p.body.creates, [{ external_id: 'ox-nested', name: 'ox-nested', hostname: '192.0.2.9', template: 'cisco-ios', group_path: 'oxidized/x' }]);
  });
});

test('the web page lists the sources, previews a sync without writing, applies it; the device form shows source-owned fields read-only', async () => {
  src.oxidized = [{ name: 'web-1', ip: '192.0.2.60', model: 'ios', group: 'web' }];
  const r = await call('/inventory-sources', {
    method: 'POST',
    json: { name: 'web-source', kind: 'http', url: `${src.url}/oxidized/nodes.json`, credential_id, platform_map: { ios: 'cisco-ios' }, group_path: '{group}' },
  });
  const w = new WebClient(t.url);
  assert.equal((await w.login('admin', 'admin-password-1')).status, 303);
  const list = await w.get('/inventory');
  assert.equal(list.res.status, 200);
  assert.match(list.html, /data-source="web-source"/);
  const preview = await w.post(`/inventory/${r.body.id}/preview`, {}, { csrf: true });
  assert.equal(preview.res.status, 200);
  assert.match(preview.html, /<tr data-change="create"><td>create<\/td><td>web-1<\/td><td>192\.0\.2\.60, cisco-ios, web<\/td>/);
  assert.equal(deviceByName('web-1'), undefined, 'a preview writes nothing');
  const applied = await w.post(`/inventory/${r.body.id}/sync`, {}, { csrf: true });
  assert.equal(applied.res.status, 303);
  const id = deviceByName('web-1')!.id;
  const form = await w.get(`/devices/${id}/edit`);
  assert.match(form.html, /id="source-owned"/);
  assert.match(form.html, /<input name="name" required="" maxlength="128" value="web-1" readonly=""\/>/);
  assert.match(form.html, /<input type="hidden" name="template_id"/);
  const saved = await w.post(`/devices/${id}/edit`, { ...formValues(form.html), description: 'from the web' }, { csrf: true });
  assert.equal(saved.res.status, 303, 'the form saves its other fields');
  assert.equal(deviceByName('web-1')!.description, 'from the web');
});

/** The named inputs and selected options of a form page (what a browser would post back). */
function formValues(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input ([^>]*)>/g)) {
    const name = /name="(\w+)"/.exec(m[1])?.[1];
    if (name && name !== '_csrf' && !/type="checkbox"/.test(m[1])) out[name] ??= /value="([^"]*)"/.exec(m[1])?.[1] ?? '';
    if (name && /type="checkbox"/.test(m[1]) && /checked/.test(m[1])) out[name] = 'on';
  }
  for (const m of html.matchAll(/<select name="(\w+)"[^>]*>([\s\S]*?)<\/select>/g)) out[m[1]] = /<option value="([^"]*)" selected/.exec(m[2])?.[1] ?? '';
  return out;
}

test('the CLI adds a source (token on standard input), previews and syncs it, and lists it', async () => {
  src.oxidized = [{ name: 'cli-1', ip: '192.0.2.70', model: 'ios', group: 'cli' }];
  const opts = { env: { CONFVAULT_NOTIFY_ALLOWED_DESTINATIONS: '127.0.0.1' } };
  const data = ['--data-dir', t.services.dataDir];
  const added = await runCliAsync(
    [
      'inventory',
      'add',
      'cli-source',
      '--kind',
      'http',
      '--url',
      `${src.url}/oxidized/nodes.json`,
      '--credential',
      'inventory-cred',
      '--token-stdin',
      '--platform-map',
      'ios=cisco-ios',
      '--group-path',
      '{group}',
      ...data,
    ],
    { ...opts, input: `${TOKEN}\n` },
  );
  assert.equal(added.status, 0, added.stderr);
  const dry = await runCliAsync(['inventory', 'sync', 'cli-source', '--dry-run', ...data], opts);
  assert.equal(dry.status, 0, dry.stderr);
  assert.equal(dry.stdout, 'create\tcli-1\t192.0.2.70\tcisco-ios\tcli\n');
  assert.match(dry.stderr, /would create 1/);
  assert.equal(deviceByName('cli-1'), undefined);
  const sync = await runCliAsync(['inventory', 'sync', 'cli-source', ...data], opts);
  assert.equal(sync.status, 0, sync.stderr);
  assert.equal(deviceByName('cli-1')!.hostname, '192.0.2.70');
  const list = await runCliAsync(['inventory', 'list', ...data], opts);
  assert.match(list.stdout, /\tcli-source\thttp\t.*\t1\ton demand\t/);
  for (const r of [added, dry, sync, list]) assert.ok(!(r.stdout + r.stderr).includes(TOKEN), 'the token is never printed');
});

test('a source with an interval is synced by the schedule when due, once per interval', async () => {
  src.oxidized = [{ name: 'sched-1', ip: '192.0.2.50', model: 'ios', group: 'sched' }];
  const r = await call('/inventory-sources', {
    method: 'POST',
    json: {
      name: 'scheduled',
      kind: 'http',
      url: `${src.url}/oxidized/nodes.json`,
      credential_id,
      platform_map: { ios: 'cisco-ios' },
      group_path: '{group}',
      interval_minutes: 5,
    },
  });
  assert.equal(r.status, 201, r.text);
  const ctx = { db: t.services.db, secrets: t.services.secrets, config: t.services.config, log: t.services.log };
  assert.equal(await syncDueSources(ctx), 1);
  assert.equal(deviceByName('sched-1')!.hostname, '192.0.2.50');
  assert.equal(await syncDueSources(ctx), 0, 'not due again before its interval');
  assert.equal(await syncDueSources(ctx, Date.now() + 5 * 60_000), 1);
  const row = listAudit(t.services.db, SCOPE_ALL, { action: 'inventory.sync' }, 1, 1).items[0];
  assert.match(row.door_ref ?? '', /source scheduled, started by schedule/);
});

test('the token never appears in a response, the audit trail or the log', () => {
  assert.ok(responses.length > 10);
  for (const text of responses) assert.ok(!text.includes(TOKEN), 'not in a response');
  const trail = t.services.db.prepare('SELECT details, changes, door_ref FROM audit_log').all();
  assert.ok(!JSON.stringify(trail).includes(TOKEN), 'not in the audit trail');
  assert.ok(logLines.length > 0, 'the log was read');
  assert.ok(!logLines.join('').includes(TOKEN), 'not in the log');
});
