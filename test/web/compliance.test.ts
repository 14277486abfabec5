// The compliance pages: the fleet view and its export and report in the user's scope, a device's failing lines and remediation, rules made and changed as YAML (file rules read-only), waivers, the permission gates.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { SESSION_COOKIE, createSession } from '../../src/web/session/sessions.service';
import type { Permission } from '../../src/identity/permissions';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { recordBackup, seedInventory, type Inventory } from '../api/backups.seed';
import { WebClient } from './web-client';

let t: TestAppliance;
let inv: Inventory;
let admin: WebClient;
let scopedB: WebClient;
let noCompliance: WebClient;

const BAD = 'hostname sw\nline vty 0 4\n transport input ssh telnet\nend\n';
const GOOD = 'hostname sw\nline vty 0 4\n transport input ssh\nend\n';
const RULE_YAML = `id: vty-ssh-only
title: VTY lines accept SSH only
severity: critical
remediation: |
  line vty 0 4
   transport input ssh
check: {kind: sections, match: '^line vty', must_contain: ['^transport input ssh$'], must_not_contain: [telnet]}
`;

/** A logged-in client for a new user with these permissions and scope (a session as the login form makes it). */
async function userWith(name: string, permissions: Permission[] | 'all', groups: number[] | null = null): Promise<WebClient> {
  const { db } = t.services;
  let role = 'administrator';
  if (permissions !== 'all') createRole(db, SYSTEM_ACTOR, { name: (role = `role-${name}`), permissions });
  const user = await createUser(db, SYSTEM_ACTOR, { username: name, password: 'web-password-123', role, groups });
  const web = new WebClient(t.url);
  web.cookies.set(SESSION_COOKIE, createSession(db, user.id, { address: '127.0.0.1', userAgent: 'compliance-test' }));
  return web;
}

before(async () => {
  t = await startTestAppliance();
  inv = seedInventory(t.services.db);
  recordBackup(t.services, inv.devices.dA, { text: BAD });
  recordBackup(t.services, inv.devices.dB, { text: BAD });
  recordBackup(t.services, inv.devices.dA1, { text: GOOD });
  mkdirSync(path.join(t.services.dataDir, 'compliance'), { recursive: true });
  writeFileSync(
    path.join(t.services.dataDir, 'compliance', 'base.yaml'),
    '- id: file-host\n  title: A hostname\n  severity: low\n  check: {kind: must_exist, line: "^hostname "}\n',
  );
  [admin, scopedB, noCompliance] = await Promise.all([
    userWith('web-admin', 'all'),
    userWith('web-scoped', ['compliance.view', 'compliance.manage', 'backups.view', 'devices.view'], [inv.groups.B]),
    userWith('web-plain', ['devices.view', 'backups.view']),
  ]);
});
after(() => t.close());

