// Device list (sorting, platform column and filter, failed filter, numbered pages) and search (group/platform filters, paging, <mark>, line links, CSV/text export).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { finishBackupSync, startBackup } from '../../src/features/backups/backup-record.service';
import { importBackup } from '../../src/features/backups/import.service';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { pagerPages } from '../../src/web/components/layout';
import { csvField } from '../../src/web/search-export';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { WebClient } from './web-client';

/** The device names of a list page, in order. */
const names = (html: string) => [...html.matchAll(/<a href="\/devices\/\d+">([^<]+)<\/a>/g)].map((m) => m[1]);

describe('device list and search', () => {
  let t: TestAppliance;
  let admin: WebClient;
  let scoped: WebClient;
  const ids = { frr: 0, ios: 0, core: 0, lab: 0, failedDev: 0, iosDev: 0 };
  before(async () => {
    t = await startTestAppliance();
    const { db, secrets, snapshots } = t.services;
    ids.core = seedGroup(db, 'core');
    ids.lab = seedGroup(db, 'lab');
    const cred = seedCredential(db, secrets, { name: 'c', username: 'u', password: 'p' });
    ids.frr = seedBuiltinTemplate(db, 'frr');
    ids.ios = seedBuiltinTemplate(db, 'cisco-ios');
    const now = Date.now();
    // 60 core devices on frr (two pages of 50 on the list; three pages of 25 hits in search), 3 lab devices on IOS.
    for (let i = 0; i < 60; i++) {
      const name = `core-${String(i).padStart(2, '0')}`;
      const id = seedDevice(db, { name, hostname: `10.0.${i}.1`, port: 22, credential_id: cred, template_id: ids.frr, group_id: ids.core });
      importBackup(db, SYSTEM_ACTOR, snapshots, id, `hostname ${name}\nntp server 192.0.2.1\nntp server 192.0.2.2\n`, now - (100 - i) * 60_000);
    }
    for (let i = 0; i < 3; i++) {
      const id = seedDevice(db, { name: `lab-${i}`, hostname: `lab${i}.example.net`, port: 22, credential_id: cred, template_id: ids.ios, group_id: ids.lab });
      importBackup(db, SYSTEM_ACTOR, snapshots, id, `hostname lab-${i}\nntp server 198.51.100.7\n=cmd|' /C calc'!A0\n`, now - 30 * 60_000);
      ids.iosDev = id;
    }
    ids.failedDev = seedDevice(db, { name: 'zz-failed', port: 22, credential_id: cred, template_id: ids.ios, group_id: ids.lab });
    const s = startBackup(db, ids.failedDev, ids.ios, 'schedule', now - 1000);
    finishBackupSync(db, snapshots, s, { ok: false, failure: 'TIMEOUT', message: 'no answer' });
    createRole(db, SYSTEM_ACTOR, { name: 'lab-viewer', permissions: ['devices.view', 'backups.view'] });
    await createUser(db, SYSTEM_ACTOR, { username: 'labby', password: 'labby-password-1', role: 'lab-viewer', groups: [ids.lab] });
    admin = new WebClient(t.url);
    assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
    scoped = new WebClient(t.url);
    assert.equal((await scoped.login('labby', 'labby-password-1')).status, 303);
  });
  after(() => t.close());

  test('pager pages: first, last and around the current one, gaps marked', () => {
    assert.deepEqual(pagerPages(1, 1), [1]);
    assert.deepEqual(pagerPages(1, 10), [1, 2, 3, null, 9, 10]);
    assert.deepEqual(pagerPages(6, 10), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'a gap of one page shows the page');
    assert.deepEqual(pagerPages(7, 20), [1, 2, null, 5, 6, 7, 8, 9, null, 19, 20]);
    assert.deepEqual(pagerPages(50, 100_000), [1, 2, null, 48, 49, 50, 51, 52, null, 99_999, 100_000]);
  });

  test('the list sorts by each column, both ways, on the server, with a platform column', async () => {
    const byName = await admin.get('/devices');
    assert.deepEqual(names(byName.html).slice(0, 2), ['core-00', 'core-01']);
    assert.match(byName.html, /<th aria-sort="ascending"><a class="sort" href="\/devices\?dir=desc">Name ▲<\/a><\/th>/);
    assert.match(byName.html, /<td>frr<\/td>/);
    const desc = await admin.get('/devices?dir=desc');
    assert.deepEqual(names(desc.html).slice(0, 2), ['zz-failed', 'lab-2']);
    const platform = await admin.get('/devices?sort=platform');
    assert.deepEqual(names(platform.html).slice(0, 4), ['lab-0', 'lab-1', 'lab-2', 'zz-failed'], 'cisco-ios before frr');
    assert.match(platform.html, /<td>cisco-ios<\/td>/);
    const address = await admin.get('/devices?sort=address&dir=desc');
    assert.deepEqual(names(address.html).slice(0, 2), ['lab-2', 'lab-1']);
    const last = await admin.get('/devices?sort=last_backup&dir=desc');
    assert.deepEqual(names(last.html).slice(0, 2), ['zz-failed', 'lab-2'], 'ties go by name, the same way');
    const group = await admin.get('/devices?sort=group&dir=desc');
    assert.equal(names(group.html)[0], 'zz-failed');
    // The second page continues the same order, and its links keep it.
    const page2 = await admin.get('/devices?sort=platform&page=2');
    assert.deepEqual(names(page2.html).slice(0, 1), ['core-46']);
    assert.match(page2.html, /href="\/devices\?sort=platform&amp;page=1"/);
  });

  test('platform and failed filters; the API list keeps its order and ignores the web-only options', async () => {
    const ios = await admin.get(`/devices?template_id=${ids.ios}`);
    assert.deepEqual(names(ios.html), ['lab-0', 'lab-1', 'lab-2', 'zz-failed']);
    const failed = await admin.get('/devices?failed=1');
    assert.deepEqual(names(failed.html), ['zz-failed']);
    const key = await t.keyFor({ permissions: ['devices.view'] });
    const api = (await (await t.api('/api/v1/devices?limit=3', { key })).json()) as { items: { name: string }[] };
    assert.deepEqual(
      api.items.map((d) => d.name),
      ['core-00', 'core-01', 'core-02'],
    );
  });

  test('numbered pages with the current one marked', async () => {
    const { html } = await admin.get('/devices?page=2');
    assert.match(html, /<a href="\/devices\?page=2" aria-current="page" class="current"><span class="visually-hidden">Page <\/span>2<\/a>/);
    assert.match(html, /<a href="\/devices\?page=1"><span class="visually-hidden">Page <\/span>1<\/a>/);
    assert.match(html, /rel="prev"/);
    assert.doesNotMatch(html, /rel="next"/);
  });

  test('search marks the match itself, links each line to the configuration view, and pages over devices with hits', async () => {
    const p1 = await admin.get('/search?q=ntp+server+192.0.2');
    assert.equal(p1.res.status, 200);
    assert.match(p1.html, /60 device\(s\) with matches/);
    assert.match(
      p1.html,
      /<span class="ln match"><a class="ln-link" href="\/devices\/\d+\/backups\/[0-9a-f-]+#L2" aria-label="line 2"> {4}2<\/a> {2}<mark>ntp server 192.0.2<\/mark>.1<\/span>/,
    );
    assert.equal([...p1.html.matchAll(/<article class="hit card">/g)].length, 25);
    const p3 = await admin.get('/search?q=ntp+server+192.0.2&page=3');
    assert.equal([...p3.html.matchAll(/<article class="hit card">/g)].length, 10);
    assert.match(p3.html, /core-59/);
    assert.match(p3.html, /aria-current="page" class="current"><span class="visually-hidden">Page <\/span>3/);
    const regex = await admin.get(`/search?mode=regex&q=${encodeURIComponent('server 19[28]\\.')}`);
    assert.match(regex.html, /ntp <mark>server 192.<\/mark>0.2.1/);
  });

  test('search filters by group and by platform, within the scope', async () => {
    const lab = await admin.get(`/search?q=ntp+server&group_id=${ids.lab}`);
    assert.match(lab.html, /3 device\(s\) with matches among 3 searched/);
    const frr = await admin.get(`/search?q=ntp+server&template_id=${ids.frr}`);
    assert.match(frr.html, /60 device\(s\) with matches among 60 searched/);
    const outside = await scoped.get(`/search?q=ntp+server&group_id=${ids.core}`);
    assert.match(outside.html, /0 device\(s\) with matches among 0 searched/);
  });

  test('the hits export as CSV and plain text with the same filters and scope', async () => {
    const csv = await admin.fetch(`/search/export?format=csv&q=ntp+server&template_id=${ids.ios}`);
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
    assert.match(csv.headers.get('content-disposition') ?? '', /attachment; filename="search.csv"/);
    const rows = (await csv.text()).trimEnd().split('\r\n');
    assert.equal(rows[0], 'device,device_id,version,backup_id,line,text');
    assert.equal(rows.length, 4);
    assert.match(rows[1], /^lab-0,\d+,\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC,[0-9a-f-]+,2,ntp server 198.51.100.7$/);
    const txt = await scoped.fetch('/search/export?format=txt&q=ntp+server');
    const text = await txt.text();
    assert.match(txt.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(text, /^# lab-0: version of .* UTC\nlab-0:2: ntp server 198.51.100.7\n/);
    assert.doesNotMatch(text, /core-/, 'scope applies');
    const bad = await admin.fetch(`/search/export?format=csv&mode=regex&q=${encodeURIComponent('(a)\\1')}`);
    assert.equal(bad.status, 422);
  });

  test('a CSV cell a spreadsheet would run as a formula is neutralised', () => {
    assert.equal(csvField("=cmd|' /C calc'!A0"), "'=cmd|' /C calc'!A0");
    assert.equal(csvField('a,"b"'), '"a,""b"""');
    assert.equal(csvField(' description x'), ' description x');
  });
});
