// The engine defaults file, the validator's rules for session and command_output, and the output cuts, without a device.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { isCommandRejected } from '../../src/engine/command-errors';
import { cutOutput } from '../../src/engine/normalise';
import { defaultVocabulary, sessionVocabulary } from '../../src/engine/prompts';
import { re2Problem } from '../../src/lib/re2';
import { DEFAULTS_ASSET, engineDefaults, parseEngineDefaults, trustedPattern } from '../../src/templates/defaults';
import { TEMPLATE_LIMITS, patternProblems, optionalSettings, validateTemplate } from '../../src/templates/index';
import type { TemplateSpec } from '../../src/templates/types';
import { REPO_ROOT } from '../helpers/appliance';
import { templateWithDefaults } from '../../src/templates/files';

const BASE: TemplateSpec = templateWithDefaults({
  name: 'made-up-os',
  vendor: 'Made-up OS',
  commands: ['show config'],
  redact: false,
});

describe('engine defaults (src/templates/defaults.yaml)', () => {
  const d = engineDefaults();

  test('hold every session field, and each pattern is valid RE2 too (a custom template may copy it)', () => {
    assert.ok(d.pagers.length >= 5 && d.command_errors.length >= 5 && d.enable_refused.length >= 1 && d.press_enter.length >= 1);
    const all = [
      d.generic_prompt,
      d.username_prompt,
      d.password_prompt,
      ...d.pagers.map((p) => p.pattern),
      ...d.enable_refused,
      ...d.command_errors,
      ...d.press_enter,
    ];
    for (const p of all) assert.equal(re2Problem(p), null, p);
  });

  test('drive the engine: the known pagers, login questions and refusals', () => {
    const v = defaultVocabulary();
    const pager = (line: string) => v.pagers.find((p) => p.re.test(line));
    assert.equal(pager('--More--')?.answer, ' '); // the driver matches the trimmed line
    assert.equal(pager('lines 1-24 (END)')?.answer, 'q');
    assert.equal(pager('Press RETURN to get started.')?.answer, null);
    assert.equal(pager('hostname r1'), undefined);
    assert.ok(v.username.some((re) => re.test('Username: ')) && v.password.some((re) => re.test('Password:')));
    assert.ok(v.prompt.test('core-sw1#') && v.prompt.test('<HUAWEI>') && !v.prompt.test('hostname r1'));
    assert.ok(v.enableRefused.some((re) => re.test('Error: Password is wrong.')));
    assert.ok(isCommandRejected("% Invalid input detected at '^' marker."));
  });

  test('a leading (?i) in shipped patterns means case-insensitive', () => {
    assert.ok(trustedPattern('(?i)^more$').test('MORE'));
    assert.ok(!trustedPattern('^more$').test('MORE'));
  });

  test('a broken defaults file stops the process naming the field (a release bug)', () => {
    const text = readFileSync(path.join(REPO_ROOT, DEFAULTS_ASSET), 'utf8');
    assert.throws(() => parseEngineDefaults(text + '\npager_typo: []\n'), /unknown field "pager_typo"/);
    assert.throws(() => parseEngineDefaults(text.replace(/^username_prompt: .*$/m, 'username_prompt: "(unclosed"')), /username_prompt does not compile/);
    assert.throws(() => parseEngineDefaults(text.replace(/^ {4}answer: q$/m, '    answer: ""')), /pagers\.3\.answer must be text/);
  });
});

describe("a template's session values come before the defaults, which stay in force", () => {
  test('template pagers, then its press-Enter lines, then the defaults', () => {
    const v = sessionVocabulary({ session: { pagers: [{ pattern: '^--More--$', answer: 'n' }], press_enter: ['^Hit Enter$'] } });
    assert.equal(v.pagers.find((p) => p.re.test('--More--'))?.answer, 'n');
    assert.equal(v.pagers.find((p) => p.re.test('Hit Enter'))?.answer, null);
    assert.equal(v.pagers.find((p) => p.re.test('<--- More --->'))?.answer, ' ');
  });

  test('command errors: the template adds to the defaults', () => {
    const v = sessionVocabulary({ session: { command_errors: ['^Error 17: '] } });
    assert.ok(isCommandRejected('Error 17: verb not known', v.commandErrors));
    assert.ok(!isCommandRejected('Error 17: verb not known'));
    assert.ok(isCommandRejected('% Unknown command', v.commandErrors));
  });

  test('no session: the defaults alone, compiled once', () => {
    assert.equal(sessionVocabulary({}), defaultVocabulary());
  });
});