describe('compliance web', () => {
  test('a database rule made from YAML; a broken one is shown with its field; the fleet view then shows it', async () => {
    const bad = await admin.post('/compliance/rules', { definition: RULE_YAML.replace('critical', 'urgent') }, { csrf: true });
    assert.equal(bad.res.status, 422);
    assert.match(bad.html, /<code>severity<\/code>/);
    const made = await admin.post('/compliance/rules', { definition: RULE_YAML }, { csrf: true });
    assert.equal(made.res.status, 303, made.html);
    assert.equal(made.res.headers.get('location'), '/compliance/rules/vty-ssh-only');
    const page = await admin.get('/compliance/rules/vty-ssh-only');
    assert.match(page.html, /Applies to 3 devices in your scope; 2 not passing/);
    assert.match(page.html, /href="\/compliance\/rules\/vty-ssh-only\/edit"/);
    const fleet = await admin.get('/compliance');
    assert.equal(fleet.res.status, 200);
    assert.match(fleet.html, /<dt>Not compliant<\/dt>\s*<dd>2<\/dd>/);
    assert.match(fleet.html, /id="compliance-trend"/);
    // Today's row of the trend: 3 devices judged, 2 not compliant, 2 failures (the rows run oldest first).
    const today = [...fleet.html.matchAll(/<tr><td>(\d{4}-\d\d-\d\d)<\/td><td>(\d+)<\/td><td>(\d+)<\/td><td>(\d+)<\/td><\/tr>/g)].at(-1);
    assert.deepEqual(today?.slice(2), ['3', '2', '2'], 'the last day of the trend');
  });

  test('a file rule is read-only here: no edit button, and a forged edit is refused with the file named', async () => {
    const page = await admin.get('/compliance/rules/file-host');
    assert.equal(page.res.status, 200);
    assert.doesNotMatch(page.html, /\/edit"/);
    const edit = await admin.post(
      '/compliance/rules/file-host/edit',
      { definition: 'title: x\nseverity: low\ncheck: {kind: must_exist, line: x}\n' },
      { csrf: true },
    );
    assert.equal(edit.res.status, 409);
    assert.match(edit.html, /rule file base\.yaml: change it there/);
  });

  test('a device’s page: the failing lines marked in the configuration, the remediation in a copyable block', async () => {
    const { res, html } = await admin.get(`/devices/${inv.devices.dA}/compliance`);
    assert.equal(res.status, 200);
    assert.match(html, /<span class="line fail" id="L2">/);
    assert.match(html, /<span class="line fail" id="L3">/);
    assert.match(html, /<span class="line" id="L1">/);
    assert.match(html, /data-copy-text="#remediation-vty-ssh-only"/);
    assert.match(html, /<pre class="config remediation" id="remediation-vty-ssh-only">line vty 0 4\n transport input ssh/);
  });

  test('scope: a scoped user’s fleet, export and report hold only their devices; another group’s device is refused', async () => {
    const fleet = await scopedB.get('/compliance');
    assert.match(fleet.html, /dB-/);
    assert.doesNotMatch(fleet.html, /dA-/);
    const csv = await scopedB.get('/compliance/report.csv');
    assert.match(csv.res.headers.get('content-type') ?? '', /^text\/csv/);
    const rows = csv.html.trim().split('\n');
    assert.equal(rows[0].split(',')[0], 'device');
    assert.ok(
      rows.slice(1).every((r) => r.startsWith('dB-')),
      csv.html,
    );
    assert.ok(
      rows.some((r) => /vty-ssh-only,critical,fail/.test(r)),
      csv.html,
    );
    const report = await scopedB.get('/compliance/report');
    assert.match(report.html, /id="compliance-report"/);
    assert.doesNotMatch(report.html, /dA-/);
    assert.equal((await scopedB.get(`/devices/${inv.devices.dA}/compliance`)).res.status, 403);
  });

  test('without compliance.view: no menu entry, and the pages are refused', async () => {
    const home = await noCompliance.get('/devices');
    assert.doesNotMatch(home.html, /href="\/compliance"/);
    assert.match((await scopedB.get('/devices')).html, /href="\/compliance"/);
    for (const p of ['/compliance', '/compliance/rules', `/devices/${inv.devices.dA}/compliance`, '/compliance/report.csv']) {
      const r = await noCompliance.get(p);
      assert.equal(r.res.status, 403, p);
      assert.match(r.html, /needs the permission compliance\.view/);
    }
  });

  test('a waiver added from the device page shows the failure as waived, and removing it brings it back', async () => {
    const url = `/devices/${inv.devices.dB}/compliance`;
    const add = await scopedB.post(
      `${url}/waivers`,
      { rule_id: 'vty-ssh-only', reason: 'migration in June', owner: 'netops', expires_at: '2099-06-30T23:59' },
      { csrf: true },
    );
    assert.equal(add.res.status, 303);
    const page = await scopedB.get(url);
    assert.match(page.html, /Waived until 2099-06-30 23:59:00 \S+ by netops: migration in June/);
    const id = /waivers\/(\d+)\/delete/.exec(page.html)?.[1];
    assert.ok(id);
    assert.equal((await scopedB.post(`${url}/waivers/${id}/delete`, {}, { csrf: true })).res.status, 303);
    assert.match((await scopedB.get(url)).html, /1 failing, 0 waived/);
  });

  test('edit and delete a database rule from its pages', async () => {
    const edit = await admin.post('/compliance/rules/vty-ssh-only/edit', { definition: RULE_YAML.replace('critical', 'high') }, { csrf: true });
    assert.equal(edit.res.status, 303, edit.html);
    assert.match((await admin.get('/compliance/rules/vty-ssh-only')).html, /severity-high/);
    const del = await admin.post('/compliance/rules/vty-ssh-only/delete', {}, { csrf: true });
    assert.equal(del.res.status, 303);
    assert.equal((await admin.get('/compliance/rules/vty-ssh-only')).res.status, 404);
  });
});
