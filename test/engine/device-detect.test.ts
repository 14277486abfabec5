// Detecting a device's platform and credential through the service and the CLI: credential order, the tries cap, the credential and scope rules, the audit row.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { detectDevice } from '../../src/engine/device-detect';
import { createCredential } from '../../src/features/credentials/credentials.service';
import { getDevice } from '../../src/features/devices/devices.service';
import { SYSTEM_ACTOR, type Actor } from '../../src/identity/actor';
import type { Permission } from '../../src/identity/permissions';
import { SCOPE_ALL } from '../../src/identity/principal';
import { REPO_ROOT, runCliAsync, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedDevice, seedGroup } from '../helpers/seed';
import { loadTranscript, startSimulator, type RunningSimulator } from '../sim/simulator';
import { WebClient } from '../web/web-client';

const ios = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/cisco-ios.json'));
const junos = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/juniper-junos.json'));

function scoped(permissions: Permission[], groups: number[]): Actor {
  return {
    principal: {
      userId: 0,
      username: 'scoped',
      roleName: 'scoped',
      permissions: new Set(permissions),
      scope: { all: false, groupIds: new Set(groups) },
      timezone: null,
      apiKeyId: null,
    },
    door: { kind: 'cli', osUser: 'test' },
    requestId: null,
  };
}

