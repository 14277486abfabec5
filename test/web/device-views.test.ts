// The device page's facts, a failed backup's details, the numbered configuration view, compare with previous, word-level diff, .patch, two devices.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { finishBackupSync, startBackup } from '../../src/features/backups/backup-record.service';
import { importBackup } from '../../src/features/backups/import.service';
import { requestBackupJob } from '../../src/features/backups/jobs.service';
import { updateGroup } from '../../src/features/groups/groups.service';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { rawState, seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { WebClient } from './web-client';

const ZONED = /\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} CET/;

describe('device page, versions and diffs', () => {
  let t: TestAppliance;
  let admin: WebClient;
  let scoped: WebClient;
  const ids = { r1: 0, r2: 0, other: 0, v1: '', v2: '', v3: '', failed: '', r2v: '', otherV: '' };
  before(async () => {
    t = await startTestAppliance({ CONFVAULT_TIMEZONE: 'Europe/Paris' });
    const { db, secrets, snapshots } = t.services;
    const core = seedGroup(db, 'core');
    const edge = seedGroup(db, 'edge', core);
    const lab = seedGroup(db, 'lab');
    updateGroup(db, SYSTEM_ACTOR, core, { schedule: '0 3 * * *' });
    const cred = seedCredential(db, secrets, { name: 'netops-ro', username: 'u', password: 'p' });
    const tpl = seedBuiltinTemplate(db, 'frr');
    ids.r1 = seedDevice(db, { name: 'r1', port: 22, credential_id: cred, template_id: tpl, group_id: edge });
    ids.r2 = seedDevice(db, { name: 'r2', port: 22, credential_id: cred, template_id: tpl, group_id: edge });
    ids.other = seedDevice(db, { name: 'lab-rtr', port: 22, credential_id: cred, template_id: tpl, group_id: lab });
    rawState(
      db,
      'the key a first backup recorded (no device answers here)',
      'UPDATE devices SET host_key = ? WHERE id = ?',
      'SHA256:abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG',
      ids.r1,
    );
    const now = Date.now();
    ids.v1 = importBackup(db, SYSTEM_ACTOR, snapshots, ids.r1, 'hostname r1\ninterface eth0\n description uplink to core\n', now - 5 * 3600_000).id;
    ids.v2 = importBackup(db, SYSTEM_ACTOR, snapshots, ids.r1, 'hostname r1\ninterface eth0\n description downlink to core\n', now - 4 * 3600_000).id;
    ids.v3 = importBackup(db, SYSTEM_ACTOR, snapshots, ids.r1, 'hostname r1\ninterface eth0\n description downlink to core\n', now - 3 * 3600_000).id;
    requestBackupJob(db, SYSTEM_ACTOR, { deviceIds: [ids.r1] }, 'test');
    const started = startBackup(db, ids.r1, tpl, 'manual', Date.now());
    ids.failed = finishBackupSync(db, snapshots, started, { ok: false, failure: 'AUTH_FAILED', message: 'Permission denied (password).' }).id;
    ids.r2v = importBackup(db, SYSTEM_ACTOR, snapshots, ids.r2, 'hostname r2\ninterface eth0\n description uplink to core\n', now - 3600_000).id;
    ids.otherV = importBackup(db, SYSTEM_ACTOR, snapshots, ids.other, 'hostname lab\n', now - 3600_000).id;
    createRole(db, SYSTEM_ACTOR, { name: 'edge-viewer', permissions: ['devices.view', 'backups.view'] });
    await createUser(db, SYSTEM_ACTOR, { username: 'edgy', password: 'edgy-password-1', role: 'edge-viewer', groups: [core] });
    admin = new WebClient(t.url);
    assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
    scoped = new WebClient(t.url);
    assert.equal((await scoped.login('edgy', 'edgy-password-1')).status, 303);
  });
  after(() => t.close());

  test('the device page states platform, credential, effective schedule with its next run, last change and host key, times zoned', async () => {
    const { res, html } = await admin.get(`/devices/${ids.r1}`);
    assert.equal(res.status, 200);
    assert.match(html, /<dt>Platform<\/dt>\s*<dd>frr<\/dd>/);
    assert.match(html, /<dt>Credential<\/dt>\s*<dd>netops-ro<\/dd>/);
    const schedule = /<dd id="schedule">([\s\S]*?)<\/dd>/.exec(html)?.[1] ?? '';
    assert.match(schedule, /<code>0 3 \* \* \*<\/code>/);
    assert.match(schedule, /from group core/);
    assert.match(schedule, /next run \d{4}-\d{2}-\d{2} 03:00:00 CET/);
    const change = /<dd id="last-change">([\s\S]*?)<\/dd>/.exec(html)?.[1] ?? '';
    assert.match(change, new RegExp(`/devices/${ids.r1}/backups/${ids.v2}`), 'v3 did not change; v2 did');
    assert.match(change, ZONED);
    assert.match(html, /SHA256:abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG/);
    // A scoped user without credentials.view sees the credential's number, not its name.
    const s = await scoped.get(`/devices/${ids.r1}`);
    assert.match(s.html, /<dt>Credential<\/dt>\s*<dd>credential \d+<\/dd>/);
  });

  test('a failed backup links to its details: code, message, trigger, who started it', async () => {
    const { html } = await admin.get(`/devices/${ids.r1}`);
    assert.match(html, new RegExp(`href="/devices/${ids.r1}/backups/${ids.failed}" class="failure-details"`));
    const d = await admin.get(`/devices/${ids.r1}/backups/${ids.failed}`);
    assert.equal(d.res.status, 200);
    const failure = /<section class="card" id="failure">([\s\S]*?)<\/section>/.exec(d.html)?.[1] ?? '';
    assert.match(failure, /AUTH_FAILED/);
    assert.match(failure, /Permission denied \(password\)\./);
    assert.match(failure, /<dt>Trigger<\/dt>\s*<dd>manual<\/dd>/);
    assert.match(failure, /<dd id="started-by">system \(system\)<\/dd>/);
    assert.match(failure, ZONED);
  });

  test('every history row with an older version links to "compare with previous"; the diff marks the changed words', async () => {
    const { html } = await admin.get(`/devices/${ids.r1}`);
    assert.match(html, new RegExp(`/devices/${ids.r1}/diff\\?a=${ids.v2}&amp;b=${ids.v3}" class="compare-previous"`));
    assert.match(html, new RegExp(`/devices/${ids.r1}/diff\\?a=${ids.v1}&amp;b=${ids.v2}" class="compare-previous"`));
    assert.doesNotMatch(html, new RegExp(`b=${ids.v1}" class="compare-previous"`), 'the first version has nothing before it');
    const diff = await admin.get(`/devices/${ids.r1}/diff?a=${ids.v1}&b=${ids.v2}`);
    assert.equal(diff.res.status, 200);
    assert.match(diff.html, /description <mark>uplink<\/mark> to core/);
    assert.match(diff.html, /description <mark>downlink<\/mark> to core/);
    assert.match(diff.html, /<span class="visually-hidden">removed: <\/span>/);
    assert.match(diff.html, /<span class="visually-hidden">added: <\/span>/);
    const unified = await admin.get(`/devices/${ids.r1}/diff?a=${ids.v1}&b=${ids.v2}&view=unified`);
    assert.match(unified.html, /<span class="add">\+ description <mark>downlink<\/mark> to core<\/span>/);
  });

  test('a diff downloads as a unified .patch', async () => {
    const r = await admin.fetch(`/devices/${ids.r1}/diff?a=${ids.v1}&b=${ids.v2}&format=patch`);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/x-diff/);
    assert.match(r.headers.get('content-disposition') ?? '', /attachment; filename="r1-\d{8}T\d{6}Z-\d{8}T\d{6}Z\.patch"/);
    const body = await r.text();
    assert.match(
      body,
      /^--- a\/r1 .* CET\n\+\+\+ b\/r1 .* CET\n@@ -1,3 \+1,3 @@\n hostname r1\n interface eth0\n- description uplink to core\n\+ description downlink to core\n$/,
    );
  });

  test('the configuration view numbers and anchors every line; the copy button waits for the script', async () => {
    const { res, html } = await admin.get(`/devices/${ids.r1}/backups/${ids.v2}`);
    assert.equal(res.status, 200);
    assert.match(html, /<span class="line" id="L3"><a class="n" href="#L3" data-n="3" aria-label="line 3"><\/a> description downlink to core<\/span>/);
    assert.match(html, /<button type="button" data-copy-text="#config-text" hidden/);
    assert.match(html, new RegExp(`id="compare-previous"[^>]*>|href="/devices/${ids.r1}/diff\\?a=${ids.v1}&amp;b=${ids.v2}"`));
  });

  test('two devices compare side by side, in scope on both sides, and download as a patch', async () => {
    const r = await admin.get(`/compare?da=${ids.r1}&db=${ids.r2}`);
    assert.equal(r.res.status, 200);
    assert.match(r.html, /From <a href="[^"]+">r1 [^<]+CET<\/a> to\s*<a href="[^"]+">r2 [^<]+CET<\/a>/);
    assert.match(r.html, /hostname <mark>r1<\/mark>|<mark>r1<\/mark>/);
    // A version of the device picked before gives way to the newly picked device's newest.
    const switched = await admin.get(`/compare?da=${ids.r1}&a=${ids.v1}&db=${ids.other}&b=${ids.r2v}`);
    assert.equal(switched.res.status, 200);
    assert.match(switched.html, /hostname <mark>lab<\/mark>/);
    const patch = await admin.fetch(`/compare?da=${ids.r1}&a=${ids.v1}&db=${ids.r2}&b=${ids.r2v}&format=patch`);
    assert.equal(patch.status, 200);
    assert.match(await patch.text(), /^--- a\/r1 .*\n\+\+\+ b\/r2 .*\n@@ -1,3 \+1,3 @@\n-hostname r1\n\+hostname r2\n/);
    // The scoped user cannot bring a device outside their groups into a comparison.
    const denied = await scoped.get(`/compare?da=${ids.r1}&db=${ids.other}`);
    assert.equal(denied.res.status, 403);
    assert.doesNotMatch(denied.html, /hostname lab/);
    const picker = await scoped.get('/compare');
    assert.doesNotMatch(picker.html, /lab-rtr/);
  });
});
