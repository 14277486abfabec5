// The dashboard on an empty and on a used appliance (getting started, storage saving), group descriptions shown and edited, and the page frame (skip link, one menu per width).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { SCOPE_ALL } from '../../src/identity/principal';
import { createGroup, getGroup } from '../../src/features/groups/groups.service';
import { importBackup } from '../../src/features/backups/import.service';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { createTestDevice, seedBuiltinTemplate, seedCredential } from '../helpers/seed';
import { WebClient } from './web-client';

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

describe('dashboard, groups and the page frame', () => {
  let t: TestAppliance;
  let admin: WebClient;
  before(async () => {
    t = await startTestAppliance();
    admin = new WebClient(t.url);
    assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
  });
  after(() => t.close());

  test('an empty appliance: a getting-started card with the three steps, and no storage saving to claim', async () => {
    const { html } = await admin.get('/');
    const card = /<section class="card getting-started" id="getting-started">([\s\S]*?)<\/section>/.exec(html)?.[1];
    assert.ok(card, 'the getting-started card is there');
    assert.match(card, /<a href="\/credentials\/new">Add a credential<\/a>/);
    assert.match(card, /<a href="\/devices\/new">Add a device<\/a>/);
    assert.match(card, /<a href="\/devices">Back up<\/a>/);
    assert.match(text(html), /— Storage saving \(dedup \+ compression\)/);
    assert.doesNotMatch(html, /Dedup ratio|1×/);
  });

  test('with backups stored: the saving is a ratio under its real name, and the card is gone', async () => {
    const { db, secrets, snapshots } = t.services;
    const cred = seedCredential(db, secrets, { name: 'c', username: 'u', password: 'p' });
    const tpl = seedBuiltinTemplate(db, 'frr');
    const dev = createTestDevice(db, { credential_id: cred, template_id: tpl }, 'r1').id;
    const config = Array.from({ length: 200 }, (_, i) => `interface ge-0/0/${i}\n description port ${i}\n`).join('');
    importBackup(db, SYSTEM_ACTOR, snapshots, dev, config, Date.now() - 7200_000);
    importBackup(db, SYSTEM_ACTOR, snapshots, dev, config + 'ntp server 192.0.2.1\n', Date.now() - 3600_000);
    const { html } = await admin.get('/');
    assert.doesNotMatch(html, /getting-started/);
    const tile = /<div class="tile" id="stat-saving"><span class="value">([^<]+)<\/span><span class="label">([^<]+)<\/span>/.exec(html);
    assert.ok(tile, 'the storage tile is there');
    assert.match(tile[1], /^\d+(\.\d+)?×$/);
    assert.equal(tile[2], 'Storage saving (dedup + compression)');
  });

  test('the charts carry their numbers in a table of 30 days', async () => {
    const { html } = await admin.get('/');
    const tables = [...html.matchAll(/<table class="list chart-data">([\s\S]*?)<\/table>/g)];
    assert.equal(tables.length, 2);
    assert.equal([...tables[0][1].matchAll(/<th scope="row">/g)].length, 30);
    assert.match(tables[0][1], /<th scope="col">succeeded<\/th><th scope="col">failed<\/th>/);
  });

  test('a group’s description is shown in the list and can be edited; a form without the field keeps it', async () => {
    const g = createGroup(t.services.db, SYSTEM_ACTOR, { name: 'Core', parent_id: null, description: 'Core routers, Berlin', schedule: null });
    let page = await admin.get('/groups');
    assert.match(page.html, /<span class="group-description">Core routers, Berlin<\/span>/);
    assert.match(page.html, /<input name="description" maxlength="2000" value="Core routers, Berlin"\/>/);
    const r = await admin.post(
      `/groups/${g.id}/edit`,
      { name: 'Core', parent_id: '', schedule: '', description: 'Core routers, Berlin and Hamburg' },
      { csrf: true },
    );
    assert.equal(r.res.status, 303);
    assert.equal(getGroup(t.services.db, SCOPE_ALL, g.id).description, 'Core routers, Berlin and Hamburg');
    page = await admin.get('/groups');
    assert.match(page.html, /Core routers, Berlin and Hamburg/);
    await admin.post(`/groups/${g.id}/edit`, { name: 'Core', parent_id: '', schedule: '' }, { csrf: true });
    assert.equal(getGroup(t.services.db, SCOPE_ALL, g.id).description, 'Core routers, Berlin and Hamburg');
    const audit = t.services.db.prepare("SELECT changes FROM audit_log WHERE action = 'group.update' ORDER BY id DESC LIMIT 1").pluck().get() as string;
    assert.match(audit, /Berlin and Hamburg/);
    // No link inside the toggle's summary (interactive content inside interactive content).
    assert.doesNotMatch(page.html, /<summary>(?:(?!<\/summary>)[\s\S])*<a /);
  });

  test('every page starts with a skip link to the content, and the menu exists once per width', async () => {
    const { html } = await admin.get('/devices');
    assert.match(html, /<body><a class="skip" href="#main">Skip to content<\/a>/);
    assert.match(html, /<main id="main" tabindex="-1">/);
    assert.match(html, /<nav class="nav wide-only" aria-label="Main">/);
    assert.match(html, /<details class="menu narrow-only"><summary>Menu<\/summary><nav class="nav" aria-label="Main">/);
  });
});