describe('device detection', () => {
  let t: TestAppliance;
  let sim: RunningSimulator;
  let linux = 0;
  let g1 = 0;
  let g2 = 0;
  const cred: Record<string, number> = {};
  const db = () => t.services.db;
  const deps = () => ({ db: db(), secrets: t.appliance.secrets, config: t.services.config });
  const cli = (...args: string[]) => runCliAsync(['device', ...args, '--data-dir', t.services.dataDir]);
  /** A credential for the simulated device "edge" (its login name), usable by `groups` (null: every group). */
  const credential = (name: string, password: string, groups: number[] | null = null) =>
    (cred[name] = createCredential(db(), SYSTEM_ACTOR, t.appliance.secrets, { name, username: 'edge', password, group_ids: groups }).id);
  const getDeviceId = (name: string) => db().prepare('SELECT id FROM devices WHERE name = ?').pluck().get(name) as number;
  const device = (name: string, credentialId: number, groupId: number | null = null, port = sim.port) =>
    seedDevice(db(), { name, port, credential_id: credentialId, template_id: linux, group_id: groupId });

  before(async () => {
    t = await startTestAppliance();
    // "edge" accepts only the password pw3, as a device would after the first two accounts' passwords changed.
    sim = await startSimulator({
      devices: [
        { name: 'edge', transcript: ios, password: 'pw3' },
        { name: 'mx', transcript: junos, username: 'mx', password: 'junos-pw' },
      ],
    });
    linux = seedBuiltinTemplate(db(), 'linux');
    g1 = seedGroup(db(), 'detect-g1');
    g2 = seedGroup(db(), 'detect-g2');
    credential('wrong1', 'nope-1');
    credential('wrong2', 'nope-2');
    credential('right', 'pw3');
  });
  after(async () => {
    await sim?.close();
    await t?.close();
  });

  test("tries the device's own credential first, then the others by id; picks the template and the credential that logged in", async () => {
    const id = device('det-order', cred.wrong2);
    const r = await detectDevice(deps(), SYSTEM_ACTOR, id, { apply: true });
    assert.deepEqual(
      r.tries.map((x) => [x.credential, x.failure]),
      [
        ['wrong2', 'AUTH_FAILED'],
        ['wrong1', 'AUTH_FAILED'],
        ['right', null],
      ],
    );
    assert.equal(r.template, 'cisco-ios');
    assert.match(r.reason, /^cisco-ios: 'show version' showed "Cisco IOS Software, /);
    assert.equal(r.applied, true);
    const d = getDevice(db(), SCOPE_ALL, id);
    assert.deepEqual([d.template_id, d.credential_id], [seedBuiltinTemplate(db(), 'cisco-ios'), cred.right]);
    const audit = db().prepare("SELECT details FROM audit_log WHERE action = 'device.detect' AND target = ?").pluck().get(`device ${id}`) as string;
    assert.deepEqual(JSON.parse(audit).tried, [cred.wrong2, cred.wrong1, cred.right]);
    assert.doesNotMatch(audit, /pw3|nope-/);
  });

  test('stops at backup.detect_max_tries logins, so no account is locked out; the device is left as it was', async () => {
    const id = device('det-cap', cred.wrong1);
    const config = { ...t.services.config, backup: { ...t.services.config.backup, detect_max_tries: 2 } };
    const r = await detectDevice({ ...deps(), config }, SYSTEM_ACTOR, id, { apply: true });
    assert.deepEqual(
      r.tries.map((x) => x.credential),
      ['wrong1', 'wrong2'],
    );
    assert.equal(r.template, null);
    assert.equal(r.reason, 'could not tell: none of the 2 credential(s) tried was accepted (wrong1, wrong2)');
    assert.equal(r.applied, false);
    const d = getDevice(db(), SCOPE_ALL, id);
    assert.deepEqual([d.template_id, d.credential_id], [linux, cred.wrong1]);
  });

  test('a scoped user detects only with credentials they may use, on devices in their scope', async () => {
    // The right password in "right" (usable by every group) and "right-g1-g2": a user scoped to g1 is entitled to
    // neither (their usage reaches beyond the user's scope), so only the device's own is tried.
    credential('right-g1-g2', 'pw3', [g1, g2]);
    const narrow = credential('wrong-g1', 'nope-3', [g1]);
    const id = device('det-scoped', narrow, g1);
    const user = scoped(['devices.view', 'devices.update', 'credentials.view'], [g1]);
    const r = await detectDevice(deps(), user, id, { apply: true });
    assert.deepEqual(
      r.tries.map((x) => x.credential_id),
      [narrow],
    );
    assert.equal(r.template, null);
    // An administrator may use them all (the cap raised to reach the fourth in order).
    const config = { ...t.services.config, backup: { ...t.services.config.backup, detect_max_tries: 10 } };
    const admin = await detectDevice({ ...deps(), config }, SYSTEM_ACTOR, id, { apply: false });
    assert.equal(admin.credential_id, cred.right);
    assert.equal(admin.template, 'cisco-ios');
    // Without credentials.view no credential is theirs; outside their scope, or without devices.update, refused.
    const blind = await detectDevice(deps(), scoped(['devices.view', 'devices.update'], [g1]), id, { apply: true });
    assert.equal(blind.reason, 'could not tell: no credential you may use covers this device group');
    await assert.rejects(detectDevice(deps(), scoped(['devices.view', 'devices.update', 'credentials.view'], [g2]), id, { apply: true }), {
      code: 'PERMISSION_DENIED',
    });
    await assert.rejects(detectDevice(deps(), scoped(['devices.view', 'credentials.view'], [g1]), id, { apply: true }), { code: 'PERMISSION_DENIED' });
  });

  test('an unreachable device: a clear "could not tell" with the reason, one try only, never a crash', async () => {
    const closed = await startSimulator({ devices: [{ name: 'gone', transcript: ios }] });
    const port = closed.port;
    await closed.close();
    const id = device('det-gone', cred.right, null, port);
    const r = await detectDevice(deps(), SYSTEM_ACTOR, id, { apply: true });
    assert.equal(r.tries.length, 1);
    assert.equal(r.tries[0].failure, 'CONNECTION_REFUSED');
    assert.match(r.reason, /^could not tell: /);
  });

  test('API: POST /devices with template_id and credential_id "auto" creates the detected device; nothing found is a 422 saying why', async () => {
    const key = await t.keyFor({ permissions: 'all' });
    const mx = createCredential(db(), SYSTEM_ACTOR, t.appliance.secrets, { name: 'mx-api', username: 'mx', password: 'junos-pw' }).id;
    const body = { name: 'api-auto', hostname: '127.0.0.1', port: sim.port, credential_id: mx, template_id: 'auto' };
    const res = await t.api('/api/v1/devices', { method: 'POST', key, json: body });
    assert.equal(res.status, 201, await res.clone().text());
    const created = (await res.json()) as { template_id: number; credential_id: number };
    assert.deepEqual([created.template_id, created.credential_id], [seedBuiltinTemplate(db(), 'juniper-junos'), mx]);
    const none = await t.api('/api/v1/devices', { method: 'POST', key, json: { ...body, name: 'api-none', port: 1, credential_id: 'auto' } });
    assert.equal(none.status, 422);
    const text = await none.text();
    assert.match(text, /"field":"template_id"/);
    assert.match(text, /could not tell: /);
  });

  describe('the web: Detect on a device page, auto in the Add device form', () => {
    let web: WebClient;
    let mx = 0;
    before(async () => {
      web = new WebClient(t.url);
      assert.equal((await web.login('admin', 'admin-password-1')).status, 303);
      mx = createCredential(db(), SYSTEM_ACTOR, t.appliance.secrets, { name: 'mx-web', username: 'mx', password: 'junos-pw' }).id;
    });

    test('Detect sets the template and credential, or says why it left the device as it was', async () => {
      const id = device('web-mx', mx);
      const page = await web.get(`/devices/${id}`);
      assert.match(page.html, new RegExp(`action="/devices/${id}/detect"`));
      const { res } = await web.post(`/devices/${id}/detect`, {}, { csrf: true });
      assert.equal(res.status, 303);
      assert.equal(getDevice(db(), SCOPE_ALL, id).template_id, seedBuiltinTemplate(db(), 'juniper-junos'));
      const after = await web.get(`/devices/${id}`);
      assert.match(after.html, /Detected juniper-junos: /);
      const gone = await web.post(`/devices/${getDeviceId('det-gone')}/detect`, {}, { csrf: true });
      assert.equal(gone.res.status, 303);
      assert.match((await web.get(`/devices/${getDeviceId('det-gone')}`)).html, /Detection left the device as it was: could not tell: /);
    });

    test('Add device with template "auto": created with the detected template; nothing found: the form says why', async () => {
      assert.match((await web.get('/devices/new')).html, /<option value="auto"/);
      const form = {
        name: 'web-auto',
        hostname: '127.0.0.1',
        port: String(sim.port),
        protocol: 'ssh',
        group_id: '',
        credential_id: String(mx),
        template_id: 'auto',
        schedule: '',
        description: '',
        enabled: 'on',
      };
      const { res } = await web.post('/devices', form, { csrf: true });
      assert.equal(res.status, 303);
      const id = Number(/\/devices\/(\d+)/.exec(res.headers.get('location') ?? '')?.[1]);
      assert.equal(getDevice(db(), SCOPE_ALL, id).template_id, seedBuiltinTemplate(db(), 'juniper-junos'));
      const none = await web.post('/devices', { ...form, name: 'web-none', port: '1' }, { csrf: true });
      assert.equal(none.res.status, 422);
      assert.match(none.html, /could not tell: /);
    });
  });

  describe('confvault device detect / device add --template auto', () => {
    let mxCred = 0;
    before(() => {
      mxCred = createCredential(db(), SYSTEM_ACTOR, t.appliance.secrets, { name: 'mx-login', username: 'mx', password: 'junos-pw' }).id;
    });

    test('detect ID: one line (id, name, template, credential, why), the device updated, exit 0', async () => {
      const id = device('cli-mx', mxCred);
      const r = await cli('detect', String(id));
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^${id}\\tcli-mx\\tjuniper-junos\\tmx-login\\tjuniper-junos: the banner showed "--- JUNOS 21\\.4R3`));
      assert.equal(getDevice(db(), SCOPE_ALL, id).template_id, seedBuiltinTemplate(db(), 'juniper-junos'));
    });

    test('detect --dry-run --json: the evidence, nothing changed; a device not detected exits 1', async () => {
      const id = device('cli-dry', mxCred);
      const r = await cli('detect', String(id), '--dry-run', '--json');
      assert.equal(r.status, 0, r.stderr);
      const [res] = JSON.parse(r.stdout) as { template: string; applied: boolean; candidates: { evidence: { source: string; command?: string }[] }[] }[];
      assert.equal(res.template, 'juniper-junos');
      assert.equal(res.applied, false);
      assert.ok(res.candidates[0].evidence.some((e) => e.source === 'probe' && e.command === 'show version'));
      assert.equal(getDevice(db(), SCOPE_ALL, id).template_id, linux);
      const gone = await cli('detect', 'det-gone');
      assert.equal(gone.status, 1);
      assert.match(gone.stdout, /\tdet-gone\t-\t-\tcould not tell: /);
      assert.match(gone.stderr, /1 of 1 device\(s\) not detected: left as they were/);
    });

    test('import: rows with template or credential "auto" are detected first; a row nothing was found for is refused with the reason', async () => {
      const csv = [
        'name,hostname,port,protocol,group,credential,template',
        `imp-mx,127.0.0.1,${sim.port},ssh,,mx-login,auto`,
        `imp-gone,127.0.0.1,1,ssh,,auto,auto`,
      ].join('\n');
      const r = await runCliAsync(['device', 'import', '-', '--mode', 'valid', '--data-dir', t.services.dataDir], { input: csv + '\n' });
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /^row 2: detected: juniper-junos with credential \d+$/m);
      assert.match(r.stderr, /^row 3: detected: could not tell: /m);
      assert.match(r.stderr, /^row 3: row: detection: could not tell: /m);
      assert.match(r.stdout, /^\d+\timp-mx\tcreated$/m);
      assert.equal(getDevice(db(), SCOPE_ALL, getDeviceId('imp-mx')).template_id, seedBuiltinTemplate(db(), 'juniper-junos'));
      assert.equal(getDeviceId('imp-gone'), undefined);
    });

    test('add --template auto --credential auto: created with what was detected', async () => {
      const r = await cli('add', '--name', 'cli-auto', '--hostname', '127.0.0.1', '--port', String(sim.port), '--template', 'auto', '--credential', 'mx-login');
      assert.equal(r.status, 0, r.stderr);
      const d = getDevice(db(), SCOPE_ALL, Number(r.stdout.trim()));
      assert.deepEqual([d.template_id, d.credential_id], [seedBuiltinTemplate(db(), 'juniper-junos'), mxCred]);
      const none = await cli('add', '--name', 'cli-none', '--hostname', '127.0.0.1', '--port', '1', '--template', 'auto', '--credential', 'auto');
      assert.equal(none.status, 1);
      assert.match(none.stderr, /detection found no platform: could not tell: /);
    });
  });
});
