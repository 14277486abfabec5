// Smaller rough edges of the web interface over real HTTP (issue #25 item 8): job badges and Cancel, the 404 page, /notifications,
// the first-login notice, the port and regex messages, the schedule placeholder.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { createUser } from '../../src/features/users/users.service';
import { createChannel, destinationPolicy } from '../../src/features/notifications/notifications.service';
import type { JobView } from '../../src/features/backups/jobs.service';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { WebClient } from './web-client';
import { postPairs } from './form-post';

let t: TestAppliance;
let w: WebClient;
let silent: net.Server;
const held: net.Socket[] = [];
const d: Record<string, number> = {};
const g: Record<string, number> = {};

/** A port nothing listens on: connections are refused at once. */
async function closedPort(): Promise<number> {
  const s = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

before(async () => {
  t = await startTestAppliance({ CONFVAULT_BACKUP_RETRIES: '0', CONFVAULT_BACKUP_LOGIN_TIMEOUT: '30' });
  // Accepts and says nothing: a backup of it runs until cancelled.
  silent = net.createServer((s) => held.push(s)).listen(0, '127.0.0.1');
  await new Promise((r) => silent.once('listening', r));
  const { db, secrets } = t.services;
  const tpl = seedBuiltinTemplate(db, 'frr');
  const credential_id = seedCredential(db, secrets, { name: 'edges', username: 'u', password: 'pw-edges-123' });
  g.dead = seedGroup(db, 'dead');
  g.slow = seedGroup(db, 'slow');
  const refused = await closedPort();
  d.dead1 = seedDevice(db, { name: 'dead-1', hostname: '127.0.0.1', port: refused, credential_id, template_id: tpl, group_id: g.dead });
  d.dead2 = seedDevice(db, { name: 'dead-2', hostname: '127.0.0.1', port: refused, credential_id, template_id: tpl, group_id: g.dead });
  d.slow = seedDevice(db, {
    name: 'slow-1',
    hostname: '127.0.0.1',
    port: (silent.address() as net.AddressInfo).port,
    credential_id,
    template_id: tpl,
    group_id: g.slow,
  });
  w = new WebClient(t.url);
  assert.equal((await w.login('admin', 'admin-password-1')).status, 303);
});
after(async () => {
  for (const s of held) s.destroy();
  silent?.close();
  await t?.close();
});

async function backUpGroup(group: number): Promise<string> {
  const { res } = await postPairs(w, '/jobs', [
    ['back', '/devices'],
    ['selection', 'group'],
    ['group_id', String(group)],
  ]);
  const id = /^\/jobs\/([0-9a-f-]{36})$/.exec(res.headers.get('location') ?? '')?.[1];
  assert.ok(id, `a job started: ${res.status} ${res.headers.get('location')}`);
  return id;
}

async function waitJob(id: string, done: (j: JobView) => boolean): Promise<JobView> {
  const until = Date.now() + 30_000;
  for (;;) {
    const j = (await (await w.fetch(`/api/jobs/${id}`)).json()) as JobView;
    if (done(j)) return j;
    assert.ok(Date.now() < until, `job ${id} did not get there: ${JSON.stringify(j)}`);
    await sleep(100);
  }
}

describe('the job page', () => {
  test('a job where every backup failed has a red badge saying so, on the job page and the list', async () => {
    const id = await backUpGroup(g.dead);
    const job = await waitJob(id, (j) => j.state !== 'queued' && j.state !== 'running');
    assert.deepEqual([job.state, job.progress.failed], ['finished', 2]);
    const page = await w.get(`/jobs/${id}`);
    assert.match(page.html, /<span class="badge failed" id="job-state">finished: every backup failed<\/span>/);
    const list = await w.get('/jobs');
    assert.match(list.html, /<span class="badge failed job-state">finished: every backup failed<\/span>/);
  });

  test('Cancel is inside the part that refreshes itself, so it goes when the job ends', async () => {
    const id = await backUpGroup(g.slow);
    await waitJob(id, (j) => j.state === 'running');
    const running = await w.get(`/jobs/${id}`);
    const live = running.html.indexOf('id="jobs-live"');
    const cancel = running.html.indexOf(`action="/jobs/${id}/cancel"`);
    assert.ok(live > 0 && cancel > live, 'the Cancel form comes inside #jobs-live');
    assert.equal((await w.post(`/jobs/${id}/cancel`, {}, { csrf: true })).res.status, 303);
    await waitJob(id, (j) => j.state !== 'queued' && j.state !== 'running');
    assert.doesNotMatch((await w.get(`/jobs/${id}`)).html, /\/cancel"/, 'an ended job has no Cancel');
  });
});

describe('pages and messages', () => {
  test('an unknown page is a 404 in the layout: language, title, menu and a link home; API paths keep their JSON 404', async () => {
    const r = await w.get('/no-such-page');
    assert.equal(r.res.status, 404);
    assert.match(r.html, /<html lang="en"/);
    assert.match(r.html, /<title>Not found[^<]*<\/title>/);
    assert.match(r.html, /<nav/);
    assert.match(r.html, /<a href="\/">Back to the start page<\/a>/);
    const api = await t.api('/api/v1/no-such-thing', { key: await t.keyFor({ permissions: 'all' }) });
    assert.equal(api.status, 404);
    assert.equal(((await api.json()) as { error: { code: string } }).error.code, 'ROUTE_NOT_FOUND');
  });

  test('/notifications, as the menu names it, leads to the notifications page', async () => {
    const r = await w.fetch('/notifications');
    assert.equal(r.status, 301);
    assert.equal(r.headers.get('location'), '/settings/notifications');
  });

  test('the first-login notice is information, not an error', async () => {
    await createUser(t.services.db, SYSTEM_ACTOR, { username: 'firsttime', password: 'printed-password-1', role: 'administrator', must_change_password: true });
    const n = new WebClient(t.url);
    await n.login('firsttime', 'printed-password-1');
    const page = await n.get('/account/password');
    assert.match(page.html, /<p class="flash info" role="status">\s*This is your first login/);
  });

  test('a port out of range says the range in words', async () => {
    const r = await w.post('/devices', { name: 'bad-port', hostname: '192.0.2.9', port: '70000', credential_id: '1', template_id: '1' }, { csrf: true });
    assert.equal(r.res.status, 422);
    assert.match(r.html, /Port must be between 1 and 65535/);
    assert.doesNotMatch(r.html, /Too big/);
  });

  test('a bad regex is quoted as written, without the internal (?i)', async () => {
    const r = await w.get(`/search?mode=regex&q=${encodeURIComponent('(neighbor')}`);
    assert.match(r.html, /missing closing \): `\(neighbor`/);
    assert.doesNotMatch(r.html, /\(\?i\)/);
  });

  test('the Add device schedule placeholder is the schedule that applies', async () => {
    const r = await w.get('/devices/new');
    const schedule = t.appliance.config.backup.schedule;
    assert.match(r.html, new RegExp(`<input name="schedule" value="" placeholder="${schedule.replace(/\*/g, '\\*')}"`));
  });

  test('notification rules pick device groups by name; the channel form groups each type’s fields under a legend naming the types', async () => {
    await createChannel(t.services.db, SYSTEM_ACTOR, t.services.secrets, destinationPolicy(t.appliance.config), {
      name: 'hook',
      type: 'webhook',
      url: 'http://192.0.2.1/hook',
    });
    const page = await w.get('/settings/notifications');
    assert.match(page.html, new RegExp(`<label class="check"><input type="checkbox" name="group_${g.dead}"/> dead</label>`));
    assert.doesNotMatch(page.html, /ids, comma-separated/);
    assert.match(page.html, /<fieldset class="channel-fields" data-types="email"><legend>For e-mail<\/legend>[\s\S]*?name="smtp_host"/);
    assert.match(page.html, /<fieldset class="channel-fields" data-types="webhook slack teams syslog"><legend>[^<]*<\/legend>[\s\S]*?name="url"/);
    const r = await postPairs(w, '/settings/notifications/rules', [
      ['name', 'dead-only'],
      ['event_backup_failed', 'on'],
      ['channel_hook', 'on'],
      [`group_${g.dead}`, 'on'],
    ]);
    assert.equal(r.res.status, 303);
    const rules = await w.get('/settings/notifications');
    assert.match(rules.html, /<tr data-rule="dead-only">[\s\S]*?<td>dead \(with subgroups\)<\/td>/);
  });
});
