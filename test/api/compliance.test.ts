// The compliance API over real HTTP: rules made, changed and deleted through it (file rules read-only: 409), a device's results with its failing lines, the fleet summary, waivers; scope and permissions.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { apiCall } from '../helpers/api';
import { recordBackup, seedInventory, type Inventory } from './backups.seed';

let t: TestAppliance;
let inv: Inventory;
let admin: string;
let scopedB: string;
let viewer: string;

const GOOD = 'hostname sw\nntp server 10.0.0.1\nline vty 0 4\n transport input ssh\nend\n';
const BAD = 'hostname sw\nntp server 10.0.0.1\nline vty 0 4\n transport input ssh telnet\nend\n';
const VTY = {
  id: 'vty-ssh-only',
  title: 'VTY lines accept SSH only',
  severity: 'critical',
  remediation: 'line vty 0 4\n transport input ssh',
  check: { kind: 'sections', match: '^line vty', must_contain: ['^transport input ssh$'], must_not_contain: ['telnet'] },
};

before(async () => {
  t = await startTestAppliance();
  inv = seedInventory(t.services.db);
  // dA fails, dA1 and dB pass, dNone has no stored version.
  recordBackup(t.services, inv.devices.dA, { text: BAD });
  recordBackup(t.services, inv.devices.dA1, { text: GOOD });
  recordBackup(t.services, inv.devices.dB, { text: GOOD });
  mkdirSync(path.join(t.services.dataDir, 'compliance'), { recursive: true });
  writeFileSync(
    path.join(t.services.dataDir, 'compliance', 'base.yaml'),
    '- id: file-ntp\n  title: An NTP server\n  severity: low\n  check: {kind: must_exist, line: "^ntp server "}\n',
  );
  [admin, scopedB, viewer] = await Promise.all([
    t.keyFor({ permissions: 'all' }),
    t.keyFor({ permissions: ['compliance.view', 'compliance.manage'], groups: [inv.groups.B] }),
    t.keyFor({ permissions: ['compliance.view'] }),
  ]);
});
after(() => t.close());

describe('compliance rules', () => {
  test('create, read, list, replace: a database rule; a duplicate id is 409; an invalid rule is 422 naming the field', async () => {
    const created = await apiCall(t, '/compliance/rules', { method: 'POST', key: admin, json: VTY });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(
      [created.body.id, created.body.origin, created.body.editable, created.body.definition.check.kind],
      ['vty-ssh-only', 'database', true, 'sections'],
    );
    const again = await apiCall(t, '/compliance/rules', { method: 'POST', key: admin, json: VTY });
    assert.equal(again.status, 409);
    assert.equal(again.body.error?.code, 'CONFLICT');
    const bad = await apiCall(t, '/compliance/rules', { method: 'POST', key: admin, json: { ...VTY, id: 'x', severity: 'urgent' } });
    assert.equal(bad.status, 422);
    assert.ok(
      bad.body.error?.details.errors?.some((e) => e.field === 'severity'),
      bad.text,
    );
    const list = await apiCall(t, '/compliance/rules?limit=1', { key: viewer });
    assert.equal(list.status, 200);
    assert.equal(list.body.pagination.total, 2);
    assert.equal(list.body.items.length, 1);
    const file = await apiCall(t, '/compliance/rules/file-ntp', { key: viewer });
    assert.deepEqual([file.body.origin, file.body.location, file.body.editable], ['file', 'base.yaml', false]);
    const { id: _, ...rest } = VTY;
    const put = await apiCall(t, '/compliance/rules/vty-ssh-only', { method: 'PUT', key: admin, json: { ...rest, severity: 'high' } });
    assert.equal(put.status, 200, put.text);
    assert.equal((await apiCall(t, '/compliance/rules/vty-ssh-only', { key: viewer })).body.severity, 'high');
    assert.equal((await apiCall(t, '/compliance/rules/no-such-rule', { key: viewer })).status, 404);
  });

  test('a rule read from a file cannot be replaced or deleted here: 409 naming the file', async () => {
    const { id: _, ...rest } = VTY;
    for (const r of [
      await apiCall(t, '/compliance/rules/file-ntp', { method: 'PUT', key: admin, json: rest }),
      await apiCall(t, '/compliance/rules/file-ntp', { method: 'DELETE', key: admin }),
    ]) {
      assert.equal(r.status, 409, r.text);
      assert.match(r.body.error!.message, /rule file base\.yaml/);
    }
  });

  test('rule changes need compliance.manage and are audited with the key', async () => {
    const refused = await apiCall(t, '/compliance/rules', { method: 'POST', key: viewer, json: { ...VTY, id: 'other' } });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error?.details.permission, 'compliance.manage');
    const rows = t.services.db.prepare("SELECT action FROM audit_log WHERE action LIKE 'compliance.rule_%' ORDER BY id").pluck().all();
    assert.deepEqual(rows, ['compliance.rule_create', 'compliance.rule_update']);
  });
});

