// The automation API (issue #26) against a simulated device: start a backup, follow the job, read the diff, find the change; scope, bad input, permissions.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadTranscript, startSimulator, type RunningSimulator } from '../sim/simulator';
import { REPO_ROOT, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { apiCall, expectError, type Json } from '../helpers/api';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));
const RUNNING = 'show running-config';
const CHANGE = 'snmp-server location rack-42-automation';

let t: TestAppliance;
let sim: RunningSimulator;
let admin: string;
const ids = { groupA: 0, groupB: 0, a1: 0, b1: 0, stall: 0, template: 0 };
/** The outputs the simulated a1 answers; changed between backups. */
const a1Commands: Record<string, string> = {};

before(async () => {
  t = await startTestAppliance();
  sim = await startSimulator({
    devices: [
      { name: 'a1', transcript: frr, username: 'a1', password: 'pw-auto-12345', commands: a1Commands },
      { name: 'b1', transcript: frr, username: 'b1', password: 'pw-auto-12345' },
      { name: 'stall', transcript: frr, username: 'stall', password: 'pw-auto-12345', failure: 'stall_mid_output' },
    ],
  });
  const { db, secrets } = t.services;
  ids.template = seedBuiltinTemplate(db, 'frr');
  ids.groupA = seedGroup(db, 'auto-site-a');
  ids.groupB = seedGroup(db, 'auto-site-b');
  const device = (name: string, group: number) =>
    seedDevice(db, {
      name: `auto-${name}`,
      port: sim.port,
      credential_id: seedCredential(db, secrets, { name: `auto-c-${name}`, username: name, password: 'pw-auto-12345' }),
      template_id: ids.template,
      group_id: group,
    });
  ids.a1 = device('a1', ids.groupA);
  ids.b1 = device('b1', ids.groupB);
  ids.stall = device('stall', ids.groupB);
  admin = await t.keyFor({ permissions: 'all' });
});
after(async () => {
  await sim?.close();
  await t?.close();
});

const call = (p: string, init: Parameters<typeof apiCall>[2] = {}) => apiCall(t, p, { key: admin, ...init });

/** What an integration does: poll the job until it is no longer open (bounded). */
async function follow(jobId: string, key = admin, ms = 60_000): Promise<Json> {
  const until = Date.now() + ms;
  for (;;) {
    const r = await apiCall(t, `/jobs/${jobId}`, { key });
    assert.equal(r.status, 200, r.text);
    if (r.body.job.status !== 'queued' && r.body.job.status !== 'running') return r.body;
    assert.ok(Date.now() < until, `job ${jobId} still open: ${r.text}`);
    await sleep(100);
  }
}

async function backUp(body: Record<string, unknown>): Promise<Json> {
  const r = await call('/jobs', { method: 'POST', json: body });
  assert.equal(r.status, 202, r.text);
  assert.equal(r.headers.get('location'), `/api/v1/jobs/${r.body.id}`);
  assert.equal(r.body.links.self, `/api/v1/jobs/${r.body.id}`);
  return follow(r.body.id);
}

