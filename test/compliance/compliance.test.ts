// Compliance through the real import path (the service `backup import` calls): each stored version judged as it lands, waivers until their expiry, golden remediation applied back, packs per group, permissions and scope.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { importBackup } from '../../src/features/backups/import.service';
import { createGroup } from '../../src/features/groups/groups.service';
import { SYSTEM_ACTOR, type Actor } from '../../src/identity/actor';
import { PERMISSIONS, type Permission } from '../../src/identity/permissions';
import { addWaiver, checkCompliance, complianceIdle, rejudgeFleet, type DeviceCompliance } from '../../src/features/compliance/compliance.service';
import { enablePack, importRules, listRules, loadRuleset } from '../../src/features/compliance/compliance-rules.service';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { applyRemediation } from '../../src/features/compliance/golden';
import { ApiError } from '../../src/errors';
import { createApplianceMetrics } from '../../src/features/metrics/metrics.service';
import { createChannel, createRule } from '../../src/features/notifications/notifications.service';
import { DestinationPolicy } from '../../src/lib/destinations';

let t: TestAppliance;
let core: number;
let branch: number;
let credential: number;
let ios: number;

const GOOD = `hostname {NAME}
ip ssh version 2
ntp server 10.0.0.1
ntp server 10.0.0.2
line vty 0 4
 exec-timeout 5 0
 transport input ssh
end
`;

const RULES = `- id: vty-ssh-only
  title: VTY lines accept SSH only
  severity: critical
  remediation: Configure "transport input ssh" under each line vty.
  check: {kind: sections, match: '^line vty', must_contain: ['^transport input ssh$'], must_not_contain: [telnet]}
- id: ntp-two
  title: Two NTP servers
  severity: medium
  check: {kind: value, capture: '^ntp server (\\S+)', count_min: 2}
- id: golden-vty
  title: VTY settings as agreed
  severity: high
  applies_to: {groups: [dc]}
  check:
    kind: golden
    snippet: |
      hostname {{device.name}}
      line vty 0 4
       exec-timeout 5 0
       transport input ssh
`;

const actor = (permissions: readonly Permission[], groups: number[] | null = null): Actor => ({
  principal: {
    userId: 99,
    username: 'viewer',
    roleName: 'r',
    permissions: new Set(permissions),
    scope: groups === null ? { all: true } : { all: false, groupIds: new Set(groups) },
    timezone: null,
    apiKeyId: null,
  },
  door: { kind: 'system' },
  requestId: null,
});

function device(name: string, group: number | null): number {
  return seedDevice(t.services.db, { name, port: 22, credential_id: credential, template_id: ios, group_id: group });
}

/** Stores a version as `confvault backup import` does, then waits for its background judgement. */
async function store(deviceId: number, text: string, at: number): Promise<string> {
  const r = importBackup(t.services.db, SYSTEM_ACTOR, t.services.snapshots, deviceId, text, at);
  await complianceIdle(t.services.db);
  return r.id;
}

function judgedBy(backupId: string): string | undefined {
  return t.services.db.prepare('SELECT ruleset FROM compliance_judged WHERE backup_id = ?').pluck().get(backupId) as string | undefined;
}

const statusOf = (d: DeviceCompliance, rule: string) => d.results.find((r) => r.rule_id === rule)?.status ?? 'not_applicable';

before(async () => {
  t = await startTestAppliance();
  const dc = createGroup(t.services.db, SYSTEM_ACTOR, { name: 'dc', parent_id: null, description: '', schedule: null }).id;
  core = createGroup(t.services.db, SYSTEM_ACTOR, { name: 'core', parent_id: dc, description: '', schedule: null }).id;
  branch = createGroup(t.services.db, SYSTEM_ACTOR, { name: 'branch', parent_id: null, description: '', schedule: null }).id;
  credential = seedCredential(t.services.db, t.services.secrets, { name: 'c', username: 'u', password: 'p' });
  ios = seedBuiltinTemplate(t.services.db, 'cisco-ios');
  importRules(t.services.db, SYSTEM_ACTOR, RULES, 'rules.yaml');
});

after(async () => {
  await t.close();
});

