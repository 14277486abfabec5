// Template pages: built-ins read-only, custom templates with the API's field errors, and "Try on device" against the simulator.
import { after, before, describe, test } from 'node:test';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import assert from 'node:assert/strict';
import path from 'node:path';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { REPO_ROOT, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { loadTranscript, startSimulator, type RunningSimulator } from '../sim/simulator';
import { WebClient } from './web-client';
import { mkdirSync, writeFileSync } from 'node:fs';
import { checkTemplateText } from '../../src/templates/file-check';
import { reloadTemplateFiles, templateFolder } from '../../src/features/templates/template-files.service';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));

/** The fields of a custom template form, based on the FRR transcript's commands. */
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

describe('web templates', () => {
  let t: TestAppliance;
  let sim: RunningSimulator;
  let admin: WebClient;
  let scoped: WebClient;
  let noRun: WebClient;
  const ids = { frr: 0, a: 0, b: 0, custom: 0 };
  const backups = () => t.services.db.prepare('SELECT count(*) FROM backups').pluck().get() as number;
  const templateCount = () => t.services.db.prepare('SELECT count(*) FROM templates').pluck().get() as number;

  before(async () => {
    t = await startTestAppliance();
    sim = await startSimulator({ devices: [{ name: 'r1', transcript: frr, username: 'netops', password: 'netops123' }] });
    const { db, secrets } = t.services;
    const A = seedGroup(db, 'Alpha');
    const B = seedGroup(db, 'Bravo');
    const cred = seedCredential(db, secrets, { name: 'lab', username: 'netops', password: 'netops123' });
    ids.frr = seedBuiltinTemplate(db, 'frr');
    ids.a = seedDevice(db, { name: 'alpha-r1', port: sim.port, credential_id: cred, template_id: ids.frr, group_id: A });
    ids.b = seedDevice(db, { name: 'bravo-r1', port: sim.port, credential_id: cred, template_id: ids.frr, group_id: B });
    createRole(db, SYSTEM_ACTOR, { name: 'tpl-runner', permissions: ['templates.view', 'templates.update', 'backups.run', 'backups.view', 'devices.view'] });
    createRole(db, SYSTEM_ACTOR, { name: 'tpl-editor', permissions: ['templates.view', 'templates.update'] });
    await createUser(db, SYSTEM_ACTOR, { username: 'scoped', password: 'scoped-password-1', role: 'tpl-runner', groups: [A] });
    await createUser(db, SYSTEM_ACTOR, { username: 'editor', password: 'editor-password-1', role: 'tpl-editor' });
    admin = new WebClient(t.url);
    assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
    scoped = new WebClient(t.url);
    assert.equal((await scoped.login('scoped', 'scoped-password-1')).status, 303);
    noRun = new WebClient(t.url);
    assert.equal((await noRun.login('editor', 'editor-password-1')).status, 303);
  });
  after(async () => {
    await sim.close();
    await t.close();
  });

  test('a built-in shows its settings read-only and cannot be saved', async () => {
    const list = await admin.get('/templates');
    assert.match(list.html, new RegExp(`href="/templates/${ids.frr}">frr<`));
    const page = await admin.get(`/templates/${ids.frr}`);
    assert.equal(page.res.status, 200);
    assert.match(page.html, /read-only/);
    assert.match(page.html, /show running-config/);
    assert.match(page.html, /\^Building configuration/);
    assert.doesNotMatch(page.html, /Save template|Delete template/);
    const save = await admin.post(`/templates/${ids.frr}/edit`, customForm('frr'), { csrf: true });
    assert.equal(save.res.status, 422);
    assert.match(save.html, /built-in template/);
    assert.equal((await admin.post(`/templates/${ids.frr}/delete`, {}, { csrf: true })).res.status, 303);
    assert.equal(t.services.db.prepare('SELECT count(*) FROM templates WHERE id = ?').pluck().get(ids.frr), 1);
  });

  test('create a custom template; field errors come from the API validation', async () => {
    const n = templateCount();
    const nested = await admin.post('/templates', customForm('lab-frr', { strip_patterns: '^ok$\n^(?!x)y$' }), { csrf: true });
    assert.equal(nested.res.status, 422);
    assert.match(nested.html, /id="strip_patterns-error"/);
    const noCommands = await admin.post('/templates', customForm('lab-frr', { commands: '\n' }), { csrf: true });
    assert.equal(noCommands.res.status, 422);
    assert.match(noCommands.html, /id="commands-error"/);
    const badRedact = await admin.post('/templates', customForm('lab-frr', { redact_patterns: 'no arrow here' }), { csrf: true });
    assert.equal(badRedact.res.status, 422);
    assert.match(badRedact.html, /id="redact_patterns-error"/);
    const reserved = await admin.post('/templates', customForm('frr'), { csrf: true });
    assert.equal(reserved.res.status, 422);
    assert.match(reserved.html, /id="name-error"/);
    assert.equal(templateCount(), n);

    const ok = await admin.post('/templates', customForm('lab-frr'), { csrf: true });
    assert.equal(ok.res.status, 303);
    ids.custom = Number(/\/templates\/(\d+)$/.exec(ok.res.headers.get('location') ?? '')?.[1]);
    const row = JSON.parse(t.services.db.prepare('SELECT spec FROM templates WHERE id = ?').pluck().get(ids.custom) as string);
    assert.deepEqual(row.pre_commands, ['terminal length 0']);
    assert.deepEqual(row.redact_patterns, [{ pattern: '^(\\s*ip ospf message-digest-key \\d+ md5) \\S+', replacement: '$1 <redacted>' }]);
    const page = await admin.get(`/templates/${ids.custom}`);
    assert.match(page.html, /Save template/);
    assert.match(page.html, /Try on device/);
    assert.match(page.html, /data-busy="Connecting to the device/, 'the long operation announces its progress');
  });

  test('edit and delete a custom template, audit-logged', async () => {
    const edit = await admin.post(`/templates/${ids.custom}/edit`, customForm('lab-frr', { ignore_patterns: '^! Last change' }), { csrf: true });
    assert.equal(edit.res.status, 303);
    const spec = JSON.parse(t.services.db.prepare('SELECT spec FROM templates WHERE id = ?').pluck().get(ids.custom) as string);
    assert.deepEqual(spec.ignore_patterns, ['^! Last change']);
    const bad = await admin.post(`/templates/${ids.custom}/edit`, customForm('lab-frr', { prompt: '(' }), { csrf: true });
    assert.equal(bad.res.status, 422);
    assert.match(bad.html, /id="prompt-error"/);

    const tmp = await admin.post('/templates', customForm('tmp-frr'), { csrf: true });
    const tmpId = Number(/(\d+)$/.exec(tmp.res.headers.get('location') ?? '')?.[1]);
    assert.equal((await admin.post(`/templates/${tmpId}/delete`, {}, { csrf: true })).res.status, 303);
    assert.equal(t.services.db.prepare('SELECT count(*) FROM templates WHERE id = ?').pluck().get(tmpId), 0);
    const actions = t.services.db.prepare("SELECT action FROM audit_log WHERE action LIKE 'template.%'").pluck().all();
    for (const a of ['template.create', 'template.update', 'template.delete']) assert.ok(actions.includes(a), a);
  });

  test('Try on device: raw and cleaned output side by side, the edited (unsaved) template, nothing stored', async () => {
    const before = { backups: backups(), spec: t.services.db.prepare('SELECT spec FROM templates WHERE id = ?').pluck().get(ids.custom) };
    // Unsaved edits: another strip pattern and redaction switched on.
    const r = await admin.post(
      `/templates/${ids.custom}/try`,
      { ...customForm('lab-frr', { strip_patterns: '^frr version ', redact: 'on' }), device_id: String(ids.a) },
      { csrf: true },
    );
    assert.equal(r.res.status, 200);
    const raw = /id="trial-raw">([\s\S]*?)<\/pre>/.exec(r.html)?.[1] ?? '';
    const text = /id="trial-text">([\s\S]*?)<\/pre>/.exec(r.html)?.[1] ?? '';
    assert.match(raw, /hostname r1-lab/);
    assert.match(raw, /frr version/);
    assert.doesNotMatch(text, /frr version/, 'the edited strip pattern was used');
    assert.match(text, /hostname r1-lab/);
    assert.match(text, /md5 &lt;redacted&gt;/, 'the edited redaction switch and rule were used');
    assert.doesNotMatch(text, /Lab0spfMd5Key/);
    assert.equal(backups(), before.backups, 'no backup row');
    assert.equal(t.services.db.prepare('SELECT spec FROM templates WHERE id = ?').pluck().get(ids.custom), before.spec, 'the template is not saved');
    assert.equal(t.services.db.prepare('SELECT host_key FROM devices WHERE id = ?').pluck().get(ids.a), null, 'no host key learnt');
    const row = t.services.db.prepare("SELECT target, details FROM audit_log WHERE action = 'template.try'").get() as { target: string; details: string };
    assert.equal(row.target, `template ${ids.custom}`);
    assert.equal(JSON.parse(row.details).ok, true);
    assert.doesNotMatch(row.details, /hostname|r1-lab|Lab0spfMd5Key/, 'the output is never logged');

    const builtin = await admin.post(`/templates/${ids.frr}/try`, { device_id: String(ids.b) }, { csrf: true });
    assert.equal(builtin.res.status, 200);
    assert.match(builtin.html, /id="trial-text">[\s\S]*hostname r1-lab/);
    assert.equal(backups(), before.backups);
  });

  test('Try on device: invalid edits show field errors and connect to nothing', async () => {
    const r = await admin.post(
      `/templates/${ids.custom}/try`,
      { ...customForm('lab-frr', { strip_patterns: '.*' }), device_id: String(ids.a) },
      { csrf: true },
    );
    assert.equal(r.res.status, 422);
    assert.match(r.html, /id="strip_patterns-error"/);
    assert.doesNotMatch(r.html, /id="trial"/);
    const none = await admin.post(`/templates/${ids.custom}/try`, customForm('lab-frr'), { csrf: true });
    assert.equal(none.res.status, 422);
    assert.match(none.html, /id="device_id-error"/);
  });

  test('scope: a scoped user is offered only in-scope devices and cannot try another group’s', async () => {
    const page = await scoped.get(`/templates/${ids.custom}`);
    assert.match(page.html, /alpha-r1/);
    assert.doesNotMatch(page.html, /bravo-r1/);
    const n = t.services.db.prepare("SELECT count(*) FROM audit_log WHERE action = 'template.try'").pluck().get();
    const out = await scoped.post(`/templates/${ids.custom}/try`, { ...customForm('lab-frr'), device_id: String(ids.b) }, { csrf: true });
    assert.equal(out.res.status, 403);
    assert.doesNotMatch(out.html, /hostname r1-lab/);
    assert.equal(t.services.db.prepare("SELECT count(*) FROM audit_log WHERE action = 'template.try'").pluck().get(), n);
    const own = await scoped.post(`/templates/${ids.custom}/try`, { ...customForm('lab-frr'), device_id: String(ids.a) }, { csrf: true });
    assert.equal(own.res.status, 200);
    assert.match(own.html, /id="trial-raw"/);
  });

  test('permissions: no backups.run means no Try; templates.view alone cannot create; no nav entry without templates.view', async () => {
    const page = await noRun.get(`/templates/${ids.custom}`);
    assert.equal(page.res.status, 200);
    assert.doesNotMatch(page.html, /Try on device/);
    assert.equal((await noRun.post(`/templates/${ids.custom}/try`, { ...customForm('lab-frr'), device_id: String(ids.a) }, { csrf: true })).res.status, 403);
    assert.equal((await noRun.get('/templates/new')).res.status, 403);
    assert.equal((await noRun.post('/templates', customForm('sneaky'), { csrf: true })).res.status, 403);
    assert.equal((await noRun.post(`/templates/${ids.custom}/delete`, {}, { csrf: true })).res.status, 403);

    createRole(t.services.db, SYSTEM_ACTOR, { name: 'devices-only', permissions: ['devices.view'] });
    await createUser(t.services.db, SYSTEM_ACTOR, { username: 'devonly', password: 'devonly-password-1', role: 'devices-only' });
    const d = new WebClient(t.url);
    await d.login('devonly', 'devonly-password-1');
    assert.doesNotMatch((await d.get('/devices')).html, /href="\/templates"/);
    for (const p of ['/templates', `/templates/${ids.frr}`]) assert.equal((await d.get(p)).res.status, 403, p);
  });

  test('every template form refuses a POST without the CSRF token', async () => {
    const n = {
      templates: templateCount(),
      backups: backups(),
      tries: t.services.db.prepare("SELECT count(*) FROM audit_log WHERE action = 'template.try'").pluck().get(),
    };
    const posts: [string, Record<string, string>][] = [
      ['/templates', customForm('csrf-frr')],
      [`/templates/${ids.custom}/edit`, customForm('renamed')],
      [`/templates/${ids.custom}/delete`, {}],
      [`/templates/${ids.custom}/try`, { ...customForm('lab-frr'), device_id: String(ids.a) }],
      ['/templates/new/try', { ...customForm('lab-frr'), device_id: String(ids.a) }],
    ];
    for (const [p, f] of posts) assert.equal((await admin.post(p, f)).res.status, 403, p);
    assert.equal(templateCount(), n.templates);
    assert.equal(t.services.db.prepare('SELECT name FROM templates WHERE id = ?').pluck().get(ids.custom), 'lab-frr');
    assert.equal(backups(), n.backups);
    assert.equal(t.services.db.prepare("SELECT count(*) FROM audit_log WHERE action = 'template.try'").pluck().get(), n.tries);
  });
  test('Export YAML on every template page: a file template validate accepts; Clone on a built-in makes an editable <name>-custom copy', async () => {
    const page = await admin.get(`/templates/${ids.frr}`);
    assert.match(page.html, new RegExp(`href="/templates/${ids.frr}/export.yaml"`));
    assert.match(page.html, new RegExp(`action="/templates/${ids.frr}/clone"`));
    const exp = await admin.get(`/templates/${ids.frr}/export.yaml`);
    assert.equal(exp.res.status, 200);
    assert.match(exp.res.headers.get('content-disposition') ?? '', /attachment; filename="frr\.yaml"/);
    const checked = checkTemplateText(exp.html, 'frr.yaml');
    assert.deepEqual(checked.errors, []);
    assert.equal(checked.spec?.name, 'frr');

    const n = templateCount();
    const clone = await admin.post(`/templates/${ids.frr}/clone`, {}, { csrf: true });
    assert.equal(clone.res.status, 303);
    const cloneId = Number(/\/templates\/(\d+)$/.exec(clone.res.headers.get('location') ?? '')?.[1]);
    assert.equal(templateCount(), n + 1);
    const copy = await admin.get(`/templates/${cloneId}`);
    assert.match(copy.html, /value="frr-custom"/);
    assert.match(copy.html, /Save template/);
    assert.match(copy.html, /Delete template/);
    const audit = t.services.db.prepare("SELECT details FROM audit_log WHERE action = 'template.create' AND target = ?").pluck().get(`template ${cloneId}`);
    assert.match(String(audit), /frr-custom/);

    // Cloning needs templates.create: the editor sees no button and is refused.
    assert.doesNotMatch((await noRun.get(`/templates/${ids.frr}`)).html, /\/clone"/);
    assert.equal((await noRun.post(`/templates/${ids.frr}/clone`, {}, { csrf: true })).res.status, 403);
    assert.equal(templateCount(), n + 1);
  });

  test('a file template: badge and path, read-only, no Delete; a file that failed is listed with its field errors', async () => {
    const folder = templateFolder(t.services.dataDir);
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, 'lab-file.yaml'), 'name: lab-file\nvendor: Lab\ncommands:\n  - show running-config\n');
    writeFileSync(path.join(folder, 'broken.yaml'), 'name: lab-broken\nvendor: Lab\ncommands: []\n');
    const r = reloadTemplateFiles(t.services.db, SYSTEM_ACTOR, folder);
    assert.deepEqual(r.created, ['lab-file']);
    const id = t.services.db.prepare("SELECT id FROM templates WHERE name = 'lab-file'").pluck().get() as number;

    const page = await admin.get(`/templates/${id}`);
    assert.match(page.html, /class="badge muted"[^>]*>file</);
    assert.match(page.html, /id="file-managed"/);
    assert.ok(page.html.includes(path.join(folder, 'lab-file.yaml')));
    assert.doesNotMatch(page.html, /Save template|Delete template/);
    const save = await admin.post(`/templates/${id}/edit`, customForm('lab-file'), { csrf: true });
    assert.equal(save.res.status, 422);
    assert.match(save.html, /managed by file/);

    const list = await admin.get('/templates');
    assert.match(list.html, /id="template-file-problems"/);
    assert.ok(list.html.includes(path.join(folder, 'broken.yaml')));
    assert.match(list.html, /<code>commands<\/code>: must hold at least 1 command/);
  });

  test('the JSON Schema of a template file is served without login, for editors', async () => {
    const res = await fetch(`${t.url}/schema/template.schema.json`, { redirect: 'manual' });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/schema\+json/);
    const schema = (await res.json()) as { $schema: string; properties: Record<string, unknown> };
    assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
    assert.ok('command_output' in schema.properties);
  });
});
