// `confvault compliance` as an operator and a CI job run it: exit 0 compliant, 1 with violations, 2 on bad input; rule files validated, imported and tested; the report as CSV.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runCliAsync, startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';

let t: TestAppliance;
let scratch: string;
let deviceId: number;
let cli: (...args: string[]) => ReturnType<typeof runCliAsync>;

const GOOD = 'hostname sw1\nntp server 10.0.0.1\nntp server 10.0.0.2\nline vty 0 4\n transport input ssh\nend\n';
const BROKEN = GOOD.replace(' transport input ssh', ' transport input ssh telnet');
const RULES = `- id: vty-ssh-only
  title: VTY lines accept SSH only
  severity: critical
  check: {kind: sections, match: '^line vty', must_contain: ['^transport input ssh$'], must_not_contain: [telnet]}
- id: ntp-two
  title: Two NTP servers
  severity: medium
  check: {kind: value, capture: '^ntp server (\\S+)', count_min: 2}
`;

function file(name: string, text: string): string {
  const f = path.join(scratch, name);
  writeFileSync(f, text);
  return f;
}

before(async () => {
  t = await startTestAppliance();
  scratch = tempDir('confvault-compliance-cli-');
  const credential = seedCredential(t.services.db, t.services.secrets, { name: 'c', username: 'u', password: 'p' });
  deviceId = seedDevice(t.services.db, { name: 'sw1', port: 22, credential_id: credential, template_id: seedBuiltinTemplate(t.services.db, 'cisco-ios') });
  cli = (...args) => runCliAsync([...args, '--data-dir', t.services.dataDir]);
});

after(async () => {
  await t.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('confvault compliance', () => {
  test('rule validate: field problems and exit 1 for a broken file, a summary and exit 0 for a good one', async () => {
    const bad = await runCliAsync(['compliance', 'rule', 'validate', file('bad.yaml', RULES.replace("'^ntp server (\\S+)'", "'^ntp server \\S+'"))]);
    assert.equal(bad.status, 1, bad.stderr);
    assert.match(bad.stderr, /bad\.yaml: 1\.check\.capture: must have exactly one capture group/);
    const good = await runCliAsync(['compliance', 'rule', 'validate', file('rules.yaml', RULES)]);
    assert.equal(good.status, 0, good.stderr);
    assert.match(good.stdout, /ok \(2 rules: vty-ssh-only, ntp-two\)/);
  });

  test('check: exit 2 on bad input, 0 when compliant, 1 with violations (the failing line on stdout)', async () => {
    assert.equal((await cli('compliance', 'rule', 'import', file('rules.yaml', RULES))).status, 0);
    const none = await cli('compliance', 'check');
    assert.equal(none.status, 2, none.stderr);
    const unknown = await cli('compliance', 'check', '--device', 'no-such-device');
    assert.equal(unknown.status, 2, unknown.stderr);
    assert.equal(
      (await cli('backup', 'import', '--device', String(deviceId), '--file', file('good.cfg', GOOD), '--started-at', '2026-01-01 10:00:00')).status,
      0,
    );
    const ok = await cli('compliance', 'check', '--all', '--json');
    assert.equal(ok.status, 0, ok.stderr);
    const json = JSON.parse(ok.stdout) as { device_name: string; results: { rule_id: string; status: string }[] }[];
    assert.deepEqual(
      json[0].results.map((r) => `${r.rule_id}:${r.status}`),
      ['ntp-two:pass', 'vty-ssh-only:pass'],
    );
    assert.equal(
      (await cli('backup', 'import', '--device', String(deviceId), '--file', file('broken.cfg', BROKEN), '--started-at', '2026-01-02 10:00:00')).status,
      0,
    );
    const bad = await cli('compliance', 'check', '--device', 'sw1');
    assert.equal(bad.status, 1, bad.stderr);
    assert.deepEqual(bad.stdout.trim().split('\n'), [
      'sw1\tvty-ssh-only\tcritical\t4\tline vty 0 4\tsection lacks a statement matching ^transport input ssh$',
      'sw1\tvty-ssh-only\tcritical\t5\ttransport input ssh telnet\tnot allowed in line vty 0 4',
    ]);
    assert.match(bad.stderr, /1 device checked \(1 with rules that apply\), 1 violation$/m);
  });

  test('report: one CSV row per device and rule', async () => {
    const r = await cli('compliance', 'report', '--format', 'csv');
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines[0], 'device,group,template,backup_id,rule,severity,status,failing_lines,first_failing,waiver_owner,waiver_expires_at');
    assert.deepEqual(
      lines.slice(1).map((l) => l.split(',').slice(4, 7).join(',')),
      ['ntp-two,medium,pass', 'vty-ssh-only,critical,fail'],
    );
    assert.equal((await cli('compliance', 'report', '--format', 'xml')).status, 2);
  });

  test('rule test judges one rule on a configuration file; rule delete removes a database rule; pack list shows the shipped packs disabled', async () => {
    const fail = await cli('compliance', 'rule', 'test', 'vty-ssh-only', '--config', path.join(scratch, 'broken.cfg'), '--template', 'cisco-ios');
    assert.equal(fail.status, 1, fail.stderr);
    assert.match(fail.stdout, /^vty-ssh-only: fail\n {2}4: line vty 0 4 .*\n {2}5: transport input ssh telnet/);
    const pass = await cli('compliance', 'rule', 'test', path.join(scratch, 'rules.yaml'), '--config', path.join(scratch, 'good.cfg'));
    assert.equal(pass.status, 0, pass.stdout + pass.stderr);
    const del = await cli('compliance', 'rule', 'delete', 'ntp-two');
    assert.equal(del.status, 0, del.stderr);
    assert.equal((await cli('compliance', 'rule', 'delete', 'ntp-two')).status, 1, 'gone');
    assert.deepEqual(
      (await cli('compliance', 'rule', 'list')).stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t')[0]),
      ['vty-ssh-only'],
    );
    const packs = await cli('compliance', 'pack', 'list');
    assert.equal(packs.status, 0, packs.stderr);
    assert.deepEqual(
      packs.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t').slice(0, 3).join(' ').replace(/ \d+ /, ' ')),
      [
        'arista-eos-baseline disabled',
        'cisco-ios-baseline disabled',
        'cisco-nxos-baseline disabled',
        'fortinet-fortios-baseline disabled',
        'juniper-junos-baseline disabled',
      ],
    );
  });
});
