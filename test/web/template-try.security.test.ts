// "Try on device" as a way around the template rules: unsaved commands by a scoped user, configuration read without backups.view, raw secrets.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { REPO_ROOT, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { loadTranscript, startSimulator, type RunningSimulator } from '../sim/simulator';
import { WebClient } from './web-client';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));

function customForm(name: string, over: Record<string, string> = {}): Record<string, string> {
  return {
    name,
    vendor: 'FRR lab',
    description: '',
    mode: 'shell',
    prompt: '',
    pre_commands: 'terminal length 0',
    commands: 'show running-config',
    strip_patterns: '^Building configuration\\.\\.\\.\\s*$\n^Current configuration:\\s*$',
    ignore_patterns: '',
    redact_patterns: '^(\\s*ip ospf message-digest-key \\d+ md5) \\S+ => $1 <redacted>',
    exit_command: 'exit',
    ...over,
  };
}

describe('template Try on device: security', () => {
  let t: TestAppliance;
  let sim: RunningSimulator;
  let admin: WebClient;
  let scoped: WebClient;
  let noView: WebClient;
  const ids = { a: 0, b: 0, inScope: 0, shared: 0 };
  const tries = () => t.services.db.prepare("SELECT count(*) FROM audit_log WHERE action = 'template.try'").pluck().get() as number;

  async function create(name: string): Promise<number> {
    const r = await admin.post('/templates', customForm(name), { csrf: true });
    assert.equal(r.res.status, 303);
    return Number(/\/templates\/(\d+)$/.exec(r.res.headers.get('location') ?? '')?.[1]);
  }

  before(async () => {
    t = await startTestAppliance();
    sim = await startSimulator({ devices: [{ name: 'r1', transcript: frr, username: 'netops', password: 'netops123' }] });
    const { db, secrets } = t.services;
    const A = seedGroup(db, 'Alpha');
    const B = seedGroup(db, 'Bravo');
    const cred = seedCredential(db, secrets, { name: 'lab', username: 'netops', password: 'netops123' });
    const builtin = seedBuiltinTemplate(db, 'frr');
    ids.a = seedDevice(db, { name: 'alpha-r1', port: sim.port, credential_id: cred, template_id: builtin, group_id: A });
    createRole(db, SYSTEM_ACTOR, { name: 'tpl-reader', permissions: ['templates.view', 'templates.update', 'backups.run', 'backups.view', 'devices.view'] });
    createRole(db, SYSTEM_ACTOR, { name: 'tpl-blind', permissions: ['templates.view', 'templates.update', 'backups.run', 'devices.view'] });
    await createUser(db, SYSTEM_ACTOR, { username: 'scoped', password: 'scoped-password-1', role: 'tpl-reader', groups: [A] });
    await createUser(db, SYSTEM_ACTOR, { username: 'blind', password: 'blind-password-1', role: 'tpl-blind' });
    admin = new WebClient(t.url);
    assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
    scoped = new WebClient(t.url);
    assert.equal((await scoped.login('scoped', 'scoped-password-1')).status, 303);
    noView = new WebClient(t.url);
    assert.equal((await noView.login('blind', 'blind-password-1')).status, 303);
    ids.inScope = await create('lab-frr');
    ids.shared = await create('shared-frr');
    ids.b = seedDevice(db, { name: 'bravo-r1', port: sim.port, credential_id: cred, template_id: ids.shared, group_id: B });
  });
  after(async () => {
    await sim.close();
    await t.close();
  });

  test('a scoped user cannot send unsaved commands: saving them would need scope all', async () => {
    const n = tries();
    const edits: Record<string, string>[] = [
      { commands: 'show running-config\nreload in 1' },
      { pre_commands: 'terminal length 0\nclear ip bgp *' },
      { exit_command: 'reload' },
    ];
    for (const over of edits) {
      const r = await scoped.post(`/templates/${ids.inScope}/try`, { ...customForm('lab-frr', over), device_id: String(ids.a) }, { csrf: true });
      assert.equal(r.res.status, 403, JSON.stringify(over));
      assert.match(r.html, /scope of all/);
      assert.doesNotMatch(r.html, /hostname r1-lab/);
    }
    const fresh = await scoped.post('/templates/new/try', { ...customForm('mine', { commands: 'reload in 1' }), device_id: String(ids.a) }, { csrf: true });
    assert.equal(fresh.res.status, 403);
    assert.doesNotMatch(fresh.html, /hostname r1-lab/);
    assert.equal(tries(), n, 'nothing ran');
  });

  test('a scoped user cannot try an edit of a template used outside the scope (e.g. its redaction switched off)', async () => {
    const n = tries();
    const r = await scoped.post(
      `/templates/${ids.shared}/try`,
      { ...customForm('shared-frr', { redact_patterns: '' }), device_id: String(ids.a) },
      { csrf: true },
    );
    assert.equal(r.res.status, 403);
    assert.match(r.html, /outside your device-group scope/);
    assert.doesNotMatch(r.html, /Lab0spfMd5Key/);
    assert.equal(tries(), n);
    // As stored, it is the template the devices already run: allowed.
    const ok = await scoped.post(`/templates/${ids.shared}/try`, { ...customForm('shared-frr'), device_id: String(ids.a) }, { csrf: true });
    assert.equal(ok.res.status, 200);
    assert.match(ok.html, /id="trial-text">[\s\S]*hostname r1-lab/);
  });

  test('Try shows a configuration, so it needs backups.view', async () => {
    const n = tries();
    const page = await noView.get(`/templates/${ids.inScope}`);
    assert.doesNotMatch(page.html, /Try on device/);
    const r = await noView.post(`/templates/${ids.inScope}/try`, { ...customForm('lab-frr'), device_id: String(ids.a) }, { csrf: true });
    assert.equal(r.res.status, 403);
    assert.doesNotMatch(r.html, /hostname r1-lab/);
    assert.equal(tries(), n);
  });

  test('with redaction on, the raw output is redacted as well', async () => {
    const r = await admin.post(`/templates/${ids.inScope}/try`, { ...customForm('lab-frr', { redact: 'on' }), device_id: String(ids.a) }, { csrf: true });
    assert.equal(r.res.status, 200);
    const raw = /id="trial-raw">([\s\S]*?)<\/pre>/.exec(r.html)?.[1] ?? '';
    assert.match(raw, /Building configuration/, 'raw: nothing stripped');
    assert.match(raw, /md5 &lt;redacted&gt;/);
    assert.doesNotMatch(r.html, /Lab0spfMd5Key/);
  });
});