describe('compliance as versions are stored', () => {
  test('a change that breaks a rule is caught within the same backup, with the failing line', async () => {
    const id = device('edge1', core);
    const first = await store(id, GOOD.replace('{NAME}', 'edge1'), Date.now() - 60_000);
    assert.ok(judgedBy(first), 'the first version was judged by the import itself');
    let [d] = await checkCompliance(t.services.db, t.services.snapshots, SYSTEM_ACTOR, { device: 'edge1' });
    assert.deepEqual(
      d.results.map((r) => [r.rule_id, r.status]),
      [
        ['golden-vty', 'pass'],
        ['ntp-two', 'pass'],
        ['vty-ssh-only', 'pass'],
      ],
    );
    const broken = GOOD.replace(' transport input ssh', ' transport input ssh telnet').replace('ntp server 10.0.0.2\n', '');
    const second = await store(id, broken.replace('{NAME}', 'edge1'), Date.now());
    // Judged by the hook of the import, before anyone asked.
    assert.equal(judgedBy(second), judgedBy(first));
    [d] = await checkCompliance(t.services.db, t.services.snapshots, SYSTEM_ACTOR, { device: String(id) });
    assert.equal(d.backup_id, second);
    const vty = d.results.find((r) => r.rule_id === 'vty-ssh-only')!;
    assert.equal(vty.status, 'fail');
    assert.deepEqual(
      vty.failing.map((f) => [f.line, f.text]),
      [
        [4, 'line vty 0 4'],
        [6, 'transport input ssh telnet'],
      ],
    );
    assert.equal(statusOf(d, 'ntp-two'), 'fail');
    assert.match(vty.remediation, /transport input ssh/);
  });

  test('a waiver silences a failure until it expires; the failure is back afterwards', async () => {
    const now = Date.now();
    const expires = now + 3_600_000;
    addWaiver(t.services.db, SYSTEM_ACTOR, { device: 'edge1', rule_id: 'ntp-two', reason: 'second server on order', owner: 'noc', expires_at: expires });
    const [during] = await checkCompliance(t.services.db, t.services.snapshots, SYSTEM_ACTOR, { device: 'edge1' }, now);
    assert.equal(statusOf(during, 'ntp-two'), 'waived');
    assert.equal(during.results.find((r) => r.rule_id === 'ntp-two')!.waiver?.owner, 'noc');
    assert.equal(statusOf(during, 'vty-ssh-only'), 'fail', 'a waiver covers its rule only');
    const [afterwards] = await checkCompliance(t.services.db, t.services.snapshots, SYSTEM_ACTOR, { device: 'edge1' }, expires + 1);
    assert.equal(statusOf(afterwards, 'ntp-two'), 'fail');
    const audit = t.services.db.prepare("SELECT count(*) FROM audit_log WHERE action = 'compliance.waiver_add'").pluck().get();
    assert.equal(audit, 1);
    assert.throws(
      () => addWaiver(t.services.db, SYSTEM_ACTOR, { device: 'edge1', rule_id: 'ntp-two', reason: 'x', owner: 'noc', expires_at: now - 1 }),
      (e: unknown) => e instanceof ApiError && e.code === 'VALIDATION_ERROR',
    );
  });

  test("a golden snippet's remediation, applied to the configuration text, makes the device compliant", async () => {
    const id = device('edge2', core);
    const drifted =
      'hostname old-name\nip ssh version 2\nntp server 10.0.0.1\nntp server 10.0.0.2\nline vty 0 4\n exec-timeout 30 0\n transport input ssh\n logging synchronous\nend\n';
    await store(id, drifted, Date.now() - 1000);
    const [d] = await checkCompliance(t.services.db, t.services.snapshots, SYSTEM_ACTOR, { device: 'edge2' });
    const golden = d.results.find((r) => r.rule_id === 'golden-vty')!;
    assert.equal(golden.status, 'fail');
    assert.deepEqual(
      golden.failing.map((f) => f.text),
      ['hostname edge2', 'exec-timeout 5 0', 'exec-timeout 30 0', 'logging synchronous'],
    );
    const fixed = applyRemediation(drifted, golden.remediation, 'indent');
    await store(id, fixed, Date.now());
    const [again] = await checkCompliance(t.services.db, t.services.snapshots, SYSTEM_ACTOR, { device: 'edge2' });
    assert.equal(statusOf(again, 'golden-vty'), 'pass', fixed);
  });

  test('rules apply by group (subgroups inherit); a pack applies where it is enabled, after a fleet re-judge', async () => {
    const id = device('branch1', branch);
    await store(id, GOOD.replace('{NAME}', 'branch1'), Date.now());
    let [d] = await checkCompliance(t.services.db, t.services.snapshots, SYSTEM_ACTOR, { device: 'branch1' });
    assert.equal(statusOf(d, 'golden-vty'), 'not_applicable');
    assert.equal(statusOf(d, 'ios-aaa-new-model'), 'not_applicable');
    assert.ok(enablePack(t.services.db, SYSTEM_ACTOR, 'cisco-ios-baseline', 'branch'));
    const progress: number[] = [];
    const run = rejudgeFleet(t.services.db, t.services.snapshots, 'pack enabled', (n) => progress.push(n));
    const end = await run.done;
    assert.equal(end.state, 'finished');
    assert.equal(end.done, end.total);
    assert.ok(progress.length > 0);
    [d] = await checkCompliance(t.services.db, t.services.snapshots, SYSTEM_ACTOR, { device: 'branch1' });
    assert.equal(statusOf(d, 'ios-aaa-new-model'), 'fail');
    assert.equal(statusOf(d, 'ios-ssh-version-2'), 'pass');
    const [edge] = await checkCompliance(t.services.db, t.services.snapshots, SYSTEM_ACTOR, { device: 'edge1' });
    assert.equal(statusOf(edge, 'ios-aaa-new-model'), 'not_applicable', 'the pack is not enabled for dc');
  });
});