describe('the integration scenario', () => {
  let first: Json;
  let second: Json;

  test('start a backup of a group through the API and follow the job to the end', async () => {
    first = await backUp({ group_id: ids.groupA });
    assert.equal(first.job.status, 'finished');
    assert.equal(first.job.door, 'api');
    assert.deepEqual([first.job.counts.total, first.job.counts.succeeded, first.job.counts.first], [1, 1, 1]);
    assert.equal(first.items.length, 1);
    assert.equal(first.items[0].device_id, ids.a1);
    assert.equal(first.items[0].outcome, 'first');
    assert.match(first.items[0].backup_id, /^[0-9a-f-]{36}$/);
  });

  test('the device changes; a backup of that device stores a new version', async () => {
    a1Commands[RUNNING] = frr.commands[RUNNING].replace('log syslog informational\n', `log syslog informational\n${CHANGE}\n`);
    second = await backUp({ device_id: ids.a1 });
    assert.equal(second.items[0].status, 'succeeded');
    assert.equal(second.items[0].outcome, 'changed');
  });

  test('the diff of the newest two versions holds the change, as JSON hunks and as unified text', async () => {
    const json = await call(`/diff?device_id=${ids.a1}`);
    assert.equal(json.status, 200, json.text);
    assert.equal(json.body.from.backup_id, first.items[0].backup_id);
    assert.equal(json.body.to.backup_id, second.items[0].backup_id);
    assert.deepEqual([json.body.identical, json.body.added, json.body.removed, json.body.truncated], [false, 1, 0, false]);
    const added = json.body.hunks.flatMap((h: Json) => h.lines.filter((l: Json) => l.kind === 'add').map((l: Json) => l.text));
    assert.deepEqual(added, [CHANGE]);
    // The same by backup ids, as unified text (format=unified, or Accept: text/x-diff).
    const byIds = `/api/v1/diff?from=${first.items[0].backup_id}&to=${second.items[0].backup_id}`;
    for (const [query, accept] of [
      ['&format=unified', '*/*'],
      ['', 'text/x-diff'],
    ]) {
      const res = await t.api(byIds + query, { key: admin, headers: { Accept: accept } });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/x-diff/);
      assert.equal(res.headers.get('x-diff-truncated'), 'false');
      const text = await res.text();
      assert.match(text, /^--- a\/auto-a1\n\+\+\+ b\/auto-a1\n@@ /);
      assert.ok(text.includes(`\n+${CHANGE}\n`), text);
    }
    // Two devices: the newest of a1 against the newest of b1 (b1 has never been backed up: 409).
    expectError(await call(`/diff?device_id=${ids.a1}&other_device_id=${ids.b1}`), 409, 'CONFLICT');
  });

  test('search finds the change, as text and as RE2, within a group filter', async () => {
    const text = await call(`/search?q=${encodeURIComponent('rack-42-automation')}`);
    assert.equal(text.status, 200, text.text);
    assert.equal(text.body.items.length, 1);
    assert.equal(text.body.items[0].device_id, ids.a1);
    assert.equal(text.body.items[0].backup_id, second.items[0].backup_id);
    assert.deepEqual(
      text.body.items[0].lines.map((l: Json) => l.text),
      [CHANGE],
    );
    assert.deepEqual([text.body.pagination.total, text.body.partial, text.body.truncated], [1, false, false]);
    const re = await call(`/search?regex=true&q=${encodeURIComponent('^snmp-server location rack-\\d+-auto')}&group_id=${ids.groupA}`);
    assert.equal(re.body.items.length, 1, re.text);
    const elsewhere = await call(`/search?q=rack-42&group_id=${ids.groupB}`);
    assert.equal(elsewhere.body.items.length, 0);
  });

  test('the audit trail shows the runs and the searches, through the API door', async () => {
    const r = await call('/audit?action=backup.run');
    assert.equal(r.status, 200, r.text);
    assert.ok(r.body.items.length >= 2);
    assert.ok(r.body.items.every((e: Json) => e.door === 'api' && e.action === 'backup.run'));
    const jobs = r.body.items.map((e: Json) => e.details.job);
    assert.ok(jobs.includes(first.job.id) && jobs.includes(second.job.id));
    const searches = await call('/audit?action=search&limit=1');
    assert.equal(searches.body.items[0].door, 'api');
  });

  test('jobs are listed, newest first, paged', async () => {
    const r = await call('/jobs?limit=1');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.items[0].id, second.job.id);
    assert.equal(r.body.pagination.has_next, true);
    const p2 = await call('/jobs?limit=1&page=2');
    assert.equal(p2.body.items[0].id, first.job.id);
  });
});

test('cancel: idempotent while the job is open, 409 once it has ended', async () => {
  const started = await call('/jobs', { method: 'POST', json: { device_id: ids.stall } });
  assert.equal(started.status, 202, started.text);
  const id = started.body.id as string;
  const once = await call(`/jobs/${id}/cancel`, { method: 'POST', json: {} });
  assert.equal(once.status, 200, once.text);
  assert.equal(once.body.cancelled_by, once.body.requested_by);
  const again = await call(`/jobs/${id}/cancel`, { method: 'POST', json: {} });
  assert.equal(again.status, 200, again.text);
  const ended = await follow(id);
  assert.equal(ended.job.status, 'cancelled');
  expectError(await call(`/jobs/${id}/cancel`, { method: 'POST', json: {} }), 409, 'CONFLICT');
  const audit = await call(`/audit?action=backup.cancel&target=${encodeURIComponent(`job ${id}`)}`);
  assert.equal(audit.body.items.length, 1, 'one audit row, however often it was asked');
});

