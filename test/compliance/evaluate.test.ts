// The compliance engine on configuration texts: each check kind, the hierarchy modes, golden snippets and their remediation applied back.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkRuleText } from '../../src/features/compliance/rule-files';
import { compileRule, judgeConfig, type DeviceContext, type RuleResult } from '../../src/features/compliance/evaluate';
import { applyRemediation } from '../../src/features/compliance/golden';
import { modeFor, parseHierarchy } from '../../src/features/compliance/hierarchy';
import { literalStart } from '../../src/features/compliance/line-index';

const IOS = `hostname edge1
!
service password-encryption
no ip http server
ip ssh version 2
ntp server 10.0.0.1
snmp-server community public RO
!
interface GigabitEthernet0/1
 description uplink
 no shutdown
interface GigabitEthernet0/2
 shutdown
!
line con 0
 exec-timeout 5 0
line vty 0 4
 exec-timeout 30 0
 transport input ssh telnet
!
end`;

const ctx = (over: Partial<DeviceContext> = {}): DeviceContext => ({
  name: 'edge1',
  hostname: '192.0.2.1',
  template: 'cisco-ios',
  group_path: 'dc/core',
  custom: {},
  ...over,
});

function rule(yaml: string) {
  const { rules, errors } = checkRuleText(yaml);
  assert.deepEqual(errors, []);
  return compileRule(rules[0]);
}

const head = (id: string) => `id: ${id}\ntitle: ${id}\nseverity: high\n`;
function judge(yaml: string, text = IOS, c = ctx()): RuleResult {
  return judgeConfig([rule(yaml)], text, c)[0];
}

describe('compliance checks', () => {
  test('must_exist and must_not_exist report the line numbers', () => {
    assert.equal(judge(`${head('a')}check: {kind: must_exist, line: '^ip ssh version 2$'}`).status, 'pass');
    const r = judge(`${head('b')}check: {kind: must_not_exist, line: '^snmp-server community (public|private)\\b'}`);
    assert.equal(r.status, 'fail');
    assert.deepEqual(
      r.failing.map((f) => f.line),
      [7],
    );
    assert.equal(judge(`${head('c')}check: {kind: must_exist, line: '^service timestamps'}`).failing[0].line, null);
  });

  test('sections: every vty must carry ssh only; a matching section that lacks a statement fails at its header', () => {
    const r = judge(`${head('vty')}check:\n  kind: sections\n  match: '^line vty'\n  must_contain: ['^transport input ssh$']\n  must_not_contain: ['telnet']`);
    assert.equal(r.status, 'fail');
    assert.deepEqual(
      r.failing.map((f) => [f.line, f.message.startsWith('section lacks')]),
      [
        [17, true],
        [19, false],
      ],
    );
    const shut = judge(`${head('if')}check: {kind: sections, match: '^interface ', must_contain: ['^description ']}`);
    assert.deepEqual(
      shut.failing.map((f) => f.line),
      [12],
    );
  });

  test('values: counts, numeric bounds, forbidden values', () => {
    const ntp = judge(`${head('ntp')}check: {kind: value, capture: '^ntp server (\\S+)', count_min: 2}`);
    assert.equal(ntp.status, 'fail');
    assert.match(ntp.failing[0].message, /1 line match, at least 2/);
    const timeout = judge(`${head('t')}check: {kind: value, capture: '^\\s*exec-timeout (\\d+)', max: 10}`);
    assert.deepEqual(
      timeout.failing.map((f) => f.line),
      [18],
    );
    const community = judge(`${head('s')}check: {kind: value, capture: '^snmp-server community (\\S+)', not_in: [public, private]}`);
    assert.deepEqual(
      community.failing.map((f) => f.line),
      [7],
    );
  });

  test('rules apply by template and group; subgroups inherit', () => {
    const y = `${head('g')}applies_to: {templates: [cisco-ios], groups: [dc]}\ncheck: {kind: must_exist, line: '^nothing'}`;
    assert.equal(judge(y).status, 'fail');
    assert.equal(judge(y, IOS, ctx({ group_path: 'branch' })).status, 'not_applicable');
    assert.equal(judge(y, IOS, ctx({ group_path: 'dcx' })).status, 'not_applicable');
    assert.equal(judge(y, IOS, ctx({ template: 'arista-eos' })).status, 'not_applicable');
  });

  test('a rule file with a bad pattern, a capture without a group or an unknown field is refused by field', () => {
    const bad = checkRuleText(`${head('x')}check: {kind: value, capture: '^ntp server \\S+', count_min: 2}\n`);
    assert.deepEqual(
      bad.errors.map((e) => e.field),
      ['check.capture'],
    );
    const re = checkRuleText(`- ${head('y').trim().replace(/\n/g, '\n  ')}\n  check: {kind: must_exist, line: '(?=a)'}\n`);
    assert.deepEqual(
      re.errors.map((e) => e.field),
      ['0.check.line'],
    );
    assert.deepEqual(
      checkRuleText(`${head('z')}severity_: x\ncheck: {kind: must_exist, line: a}`).errors.map((e) => e.field),
      ['file'],
    );
  });
});