describe('compliance metrics', () => {
  test('/metrics counts failing rules of the newest versions by rule and severity, waived ones left out', async () => {
    const m = createApplianceMetrics({ db: t.services.db, dbFile: path.join(t.services.dataDir, 'confvault.db'), staleAfterHours: 24, queued: () => 0 });
    const text = await m.registry.getSingleMetricAsString('confvault_compliance_violations');
    assert.match(text, /^confvault_compliance_violations\{rule="vty-ssh-only",severity="critical"\} 1$/m);
    assert.match(text, /^confvault_compliance_violations\{rule="ios-aaa-new-model",severity="high"\} 1$/m);
    assert.doesNotMatch(text, /rule="ntp-two"/, 'the waiver in force takes it out');
  });
});

describe('compliance notifications', () => {
  test('compliance_failed when a version starts failing a rule, compliance_recovered when it passes again, nothing when unchanged', async () => {
    await createChannel(t.services.db, SYSTEM_ACTOR, t.appliance.secrets, new DestinationPolicy(['127.0.0.1']), {
      name: 'noc-hook',
      type: 'webhook',
      url: 'http://127.0.0.1:9/hook',
    });
    createRule(t.services.db, SYSTEM_ACTOR, { name: 'compliance', events: ['compliance_failed', 'compliance_recovered'], channels: ['noc-hook'] });
    const events = () =>
      (
        t.services.db.prepare("SELECT event, item FROM notification_outbox WHERE event LIKE 'compliance_%' ORDER BY id").all() as {
          event: string;
          item: string;
        }[]
      ).map((r) => ({ event: r.event, summary: (JSON.parse(r.item) as { item: { summary: string } }).item.summary }));
    const id = device('edge3', core);
    const good = GOOD.replace('{NAME}', 'edge3');
    await store(id, good, Date.now() - 3000);
    assert.deepEqual(events(), []);
    await store(id, good.replace(' transport input ssh', ' transport input telnet'), Date.now() - 2000);
    const failed = events();
    assert.equal(failed.length, 1);
    assert.equal(failed[0].event, 'compliance_failed');
    assert.match(failed[0].summary, /^edge3: 2 compliance rule\(s\) now failing: golden-vty \(high\): .*; vty-ssh-only \(critical\): line 5 line vty 0 4/);
    await store(id, good, Date.now() - 1000);
    await store(id, good, Date.now());
    assert.deepEqual(
      events().map((e) => e.event),
      ['compliance_failed', 'compliance_recovered'],
    );
    assert.match(events()[1].summary, /^edge3: compliant again with golden-vty, vty-ssh-only$/);
  });
});

describe('rule files in <data_dir>/compliance', () => {
  test('a file rule is in force as written; an edit in place is read again; a broken file is left out with its problems', async () => {
    const dir = path.join(t.services.dataDir, 'compliance');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'banner.yaml');
    const rule = (line: string) => `id: banner\ntitle: Banner\nseverity: low\ncheck: {kind: must_exist, line: '${line}'}\n`;
    writeFileSync(file, rule('^hostname '));
    let [d] = await checkCompliance(t.services.db, t.services.snapshots, SYSTEM_ACTOR, { device: 'edge1' });
    assert.equal(statusOf(d, 'banner'), 'pass');
    assert.equal(listRules(t.services.db, SYSTEM_ACTOR, t.services.dataDir).find((r) => r.rule.id === 'banner')?.origin, 'file');
    writeFileSync(file, rule('^banner motd '));
    [d] = await checkCompliance(t.services.db, t.services.snapshots, SYSTEM_ACTOR, { device: 'edge1' });
    assert.equal(statusOf(d, 'banner'), 'fail', 'the edited file was read again and the version re-judged');
    writeFileSync(path.join(dir, 'broken.yaml'), 'id: Broken\n');
    const set = loadRuleset(t.services.db, t.services.dataDir);
    assert.deepEqual(
      set.problems.map((p) => path.basename(p.path)),
      ['broken.yaml'],
    );
    assert.ok(set.info.has('banner'));
  });
});

describe('compliance permissions and scope', () => {
  test('results need compliance.view; waivers need compliance.manage', async () => {
    const noView = actor(PERMISSIONS.filter((p) => p !== 'compliance.view'));
    await assert.rejects(
      checkCompliance(t.services.db, t.services.snapshots, noView, {}),
      (e: unknown) => e instanceof ApiError && e.code === 'PERMISSION_DENIED',
    );
    assert.throws(
      () =>
        addWaiver(t.services.db, actor(['compliance.view']), { device: 'edge1', rule_id: 'ntp-two', reason: 'x', owner: 'o', expires_at: Date.now() + 1000 }),
      (e: unknown) => e instanceof ApiError && e.code === 'PERMISSION_DENIED',
    );
  });

  test("an actor scoped to a group sees only its devices' results; another group's device is refused", async () => {
    const scoped = actor(['compliance.view'], [branch]);
    const all = await checkCompliance(t.services.db, t.services.snapshots, scoped, {});
    assert.deepEqual(
      all.map((d) => d.device_name),
      ['branch1'],
    );
    await assert.rejects(
      checkCompliance(t.services.db, t.services.snapshots, scoped, { device: 'edge1' }),
      (e: unknown) => e instanceof ApiError && e.code === 'PERMISSION_DENIED',
    );
  });
});