test('scope: a key scoped to group B cannot start, see or diff the devices of group A', async () => {
  const key = await t.keyFor({ permissions: ['devices.view', 'backups.view', 'backups.run', 'audit.view'], groups: [ids.groupB] });
  const asB = (p: string, init: Parameters<typeof apiCall>[2] = {}) => apiCall(t, p, { key, ...init });
  expectError(await asB('/jobs', { method: 'POST', json: { device_id: ids.a1 } }), 403, 'PERMISSION_DENIED');
  expectError(await asB('/jobs', { method: 'POST', json: { group_id: ids.groupA } }), 403, 'PERMISSION_DENIED');
  const theirs = (await call('/jobs?limit=100')).body.items.filter((j: Json) => j.label === 'device auto-a1' || j.label === 'group auto-site-a');
  assert.ok(theirs.length >= 2);
  for (const j of theirs) expectError(await asB(`/jobs/${j.id}`), 403, 'PERMISSION_DENIED');
  expectError(await asB(`/jobs/${theirs[0].id}/cancel`, { method: 'POST', json: {} }), 403, 'PERMISSION_DENIED');
  const listed = (await asB('/jobs?limit=100')).body.items.map((j: Json) => j.id);
  assert.ok(!theirs.some((j: Json) => listed.includes(j.id)), 'no job of group A in the list');
  expectError(await asB(`/diff?device_id=${ids.a1}`), 403, 'BACKUP_DEVICE_FORBIDDEN');
  const hist = (await call(`/devices/${ids.a1}/backups`)).body.items.filter((b: Json) => b.success);
  expectError(await asB(`/diff?from=${hist[1].id}&to=${hist[0].id}`), 403, 'BACKUP_DEVICE_FORBIDDEN');
  assert.equal((await asB('/search?q=rack-42-automation')).body.items.length, 0);
  const audit = (await asB('/audit?action=backup.run&limit=100')).body.items;
  assert.ok(!audit.some((e: Json) => e.target === `device ${ids.a1}`), 'no audit row about a device of group A');
});

test('bad input: the error body names the field', async () => {
  expectError(await call('/jobs', { method: 'POST', json: {} }), 422, 'VALIDATION_ERROR', ['device_id']);
  expectError(await call('/jobs', { method: 'POST', json: { device_id: ids.a1, group_id: ids.groupA } }), 422, 'VALIDATION_ERROR', ['device_id']);
  expectError(await call('/jobs', { method: 'POST', json: { device_ids: [] } }), 422, 'VALIDATION_ERROR', ['device_ids']);
  expectError(await call('/jobs', { method: 'POST', json: { device_id: 999_999 } }), 404, 'RESOURCE_NOT_FOUND');
  expectError(await call('/jobs/not-a-job'), 422, 'VALIDATION_ERROR', ['job_id']);
  expectError(await call('/jobs/00000000-0000-4000-8000-000000000000'), 404, 'RESOURCE_NOT_FOUND');
  expectError(await call('/search?q=' + encodeURIComponent('(unclosed') + '&regex=true'), 422, 'VALIDATION_ERROR', ['q']);
  expectError(await call('/search'), 422, 'VALIDATION_ERROR', ['q']);
  expectError(await call('/diff'), 422, 'VALIDATION_ERROR', ['device_id']);
  expectError(await call('/diff?from=00000000-0000-4000-8000-000000000000'), 422, 'VALIDATION_ERROR', ['to']);
  expectError(await call('/diff?from=00000000-0000-4000-8000-000000000000&to=00000000-0000-4000-8000-000000000001'), 404, 'BACKUP_NOT_FOUND');
  expectError(await call('/diff?device_id=1&format=html'), 422, 'VALIDATION_ERROR', ['format']);
  expectError(await call('/audit?since=yesterday'), 422, 'VALIDATION_ERROR', ['since']);
});