describe('golden snippets', () => {
  const golden = `${head('gold')}check:
  kind: golden
  extra_match: '^ntp server '
  snippet: |
    hostname {{device.name}}
    ntp server 10.0.0.1
    ntp server 10.0.0.2
    line vty 0 4
     exec-timeout 5 0
     transport input ssh
    banner-text {{group.path}}
`;

  test('missing and extra lines are reported, and the generated commands applied to the text make it compliant', () => {
    const r = judge(golden);
    assert.equal(r.status, 'fail');
    const texts = r.failing.map((f) => `${f.line ?? '-'} ${f.text}`);
    assert.deepEqual(texts, [
      '- ntp server 10.0.0.2',
      '- exec-timeout 5 0',
      '- transport input ssh',
      '18 exec-timeout 30 0',
      '19 transport input ssh telnet',
      '- banner-text dc/core',
    ]);
    assert.match(r.remediation, /^line vty 0 4\n exec-timeout 5 0\n transport input ssh\n no exec-timeout 30 0\n no transport input ssh telnet$/m);
    const fixed = applyRemediation(IOS, r.remediation, 'indent');
    assert.equal(judge(golden, fixed).status, 'pass');
    assert.equal(judge(`${head('v')}check: {kind: sections, match: '^line vty', must_not_contain: [telnet]}`, fixed).status, 'pass');
  });

  test('set mode (Junos): missing statements as set commands, extra ones deleted', () => {
    const junos = 'set system host-name r1\nset system services ssh\nset system services telnet\nset system ntp server 10.0.0.9';
    const c = ctx({ template: 'juniper-junos' });
    const y = `${head('j')}check:\n  kind: golden\n  extra_match: '^set system ntp server '\n  snippet: |\n    set system services ssh\n    set system ntp server 10.0.0.1\n`;
    const r = judge(y, junos, c);
    assert.deepEqual(r.remediation.split('\n').slice(-2), ['set system ntp server 10.0.0.1', 'delete system ntp server 10.0.0.9']);
    assert.equal(judge(y, applyRemediation(junos, r.remediation, 'set'), c).status, 'pass');
    const s = judge(`${head('s')}check: {kind: sections, match: '^system services$', must_not_contain: ['^telnet']}`, junos, c);
    assert.deepEqual(
      s.failing.map((f) => f.line),
      [3],
    );
  });

  test('FortiOS blocks: a missing setting is written inside config/end, an extra one unset', () => {
    const forti =
      'config system global\n    set hostname fw1\n    set admin-telnet enable\nend\nconfig system interface\n    edit "port1"\n        set allowaccess ping https ssh telnet\n    next\nend';
    const c = ctx({ template: 'fortinet-fortios' });
    const y = `${head('f')}check:\n  kind: golden\n  snippet: |\n    config system global\n        set hostname fw1\n        set admintimeout 5\n    end\n`;
    const r = judge(y, forti, c);
    assert.deepEqual(
      r.failing.map((f) => f.text),
      ['set admintimeout 5', 'set admin-telnet enable'],
    );
    assert.match(r.remediation, /config system global\n {4}set admintimeout 5\n {4}unset admin-telnet\nend/);
    assert.equal(judge(y, applyRemediation(forti, r.remediation, 'fortios'), c).status, 'pass');
    const s = judge(`${head('t')}check: {kind: sections, match: '^edit ', must_not_contain: ['^set allowaccess .*\\btelnet\\b']}`, forti, c);
    assert.deepEqual(
      s.failing.map((f) => f.line),
      [7],
    );
  });
});

describe('hierarchy and pattern index', () => {
  test('braces (PAN-OS, Junos curly) read as paths, like set lines', () => {
    const h = parseHierarchy('system {\n    services {\n        ssh;\n    }\n}\n', 'braces');
    assert.deepEqual(
      h.nodes.map((n) => n.path),
      ['system', 'system services', 'system services ssh'],
    );
    assert.equal(modeFor('juniper-junos', 'system {\n  host-name r1;\n}\n'), 'braces');
    assert.equal(modeFor('juniper-junos', 'set system host-name r1'), 'set');
  });

  test('only lines that can match a literal-anchored pattern are tried', () => {
    assert.deepEqual(literalStart('^ntp server '), { literal: 'ntp', wholeWord: true });
    assert.deepEqual(literalStart('^\\s*transport input'), { literal: 'transport', wholeWord: true });
    assert.deepEqual(literalStart('^ntp?x'), { literal: 'nt', wholeWord: false });
    assert.equal(literalStart('^(a|b)').literal, null);
    assert.equal(literalStart('ntp').literal, null);
    // The prefilter changes nothing: the same answer as testing every line.
    assert.equal(judge(`${head('p')}check: {kind: must_exist, line: '^snmp-serv'}`).status, 'pass');
  });
});