describe('validateTemplate: session and command_output', () => {
  const fieldsOf = (change: Record<string, unknown>) => validateTemplate({ ...BASE, ...change }).map((e) => e.field);
  const cases: { what: string; change: Record<string, unknown>; field: string }[] = [
    { what: 'a session that is not an object', change: { session: ['x'] }, field: 'session' },
    { what: 'an unknown session field', change: { session: { pager: [] } }, field: 'session.pager' },
    { what: 'a pager that is not an object', change: { session: { pagers: ['--More--'] } }, field: 'session.pagers.0' },
    { what: 'a pager pattern with a lookahead', change: { session: { pagers: [{ pattern: '^(?!x)More', answer: ' ' }] } }, field: 'session.pagers.0.pattern' },
    { what: 'a pager pattern matching every line', change: { session: { pagers: [{ pattern: '.*', answer: ' ' }] } }, field: 'session.pagers.0.pattern' },
    { what: 'a pager answer with a line break', change: { session: { pagers: [{ pattern: 'More', answer: 'q\n' }] } }, field: 'session.pagers.0.answer' },
    { what: 'an empty pager answer', change: { session: { pagers: [{ pattern: 'More', answer: '' }] } }, field: 'session.pagers.0.answer' },
    {
      what: 'a pager answer longer than a few keys',
      change: { session: { pagers: [{ pattern: 'More', answer: 'x'.repeat(TEMPLATE_LIMITS.answer_max + 1) }] } },
      field: 'session.pagers.0.answer',
    },
    {
      what: 'a pager quiet that is not a boolean',
      change: { session: { pagers: [{ pattern: 'More', answer: ' ', quiet: 'yes' }] } },
      field: 'session.pagers.0.quiet',
    },
    { what: 'an unknown pager field', change: { session: { pagers: [{ pattern: 'More', answer: ' ', key: 'n' }] } }, field: 'session.pagers.0.key' },
    { what: 'a username question that does not compile', change: { session: { username_prompt: '(Account' } }, field: 'session.username_prompt' },
    { what: 'a password question matching every line', change: { session: { password_prompt: '' } }, field: 'session.password_prompt' },
    { what: 'a refusal line with a backreference', change: { session: { enable_refused: ['^(a)\\1'] } }, field: 'session.enable_refused.0' },
    { what: 'a command error matching every line', change: { session: { command_errors: ['^ok', '.*'] } }, field: 'session.command_errors.1' },
    { what: 'press_enter that is not a list', change: { session: { press_enter: 'Hit Enter' } }, field: 'session.press_enter' },
    {
      what: '101 press-Enter lines',
      change: { session: { press_enter: Array.from({ length: 101 }, (_, i) => `^line${i}$`) } },
      field: 'session.press_enter',
    },
    { what: 'command_output that is not an object', change: { command_output: [] }, field: 'command_output' },
    { what: 'a rule for a command the template does not run', change: { command_output: { 'show run': { drop_first: 1 } } }, field: 'command_output.show run' },
    { what: 'a rule that is not an object', change: { command_output: { 'show config': 3 } }, field: 'command_output.show config' },
    { what: 'an unknown rule field', change: { command_output: { 'show config': { drop_head: 1 } } }, field: 'command_output.show config.drop_head' },
    { what: 'a negative drop_first', change: { command_output: { 'show config': { drop_first: -1 } } }, field: 'command_output.show config.drop_first' },
    { what: 'a fractional drop_last', change: { command_output: { 'show config': { drop_last: 1.5 } } }, field: 'command_output.show config.drop_last' },
    {
      what: 'a drop_last beyond the limit',
      change: { command_output: { 'show config': { drop_last: TEMPLATE_LIMITS.output_lines_max + 1 } } },
      field: 'command_output.show config.drop_last',
    },
    {
      what: 'a start_after with a lookbehind',
      change: { command_output: { 'show config': { start_after: '(?<=x)y' } } },
      field: 'command_output.show config.start_after',
    },
    {
      what: 'a stop_before matching every line',
      change: { command_output: { 'show config': { stop_before: '.*' } } },
      field: 'command_output.show config.stop_before',
    },
  ];
  for (const c of cases) {
    test(`rejects ${c.what}`, () => {
      assert.ok(fieldsOf(c.change).includes(c.field), `${c.field} not in ${JSON.stringify(fieldsOf(c.change))}`);
    });
  }

  test('accepts every field well used', () => {
    const spec = {
      ...BASE,
      session: {
        pagers: [{ pattern: '(?i)^\\[n\\]ext page', answer: 'n', quiet: true }],
        username_prompt: '^Account:\\s*$',
        password_prompt: '^Passphrase:\\s*$',
        enable_refused: ['rejected'],
        command_errors: ['^Command not found'],
        press_enter: ['Hit ENTER'],
      },
      command_output: { 'show config': { start_after: '^BEGIN', stop_before: '^END', drop_first: 0, drop_last: 2 } },
    };
    assert.deepEqual(validateTemplate(spec), []);
  });

  test('patternProblems names the session and command_output patterns RE2 cannot run (saved before a rule existed)', () => {
    const spec = { session: { pagers: [{ pattern: '(?!x)', answer: ' ' }], press_enter: ['ok', '(?<=a)b'] }, command_output: { show: { stop_before: '\\1' } } };
    assert.deepEqual(
      patternProblems(spec).map((p) => p.field),
      ['session.pagers.0.pattern', 'session.press_enter.1', 'command_output.show.stop_before'],
    );
  });

  test('optionalSettings: fixed key order, empty parts left out (equal settings, equal stored text)', () => {
    const a = optionalSettings({
      session: { press_enter: ['x'], pagers: [{ quiet: false, answer: ' ', pattern: 'M' }], command_errors: [] },
      command_output: { show: { drop_last: 1, start_after: 'a' } },
    });
    assert.equal(
      JSON.stringify(a),
      '{"session":{"pagers":[{"pattern":"M","answer":" "}],"press_enter":["x"]},"command_output":{"show":{"start_after":"a","drop_last":1}}}',
    );
    assert.deepEqual(optionalSettings({ session: { pagers: [] }, command_output: {} }), {});
  });
});