describe('results, summary and waivers', () => {
  test('a device’s results: the failing line and the remediation; a device without a version has none', async () => {
    const r = await apiCall(t, `/devices/${inv.devices.dA}/compliance`, { key: viewer });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.compliant, false);
    const vty = r.body.results.find((x: { rule_id: string }) => x.rule_id === 'vty-ssh-only');
    assert.equal(vty.status, 'fail');
    assert.deepEqual(
      vty.failing_lines.map((f: { line: number; text: string }) => [f.line, f.text.trim()]),
      [
        [3, 'line vty 0 4'],
        [4, 'transport input ssh telnet'],
      ],
    );
    assert.match(vty.remediation, /transport input ssh/);
    assert.match(r.body.backed_up_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const none = await apiCall(t, `/devices/${inv.devices.dNone}/compliance`, { key: viewer });
    assert.deepEqual([none.status, none.body.backup_id, none.body.results], [200, null, []]);
    assert.equal((await apiCall(t, '/devices/999999/compliance', { key: viewer })).status, 404);
  });

  test('the summary counts the devices in scope only', async () => {
    const all = await apiCall(t, '/compliance/summary', { key: viewer });
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(all.body.devices, { judged: 3, compliant: 2, non_compliant: 1 });
    assert.deepEqual(all.body.by_rule[0], { rule_id: 'vty-ssh-only', title: VTY.title, severity: 'high', pass: 2, fail: 1, waived: 0 });
    const high = await apiCall(t, '/compliance/summary?severity=low', { key: viewer });
    assert.deepEqual(high.body.by_status, { pass: 3, fail: 0, waived: 0 });
    const scoped = await apiCall(t, '/compliance/summary', { key: scopedB });
    assert.deepEqual(scoped.body.devices, { judged: 1, compliant: 1, non_compliant: 0 });
    const group = await apiCall(t, `/compliance/summary?group_id=${inv.groups.A}`, { key: viewer });
    assert.deepEqual(group.body.devices, { judged: 2, compliant: 1, non_compliant: 1 });
  });

  test('a scoped key: another group’s device results and waivers are refused (403, as the device reads)', async () => {
    for (const p of [`/devices/${inv.devices.dA}/compliance`, `/devices/${inv.devices.dA}/compliance/waivers`]) {
      const r = await apiCall(t, p, { key: scopedB });
      assert.equal(r.status, 403, p);
      assert.equal(r.body.error?.code, 'PERMISSION_DENIED');
    }
    const w = await apiCall(t, `/devices/${inv.devices.dA}/compliance/waivers`, {
      method: 'POST',
      key: scopedB,
      json: { rule_id: 'vty-ssh-only', reason: 'r', owner: 'o', expires_at: '2099-01-01 00:00:00' },
    });
    assert.equal(w.status, 403);
  });

  test('a waiver makes the failure waived (the device compliant) until removed; audited; bad input is 422', async () => {
    const base = `/devices/${inv.devices.dA}/compliance/waivers`;
    const past = await apiCall(t, base, {
      method: 'POST',
      key: admin,
      json: { rule_id: 'vty-ssh-only', reason: 'r', owner: 'o', expires_at: '2001-01-01 00:00:00' },
    });
    assert.equal(past.status, 422);
    const unknown = await apiCall(t, base, {
      method: 'POST',
      key: admin,
      json: { rule_id: 'nope', reason: 'r', owner: 'o', expires_at: '2099-01-01 00:00:00' },
    });
    assert.ok(
      unknown.body.error?.details.errors?.some((e) => e.field === 'rule_id'),
      unknown.text,
    );
    const made = await apiCall(t, base, {
      method: 'POST',
      key: admin,
      json: { rule_id: 'vty-ssh-only', reason: 'console server migration', owner: 'netops', expires_at: '2099-01-01 00:00:00' },
    });
    assert.equal(made.status, 201, made.text);
    assert.deepEqual([made.body.owner, made.body.expires_at, made.body.active], ['netops', '2099-01-01 00:00:00', true]);
    const r = await apiCall(t, `/devices/${inv.devices.dA}/compliance`, { key: viewer });
    assert.equal(r.body.compliant, true);
    assert.equal(r.body.results.find((x: { rule_id: string }) => x.rule_id === 'vty-ssh-only').waiver.owner, 'netops');
    const list = await apiCall(t, base, { key: viewer });
    assert.deepEqual(
      list.body.items.map((w: { id: number }) => w.id),
      [made.body.id],
    );
    assert.equal((await apiCall(t, `/compliance/waivers/${made.body.id}`, { method: 'DELETE', key: scopedB })).status, 403, 'another group’s waiver');
    assert.equal((await apiCall(t, '/compliance/waivers/999999', { method: 'DELETE', key: admin })).status, 404);
    const del = await apiCall(t, `/compliance/waivers/${made.body.id}`, { method: 'DELETE', key: admin });
    assert.equal(del.status, 200, del.text);
    assert.equal((await apiCall(t, `/devices/${inv.devices.dA}/compliance`, { key: viewer })).body.compliant, false);
    const actions = t.services.db.prepare("SELECT action FROM audit_log WHERE action LIKE 'compliance.waiver_%' ORDER BY id").pluck().all();
    assert.deepEqual(actions, ['compliance.waiver_add', 'compliance.waiver_remove']);
  });

  test('deleting the database rule: its results are gone from the device', async () => {
    const del = await apiCall(t, '/compliance/rules/vty-ssh-only', { method: 'DELETE', key: admin });
    assert.equal(del.status, 200, del.text);
    const r = await apiCall(t, `/devices/${inv.devices.dA}/compliance`, { key: viewer });
    assert.deepEqual(
      r.body.results.map((x: { rule_id: string }) => x.rule_id),
      ['file-ntp'],
    );
  });
});
