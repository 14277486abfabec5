// Redact rules that apply only inside a section (`within`): FortiOS SNMP community names, not policy names (issue #14).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { redactLines, secretToken } from '../../src/templates/redact';
import { getBuiltinTemplate, validateTemplate } from '../../src/templates/index';
import { parseTemplateYaml, templateToYaml, templateWithDefaults } from '../../src/templates/files';
import type { RedactRule, TemplateSpec } from '../../src/templates/types';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { apiCall, expectError } from '../helpers/api';
import { parseTemplateForm, specValues } from '../../src/web/pages/template-form';

const KEY = Buffer.alloc(32, 3);
const tok = (s: string) => secretToken(KEY, s);

const FORTIOS = [
  'config firewall policy',
  '    edit 1',
  '        set name "lan-to-internet"',
  '    next',
  'end',
  'config system snmp community',
  '    edit 1',
  '        set name "ro-community-1"',
  '        config hosts',
  '            edit 1',
  '                set ip 10.99.0.20 255.255.255.255',
  '            next',
  '        end',
  '        set query-v1-status disable',
  '    next',
  '    edit 2',
  '        set name "ro-community-2"',
  '    next',
  'end',
  'config firewall address',
  '    edit "srv"',
  '        set name "not-a-secret"',
  '    next',
  'end',
];

/** A custom template's form of the built-in rule: the same text but not a built-in source, so it runs as RE2. */
const CUSTOM: RedactRule = { pattern: '^\\s*set name (?<secret>"[^"]+")', within: '^config system snmp community\\s*$' };

describe('redactLines with within', () => {
  for (const [what, rule] of [
    ['the built-in FortiOS rule', getBuiltinTemplate('fortinet-fortios')!.redact_patterns.find((r) => r.within)!],
    ['a custom (RE2) rule', CUSTOM],
  ] as const) {
    test(`${what}: community names become tokens, every other "set name" stays`, () => {
      assert.ok(rule, 'fortinet-fortios has a within rule');
      const out = redactLines(FORTIOS, [rule], KEY);
      assert.equal(out[2], '        set name "lan-to-internet"');
      assert.equal(out[7], `        set name "${tok('ro-community-1')}"`);
      // a nested "config hosts ... end" does not close the section
      assert.equal(out[16], `        set name "${tok('ro-community-2')}"`);
      assert.equal(out[21], '        set name "not-a-secret"');
      assert.equal(out.length, FORTIOS.length);
    });
  }

  test('an indented configuration: the section ends at the next line indented no deeper than its opening line', () => {
    const rule: RedactRule = { pattern: '^\\s+key (?<secret>\\S+)', within: '^router bgp ' };
    const text = [
      'router bgp 65001',
      ' neighbor 10.0.0.1',
      '  key bgp-secret',
      '',
      '  key after-blank',
      'line vty 0 4',
      ' key vty-not-bgp',
      'router bgp 65002',
      ' key second',
    ];
    assert.deepEqual(redactLines(text, [rule], KEY), [
      'router bgp 65001',
      ' neighbor 10.0.0.1',
      `  key ${tok('bgp-secret')}`,
      '',
      `  key ${tok('after-blank')}`,
      'line vty 0 4',
      ' key vty-not-bgp',
      'router bgp 65002',
      ` key ${tok('second')}`,
    ]);
  });

  test('rules without within still apply to every line', () => {
    const out = redactLines(FORTIOS, [{ pattern: '^\\s*set name (?<secret>"[^"]+")' }], KEY);
    assert.equal(out[2], `        set name "${tok('lan-to-internet')}"`);
  });
});

describe('within in a template', () => {
  const base: TemplateSpec = templateWithDefaults({ name: 'acme-within', vendor: 'ACME', commands: ['show'], redact_patterns: [CUSTOM] });

  test('validated like the other patterns: RE2, with the field named', () => {
    assert.deepEqual(validateTemplate(base), []);
    const bad = validateTemplate({ ...base, redact_patterns: [{ ...CUSTOM, within: '^(?=config)' }] });
    assert.deepEqual(
      bad.map((e) => e.field),
      ['redact_patterns.0.within'],
    );
  });

  test('kept by the web form ("pattern @within section", after an optional "=> replacement")', () => {
    const rules: RedactRule[] = [
      CUSTOM,
      { pattern: '^(snmp-server community) \\S+', replacement: '$1 <redacted>', within: '^snmp' },
      { pattern: 'key (?<secret>\\S+)' },
    ];
    const values = specValues({ ...base, redact_patterns: rules });
    assert.equal(values.redact_patterns.split('\n')[0], `${CUSTOM.pattern} @within ${CUSTOM.within}`);
    const parsed = parseTemplateForm(values, null);
    assert.ok(parsed.ok, JSON.stringify(parsed));
    assert.deepEqual(parsed.spec.redact_patterns, rules);
  });

  test('kept by the YAML file form', () => {
    assert.deepEqual(parseTemplateYaml(templateToYaml(base), 'x.yaml').redact_patterns, [CUSTOM]);
  });
});

describe('within over the API', () => {
  let t: TestAppliance;
  let key: string;
  before(async () => {
    t = await startTestAppliance();
    key = await t.keyFor({ permissions: 'all' });
  });
  after(() => t.close());

  test('stored and returned; a within RE2 cannot run is a 422 naming the field and nothing is created', async () => {
    const json = { name: 'acme-within', vendor: 'ACME', commands: ['show'], redact_patterns: [CUSTOM] };
    const created = await apiCall(t, '/templates', { method: 'POST', json, key });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.redact_patterns, [CUSTOM]);
    const got = await apiCall(t, `/templates/${created.body.id}`, { key });
    assert.deepEqual(got.body.redact_patterns, [CUSTOM]);

    const bad = await apiCall(t, '/templates', {
      method: 'POST',
      json: { ...json, name: 'acme-bad', redact_patterns: [{ ...CUSTOM, within: '(?<=x)y' }] },
      key,
    });
    const error = expectError(bad, 422, 'VALIDATION_ERROR');
    assert.ok(
      error.details.errors?.some((e) => e.field === 'redact_patterns.0.within'),
      JSON.stringify(error),
    );
    const list = await apiCall(t, '/templates?builtin=false', { key });
    assert.deepEqual(
      (list.body.items as { name: string }[]).map((x) => x.name),
      ['acme-within'],
    );
  });
});