describe('cutOutput', () => {
  const text = 'progress\nBEGIN\na\nb\nc\nEND\ntiming\n';
  const cases: [string, Parameters<typeof cutOutput>[1], string][] = [
    ['no rule: unchanged', undefined, text],
    ['start_after drops the marker and what precedes it', { start_after: '^BEGIN$' }, 'a\nb\nc\nEND\ntiming\n'],
    ['stop_before drops the marker and what follows it', { stop_before: '^END$' }, 'progress\nBEGIN\na\nb\nc\n'],
    ['both markers', { start_after: '^BEGIN$', stop_before: '^END$' }, 'a\nb\nc\n'],
    ['start_after that never matches cuts nothing', { start_after: '^NOPE$' }, text],
    ['drop_first and drop_last after the markers', { start_after: '^BEGIN$', stop_before: '^END$', drop_first: 1, drop_last: 1 }, 'b\n'],
    ['dropping more lines than there are leaves nothing', { drop_first: 5, drop_last: 5 }, ''],
    ['stop_before on the first line leaves nothing', { stop_before: '^progress$' }, ''],
  ];
  for (const [what, rule, expected] of cases) {
    test(what, () => assert.equal(cutOutput(text, rule), expected));
  }

  test('output without a trailing newline keeps none', () => {
    assert.equal(cutOutput('h1\nh2\nx\ny', { drop_first: 2 }), 'x\ny');
  });

  test('a saved pattern RE2 cannot run fails the backup as data, naming the field', () => {
    assert.throws(
      () => cutOutput(text, { stop_before: '(?=END)' }, 'acme'),
      (err: Error & { failure?: string }) => err.failure === 'COMMAND_FAILED' && /Template "acme".*stop_before/.test(err.message),
    );
  });
});
