// Secret redaction of stored backups: on by default, keyed tokens from this appliance's master key, the switches that turn it off.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { openAppliance, type Appliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { loadMigrations, migrate } from '../../src/db/migrate';
import { openDatabase } from '../../src/db/open';
import { BackupRunner, type RunnerDeps } from '../../src/engine/runner';
import { getBackupRow, readBackupText } from '../../src/features/backups/backups.service';
import { getTemplateSpec } from '../../src/features/templates/templates.service';
import { MASTER_KEY_FILE } from '../../src/identity/secrets';
import { secretToken } from '../../src/templates/redact';
import { getBuiltinTemplate } from '../../src/templates/index';
import { REPO_ROOT, startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { rawState, seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { loadTranscript, startSimulator, type RunningSimulator, type SimDevice } from '../sim/simulator';
import { WebClient } from '../web/web-client';

const ios = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/cisco-ios.json'));
const iosConfig = ios.commands['show running-config'];
const COMMUNITY = 'Xk9pR4mTqZ2v';
const VRF_INFORM_COMMUNITY = 'Vrf1nformC0mm';
const secretsOf = (name: string) =>
  (JSON.parse(readFileSync(path.join(REPO_ROOT, `test/sim/transcripts/${name}.json`), 'utf8')) as { secrets: string[] }).secrets;

let sim: RunningSimulator;
const device: SimDevice = { name: 'r1', transcript: ios, username: 'r1', password: 'pw-r1-123', commands: {} };

before(async () => {
  sim = await startSimulator({ devices: [device] });
});
after(() => sim.close());

/** A device on the simulator, backed up with `template` (a built-in's name or a template id). */
function addDevice(deps: Pick<RunnerDeps, 'db' | 'secrets'>, name: string, template: string | number): number {
  const { db, secrets } = deps;
  return seedDevice(db, {
    name,
    port: sim.port,
    credential_id: seedCredential(db, secrets, { name: `c-${name}`, username: 'r1', password: 'pw-r1-123', enable_secret: ios.enable?.password }),
    template_id: typeof template === 'number' ? template : seedBuiltinTemplate(db, template),
  });
}

/** Back up one device and return the run result with the stored text. */
async function backUp(deps: RunnerDeps, deviceId: number, backup: Partial<RunnerDeps['config']['backup']> = {}) {
  const config = { ...deps.config, backup: { ...deps.config.backup, retries: 0, ...backup } };
  const r = await new BackupRunner({ ...deps, config }).backupDevice(deviceId, { trigger: 'manual' });
  assert.equal(r.success, true, `${r.failure}: ${r.message}`);
  const text = readBackupText(deps.snapshots, null, getBackupRow(deps.db, r.backupId!)!);
  assert.ok(text);
  return { ...r, text };
}

describe('redaction of stored backups', () => {
  let t: TestAppliance;
  let key: string;
  let deviceId: number;
  before(async () => {
    t = await startTestAppliance();
    key = await t.keyFor({ permissions: 'all' });
    deviceId = addDevice(t.services, 'ios-1', 'cisco-ios');
  });
  after(() => t.close());
  const token = (secret: string) => secretToken(t.services.secrets.redactionKey, secret);

  test('is on by default: every planted secret is a token of this appliance, equal secrets give equal tokens', async () => {
    assert.equal(loadConfig({ dataDir: tempDir() }, {}).backup.redact_secrets, true);
    device.commands = {};
    const { text } = await backUp(t.services, deviceId);
    for (const s of secretsOf('cisco-ios')) assert.ok(!text.includes(s), `${s} stored in clear`);
    assert.match(text, new RegExp(`^snmp-server community ${token(COMMUNITY)} RO SNMP-RO$`, 'm'));
    assert.match(text, new RegExp(`^snmp-server host 10\\.99\\.0\\.20 version 2c ${token(COMMUNITY)}$`, 'm'));
    assert.match(text, new RegExp(`^snmp-server host 10\\.99\\.0\\.21 vrf Mgmt-vrf informs version 2c ${token(VRF_INFORM_COMMUNITY)}$`, 'm'));
    assert.notEqual(token(COMMUNITY), token(VRF_INFORM_COMMUNITY));
  });

  test('a changed secret is a changed line, and the backup counts as changed', async () => {
    device.commands = {};
    const before = await backUp(t.services, deviceId);
    device.commands = { 'show running-config': iosConfig.replaceAll(COMMUNITY, 'N3wCommunity7') };
    try {
      const changed = await backUp(t.services, deviceId);
      assert.equal(changed.changed, true);
      assert.ok(!changed.text.includes('N3wCommunity7'));
      const a = before.text.split('\n');
      const b = changed.text.split('\n');
      assert.equal(a.length, b.length);
      const differing = a.map((line, i) => [line, b[i]]).filter(([x, y]) => x !== y);
      assert.deepEqual(
        differing.map(([, y]) => y),
        [`snmp-server community ${token('N3wCommunity7')} RO SNMP-RO`, `snmp-server host 10.99.0.20 version 2c ${token('N3wCommunity7')}`],
      );
    } finally {
      device.commands = {};
    }
  });

  test('the key is derived from master.key, not master.key itself, and is the same after a restart', async () => {
    const master = Buffer.from(readFileSync(path.join(t.services.dataDir, MASTER_KEY_FILE), 'utf8').trim(), 'base64');
    assert.equal(t.services.secrets.redactionKey.length, 32);
    assert.ok(!t.services.secrets.redactionKey.equals(master));
    device.commands = {};
    const first = await backUp(t.services, deviceId);
    const again: Appliance = openAppliance({}, t.services.config);
    try {
      assert.ok(again.secrets.redactionKey.equals(t.services.secrets.redactionKey));
      const r = await backUp({ ...again, log: null }, deviceId);
      assert.equal(r.changed, false, 'the same secrets after a restart give the same tokens');
      assert.equal(r.text, first.text);
    } finally {
      again.close();
    }
  });

  test('another appliance (another master key) gives other tokens for the same secret', async () => {
    const other = await startTestAppliance();
    try {
      const id = addDevice(other.services, 'ios-other', 'cisco-ios');
      device.commands = {};
      const { text } = await backUp(other.services, id);
      const theirs = secretToken(other.services.secrets.redactionKey, COMMUNITY);
      assert.notEqual(theirs, token(COMMUNITY));
      assert.ok(text.includes(`snmp-server community ${theirs} RO`));
      assert.ok(!text.includes(token(COMMUNITY)));
    } finally {
      await other.close();
    }
  });

  test('redact_secrets = false stores the configuration as received, secrets included', async () => {
    device.commands = {};
    const { text } = await backUp(t.services, deviceId, { redact_secrets: false });
    assert.ok(text.includes(`snmp-server community ${COMMUNITY} RO SNMP-RO`));
    assert.ok(!/<secret:[0-9a-f]{8}>/.test(text));
  });

  const builtinCopy = (name: string, change: Record<string, unknown>) => ({ ...getBuiltinTemplate('cisco-ios')!, name, ...change });

  test('a template with redact: false stores secrets in clear although redact_secrets is on', async () => {
    const res = await t.api('/api/v1/templates', { method: 'POST', key, json: builtinCopy('ios-restorable', { redact: false }) });
    assert.equal(res.status, 201, await res.clone().text());
    const id = addDevice(t.services, 'ios-restorable-1', ((await res.json()) as { id: number }).id);
    device.commands = {};
    const { text } = await backUp(t.services, id);
    assert.ok(text.includes(`snmp-server community ${COMMUNITY} RO SNMP-RO`));
  });

  test('a custom RE2 rule naming its secret stores that secret as a token', async () => {
    const rules = [...getBuiltinTemplate('cisco-ios')!.redact_patterns, { pattern: '^snmp-server location (?<secret>.+)$' }];
    const res = await t.api('/api/v1/templates', { method: 'POST', key, json: builtinCopy('ios-location', { redact_patterns: rules }) });
    assert.equal(res.status, 201, await res.clone().text());
    const id = addDevice(t.services, 'ios-location-1', ((await res.json()) as { id: number }).id);
    device.commands = {};
    const { text } = await backUp(t.services, id);
    assert.match(text, new RegExp(`^snmp-server location ${token('DC1 Row 4 Rack 12')}$`, 'm'));
    assert.ok(text.includes(`snmp-server community ${token(COMMUNITY)} RO`));
  });

  test('a custom template created through the API redacts unless it says otherwise', async () => {
    const res = await t.api('/api/v1/templates', { method: 'POST', key, json: { name: 'acme-min', vendor: 'ACME', commands: ['show config'] } });
    assert.equal(res.status, 201);
    assert.equal(((await res.json()) as { redact: boolean }).redact, true);
  });

  test('the web form for a new template starts with redaction on', async () => {
    const web = new WebClient(t.url);
    assert.equal((await web.login('admin', 'admin-password-1')).status, 303);
    const { html } = await web.get('/templates/new');
    assert.match(html, /<input type="checkbox" name="redact" checked/);
  });
});

test('migration 0015: custom templates that did not force redaction now redact; built-ins are left to the start-up sync', () => {
  const dir = tempDir('confvault-m0015-');
  const file = path.join(dir, 'old.db');
  const db = openDatabase(file);
  try {
    migrate(
      db,
      file,
      loadMigrations().filter((m) => m.version < 15),
    );
    const OLD = 'templates as schema 14 stored them, before the migration under test';
    const spec = (redact: boolean) => JSON.stringify({ mode: 'shell', commands: ['show run'], redact_patterns: [], redact });
    const insert = 'INSERT INTO templates (id, name, vendor, description, builtin, spec, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 1, 1)';
    rawState(db, OLD, insert, 1, 'old-custom', 'v', '', 0, spec(false));
    rawState(db, OLD, insert, 2, 'old-forced', 'v', '', 0, spec(true));
    migrate(db, file);
    assert.equal(getTemplateSpec(db, 1)?.redact, true);
    assert.equal(getTemplateSpec(db, 2)?.redact, true);
    const raw = JSON.parse(db.prepare('SELECT spec FROM templates WHERE id = 1').pluck().get() as string) as Record<string, unknown>;
    assert.deepEqual(raw.commands, ['show run'], 'the rest of the spec is kept');
  } finally {
    db.close();
  }
});