test('permissions: reading keys cannot start or cancel; the trail needs audit.view', async () => {
  const reader = await t.keyFor({ permissions: ['devices.view', 'backups.view'] });
  const r = await apiCall(t, '/jobs', { key: reader, method: 'POST', json: { device_id: ids.a1 } });
  assert.equal(expectError(r, 403, 'PERMISSION_DENIED').details.permission, 'backups.run');
  assert.equal(expectError(await apiCall(t, '/audit', { key: reader }), 403, 'PERMISSION_DENIED').details.permission, 'audit.view');
  assert.equal((await apiCall(t, '/jobs', { key: reader })).status, 200);
  const noDevices = await t.keyFor({ permissions: ['backups.view'] });
  assert.equal(expectError(await apiCall(t, `/diff?device_id=${ids.a1}`, { key: noDevices }), 403, 'PERMISSION_DENIED').details.permission, 'devices.view');
});

test('notification channels and rules: created, read without their secret, refused where the web refuses, deleted', async () => {
  const body = { name: 'auto-hook', type: 'webhook', url: 'https://hooks.example.net/confvault', secret: 'hmac-secret-value-1' };
  const created = await call('/notifications/channels', { method: 'POST', json: body });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual([created.body.has_secret, created.body.settings.url], [true, body.url]);
  for (const r of [created, await call('/notifications/channels/auto-hook'), await call('/notifications/channels')]) {
    assert.ok(!r.text.includes(body.secret), 'the secret never comes back');
  }
  expectError(await call('/notifications/channels', { method: 'POST', json: body }), 409, 'CONFLICT');
  const local = await call('/notifications/channels', { method: 'POST', json: { ...body, name: 'auto-local', url: 'http://127.0.0.1:9/x' } });
  expectError(local, 422, 'VALIDATION_ERROR', ['url']);
  const scoped = await t.keyFor({ permissions: ['settings.view', 'settings.update'], groups: [ids.groupB] });
  const refused = await apiCall(t, '/notifications/channels', { key: scoped, method: 'POST', json: { ...body, name: 'auto-scoped' } });
  expectError(refused, 403, 'PERMISSION_DENIED');
  // A scoped key makes rules for its own groups only.
  const rule = { name: 'auto-rule', events: ['config_changed'], channels: ['auto-hook'], groups: [ids.groupB] };
  expectError(await apiCall(t, '/notifications/rules', { key: scoped, method: 'POST', json: { ...rule, groups: [ids.groupA] } }), 403, 'PERMISSION_DENIED');
  const made = await apiCall(t, '/notifications/rules', { key: scoped, method: 'POST', json: rule });
  assert.equal(made.status, 201, made.text);
  assert.deepEqual((await call('/notifications/rules/auto-rule')).body.channel_ids, [created.body.id]);
  expectError(await call('/notifications/rules/no-such-rule'), 404, 'RESOURCE_NOT_FOUND');
  const change = { events: ['config_changed', 'backup_failed'], channels: ['auto-hook'], groups: [ids.groupB] };
  const changed = await apiCall(t, '/notifications/rules/auto-rule', { key: scoped, method: 'PUT', json: change });
  assert.deepEqual(changed.body.events, change.events, changed.text);
  const outside = await apiCall(t, '/notifications/rules/auto-rule', { key: scoped, method: 'PUT', json: { ...change, groups: [ids.groupA] } });
  expectError(outside, 403, 'PERMISSION_DENIED');
  expectError(await call('/notifications/rules/no-such-rule', { method: 'PUT', json: change }), 404, 'RESOURCE_NOT_FOUND');
  const updates = (await call('/audit?action=notification_rule.update')).body.items;
  assert.deepEqual(updates[0].changes.events, { before: ['config_changed'], after: change.events });
  assert.equal((await apiCall(t, '/notifications/rules/auto-rule', { key: scoped, method: 'DELETE' })).body.status, 'success');
  assert.equal((await call('/notifications/channels/auto-hook', { method: 'DELETE' })).body.status, 'success');
  expectError(await call('/notifications/channels/auto-hook'), 404, 'RESOURCE_NOT_FOUND');
  const audit = (await call('/audit?target=' + encodeURIComponent('notification channel auto-hook'))).body.items.map((e: Json) => e.action);
  assert.deepEqual(audit, ['notification_channel.delete', 'notification_channel.create']);
});
