// User-supplied patterns are RE2: refused with 422 when RE2 cannot run them, legacy ones reported by `db check` and failing the backup by name, redaction rules unchanged.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { applyTemplate } from '../../src/engine/normalise';
import { changeFingerprint, compilePattern } from '../../src/templates/patterns';
import { CollectError } from '../../src/engine/types';
import { re2ReplaceAll, compileRe2 } from '../../src/lib/re2';
import { runCliAsync, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { rawState } from '../helpers/seed';
import { WebClient } from '../web/web-client';

describe('templates API: patterns must be RE2', () => {
  let t: TestAppliance;
  let key: string;
  before(async () => {
    t = await startTestAppliance();
    key = await t.keyFor({ permissions: 'all' });
  });
  after(() => t.close());

  const post = async (json: unknown) => {
    const res = await t.api('/api/v1/templates', { method: 'POST', key, json });
    return {
      status: res.status,
      body: (await res.json()) as { id?: number; error?: { code: string; details: { errors: { field: string; message: string }[] } } },
    };
  };

  test('a lookahead, a lookbehind or a backreference is a 422 naming the field and the reason; nothing is saved', async () => {
    const r = await post({
      name: 'bad-patterns',
      vendor: 'ACME',
      commands: ['show config'],
      strip_patterns: ['^ok$', '^(?!x)y$'],
      ignore_patterns: ['^(a)\\1$'],
      redact_patterns: [{ pattern: '(?<=secret )\\S+', replacement: '<hidden>' }],
    });
    assert.equal(r.status, 422);
    assert.equal(r.body.error?.code, 'VALIDATION_ERROR');
    const errors = r.body.error.details.errors;
    assert.deepEqual(errors.map((e) => e.field).sort(), ['ignore_patterns.0', 'redact_patterns.0.pattern', 'strip_patterns.1']);
    for (const e of errors) assert.match(e.message, /not valid RE2 syntax/);
    assert.match(errors.find((e) => e.field === 'ignore_patterns.0')!.message, /backreferences are not supported/);
    assert.match(errors.find((e) => e.field === 'strip_patterns.1')!.message, /lookahead and lookbehind are not supported/);
    const list = await t.api('/api/v1/templates?builtin=false', { key });
    assert.equal(((await list.json()) as { items: unknown[] }).items.length, 0);
  });

  test('a pattern that backtracks catastrophically in JavaScript saves: RE2 runs it in linear time', async () => {
    const r = await post({
      name: 'hostile-ok',
      vendor: 'ACME',
      commands: ['show config'],
      strip_patterns: ['(.|.)*zzz$'],
      ignore_patterns: ['(\\w+\\s?){1,30}#$'],
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });

  test('a custom template saved before RE2 with a lookahead: db check names it and fails', async () => {
    const r = await post({ name: 'legacy', vendor: 'ACME', commands: ['show config'], strip_patterns: ['^ok$'] });
    assert.equal(r.status, 201);
    // As a pre-RE2 version stored it (the API refuses it now).
    rawState(
      t.services.db,
      'a pattern a pre-RE2 version stored, which every service now refuses',
      `UPDATE templates SET spec = json_set(spec, '$.strip_patterns', json('["^ok$", "^(?!x)y$"]')) WHERE id = ?`,
      r.body.id,
    );
    const check = await runCliAsync(['db', 'check', '--data-dir', t.services.dataDir]);
    assert.equal(check.status, 1, check.stdout + check.stderr);
    assert.match(check.stdout, /template legacy \(id \d+\): strip_patterns\.1 is not valid RE2 syntax/);
    assert.match(check.stdout, /check: FAILED/);
    // The template list names it too.
    const web = new WebClient(t.url);
    assert.equal((await web.login('admin', 'admin-password-1')).status, 303);
    const list = await web.get('/templates');
    assert.match(list.html, new RegExp(`id="template-${r.body.id}-patterns"[^>]*>[^<]*1 pattern\\(s\\) not RE2 syntax: strip_patterns\\.1`));
  });
});

describe('the engine with RE2 patterns', () => {
  test('a saved pattern RE2 cannot compile fails the backup as data, naming the field (a redact rule is never skipped)', () => {
    assert.throws(
      () =>
        applyTemplate(
          'hostname r1\nsecret abc\n',
          { name: 'legacy', strip_patterns: [], redact_patterns: [{ pattern: '(?<=secret )\\S+', replacement: 'x' }] },
          { redact: true, key: Buffer.alloc(32, 1) },
        ),
      (err: unknown) => err instanceof CollectError && err.failure === 'COMMAND_FAILED' && /Template "legacy".*redact_patterns\.0\.pattern/.test(err.message),
    );
  });

  test('an ignore pattern that does not compile is skipped by the change fingerprint', () => {
    assert.equal(changeFingerprint('a\nb\n', ['^(?!x)b$']), changeFingerprint('a\nb\n', []));
  });

  test('redact replacements keep JavaScript rules: $1, $<name>, $&, $$', () => {
    const re = compileRe2('(?P<kw>secret|key) (\\S+)');
    assert.equal(re2ReplaceAll(re, 'secret abc key def', '$1 <$<kw>> [$&] $$'), 'secret <secret> [secret abc] $ key <key> [key def] $');
    const custom = applyTemplate(
      'snmp community public RO\n',
      { strip_patterns: [], redact_patterns: [{ pattern: '^(snmp community) \\S+', replacement: '$1 <redacted>' }] },
      { redact: true, key: Buffer.alloc(32, 1) },
    );
    assert.equal(custom, 'snmp community <redacted> RO\n');
  });

  test('empty matches advance like String.replace', () => {
    assert.equal(re2ReplaceAll(compileRe2('x*'), 'abc', '-'), 'abc'.replace(/x*/g, '-'));
  });

  test('custom patterns run on RE2, built-in ones keep JavaScript', () => {
    assert.ok(compilePattern('^! Last configuration change at ') instanceof RegExp, 'a built-in pattern');
    assert.ok(!(compilePattern('^my custom line$') instanceof RegExp), 'a custom pattern');
  });
});
