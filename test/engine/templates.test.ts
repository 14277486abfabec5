// Built-in templates: replay each vendor's recorded session through the simulator and compare the stored text.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { collectConfig } from '../../src/engine/collect';
import { applyTemplate } from '../../src/engine/normalise';
import { compilePattern } from '../../src/templates/patterns';
import { PRIVATE_KEY_PLACEHOLDER, SECRET_TOKEN, secretToken } from '../../src/templates/redact';
import { builtinTemplates, getBuiltinTemplate, validateTemplate } from '../../src/templates/index';
import type { TemplateSpec } from '../../src/templates/types';
import type { CollectResult, CollectTarget } from '../../src/engine/types';
import { generateHostKey, loadTranscript, startSimulator, type RunningSimulator, type Transcript } from '../sim/simulator';
import { startTelnetSimulator } from '../sim/telnet-sim';
import { tokenSpans } from '../corpus/corpus-check';

const TRANSCRIPTS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'sim', 'transcripts');
/** Any 32 bytes stand for the appliance's redaction key. */
const KEY = Buffer.alloc(32, 7);
const LIMITS = { connect_timeout_ms: 5_000, login_timeout_ms: 5_000, command_timeout_ms: 5_000, overall_timeout_ms: 20_000 };

/** One host key for every simulator here. */
const HOST_KEY = generateHostKey();

function startDevice(t: Transcript): Promise<RunningSimulator> {
  return startSimulator({ devices: [{ name: t.hostname, transcript: t }], host_key: HOST_KEY });
}

/** A transcript plus the test-only list of the fake secrets planted in it. */
type Recorded = Transcript & { secrets: string[] };

function recorded(name: string): { transcript: Recorded; expected: string } {
  const transcript = loadTranscript(path.join(TRANSCRIPTS, `${name}.json`)) as Recorded;
  const expected = readFileSync(path.join(TRANSCRIPTS, `${name}.expected.txt`), 'utf8');
  return { transcript, expected };
}

function targetFor(port: number, t: Transcript, protocol: CollectTarget['protocol'] = 'ssh'): CollectTarget {
  return { host: '127.0.0.1', port, protocol, username: t.username, password: t.password, enable_secret: t.enable?.password ?? null };
}

function stored(result: CollectResult): string {
  if (!result.ok) assert.fail(`collection failed: ${result.failure}: ${result.message}`);
  return result.text;
}

/**
 * The lines between a PEM private key's BEGIN and END lines (redaction keeps one placeholder line of each such
 * block), and a key body written on one line.
 */
function privateKeyBodies(text: string): { lines: string[]; blocks: number; multiLine: number } {
  const lines: string[] = [];
  let blocks = 0;
  let multiLine = 0;
  let inside = false;
  for (const line of text.split('\n')) {
    const inline = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(.*?)-----END [A-Z0-9 ]*PRIVATE KEY-----/.exec(line);
    if (inline) lines.push(inline[1]);
    else if (/-----END [A-Z0-9 ]*PRIVATE KEY-----/.test(line)) inside = false;
    else if (inside) {
      lines.push(line);
      multiLine++;
    } else if (/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(line)) {
      inside = true;
      blocks++;
    }
  }
  return { lines, blocks, multiLine };
}

/** First differing line, so a mismatch reads as one line instead of two 200-line blobs. */
function assertSameText(actual: string, expected: string): void {
  if (actual === expected) return;
  const a = actual.split('\n');
  const e = expected.split('\n');
  const i = a.findIndex((line, n) => line !== e[n]);
  const at = i < 0 ? a.length : i;
  assert.fail(`stored text differs at line ${at + 1}:\n  got:      ${JSON.stringify(a[at])}\n  expected: ${JSON.stringify(e[at])}`);
}

describe('built-in template library', () => {
  test('names are unique, each is found by name and every built-in redacts (when the appliance does)', () => {
    const names = builtinTemplates().map((t) => t.name);
    assert.equal(new Set(names).size, names.length);
    for (const t of builtinTemplates()) {
      assert.equal(getBuiltinTemplate(t.name), t);
      assert.equal(t.redact, true, `${t.name} does not redact`);
    }
    assert.equal(getBuiltinTemplate('no-such-vendor'), undefined);
  });

  test('every built-in passes validateTemplate', () => {
    for (const t of builtinTemplates()) assert.deepEqual(validateTemplate(t), [], t.name);
  });

  test('every redact rule of a built-in names its secret and stores a keyed token (no replacement text)', () => {
    for (const t of builtinTemplates()) {
      for (const r of t.redact_patterns) {
        assert.equal(r.replacement, undefined, `${t.name}: ${r.pattern}`);
        assert.match(r.pattern, /\(\?<secret>/, `${t.name}: ${r.pattern}`);
      }
    }
  });

  test('every pre-command and capture command of a template is in its transcript', () => {
    for (const t of builtinTemplates()) {
      const { transcript } = recorded(t.name);
      assert.equal(transcript.template, t.name);
      for (const c of [...t.pre_commands, ...t.commands]) assert.ok(c in transcript.commands, `${t.name}: "${c}" not recorded`);
    }
  });
});

// Each replay has its own simulator, so they run side by side (a session spends most of its time waiting).
describe('replays', { concurrency: true }, () => {
  for (const template of builtinTemplates()) {
    describe(`${template.name} replay`, () => {
      const { transcript, expected } = recorded(template.name);
      let sim: RunningSimulator;
      before(async () => {
        sim = await startDevice(transcript);
      });
      after(() => sim.close());

      test('stores exactly the expected text', async () => {
        const result = await collectConfig(targetFor(sim.port, transcript), template, LIMITS);
        assertSameText(stored(result), expected);
      });

      test('with redaction on, no planted secret is left and each one is there as its token', async () => {
        const text = stored(await collectConfig(targetFor(sim.port, transcript), template, LIMITS, { redact_key: KEY }));
        // a PEM private key's body becomes the placeholder; every other secret its keyed token
        const keys = privateKeyBodies(expected);
        for (const secret of transcript.secrets) {
          assert.ok(!text.includes(secret), `secret ${JSON.stringify(secret)} survived`);
          if (keys.lines.some((line) => line.includes(secret))) assert.ok(text.includes(PRIVATE_KEY_PLACEHOLDER), 'no private key placeholder');
          else assert.ok(text.includes(secretToken(KEY, secret)), `no token for ${JSON.stringify(secret)}`);
        }
        if (transcript.secrets.length === 0) assert.equal(text, expected, 'nothing to redact, so nothing may change');
        else assert.ok((text.match(SECRET_TOKEN)?.length ?? 0) > 0, 'no token');
        // redaction replaces values, it never drops lines (a multi-line key body becomes one line)
        assert.equal(text.split('\n').length, expected.split('\n').length - keys.multiLine + keys.blocks);
        // a token stands exactly where a planted secret stood: never for a keyword, a brace or a name around it
        for (const { line, spans } of tokenSpans(expected, text)) {
          assert.ok(spans !== null, `line ${line} changed beyond its tokens: ${JSON.stringify(text.split('\n')[line - 1])}`);
          for (const span of spans)
            assert.ok(transcript.secrets.includes(span), `line ${line}: a token replaced ${JSON.stringify(span)}, not a planted secret`);
        }
      });
    });
  }
});

describe('privilege steps: Huawei and Comware "super" (the prompt shows no level), ProCurve\'s manager username', () => {
  for (const name of ['huawei-vrp', 'hpe-comware'] as const) {
    test(`${name}: a wrong super password is ENABLE_FAILED although the same prompt comes back`, async () => {
      const { transcript } = recorded(name);
      const sim = await startDevice(transcript);
      try {
        const template = getBuiltinTemplate(name)!;
        const result = await collectConfig({ ...targetFor(sim.port, transcript), enable_secret: 'not-the-super-password' }, template, LIMITS);
        assert.equal(result.ok, false);
        if (result.ok) return;
        assert.equal(result.failure, 'ENABLE_FAILED', result.message);
        assert.match(result.message, /refused the enable secret/);
        assert.ok(!result.message.includes('not-the-super-password'));
      } finally {
        await sim.close();
      }
    });
  }

  test('huawei-vrp: a level-1 login without an enable secret cannot read the configuration: COMMAND_FAILED, nothing stored', async () => {
    const { transcript } = recorded('huawei-vrp');
    const sim = await startDevice(transcript);
    try {
      const result = await collectConfig({ ...targetFor(sim.port, transcript), enable_secret: null }, getBuiltinTemplate('huawei-vrp')!, LIMITS);
      assert.equal(result.ok ? 'ok' : result.failure, 'COMMAND_FAILED');
    } finally {
      await sim.close();
    }
  });
});

describe('strip patterns keep real configuration', () => {
  const REAL_LINES = [
    'hostname core-sw1',
    'ntp server 10.99.0.123 prefer',
    'ntp server vrf MGMT 10.99.0.123 iburst',
    'ntp unicast-server 10.99.0.123 vpn-instance MGMT',
    ' ntp-service unicast-server 10.99.0.123',
    'set system ntp server 10.99.0.123',
    'interface GigabitEthernet1/0/1',
    ' description uplink to dist-sw1',
    'logging host 10.99.0.20',
    'clock timezone CET 1 0',
    'snmp-server location DC1 Row 4 Rack 12',
    '!',
    '#',
    'end',
    'return',
    'set version 21.4R3-S5.4',
    '/system ntp client servers add address=10.99.0.123',
    '    set server "10.99.0.123"',
    '          ntp-server-address 10.99.0.123;',
    '    Neighbor AS:      65001',
  ];

  for (const t of builtinTemplates()) {
    test(`${t.name}: common configuration lines and its own stored text survive`, () => {
      const strip = t.strip_patterns.map((p) => compilePattern(p));
      const lines = [...REAL_LINES, ...recorded(t.name).expected.split('\n')];
      for (const line of lines) {
        const by = strip.find((re) => re.test(line));
        assert.equal(by, undefined, `${JSON.stringify(line)} would be stripped by ${by}`);
      }
    });
  }

  test('the volatile IOS lines are stripped and the configuration around them kept', () => {
    const t = getBuiltinTemplate('cisco-ios') as TemplateSpec;
    const raw = [
      'Building configuration...',
      '',
      'Current configuration : 1234 bytes',
      '! Last configuration change at 09:00:01 UTC Mon Mar 4 2024 by admin',
      'ntp clock-period 17179869',
      'ntp server 10.0.0.1',
      'end',
    ].join('\n');
    assert.equal(applyTemplate(raw, t, { redact: false }), 'ntp server 10.0.0.1\nend\n');
  });
});

describe('paging left on', { concurrency: true }, () => {
  // Templates copied without their paging-off pre-commands: the engine must answer every more prompt itself.
  for (const name of [
    'cisco-ios',
    'cisco-nxos',
    'cisco-asa',
    'arista-eos',
    'juniper-junos',
    'huawei-vrp',
    'hpe-comware',
    'aruba-procurve',
    'fortinet-fortios',
  ]) {
    test(`${name}: output paged at the more prompt is stored complete`, async () => {
      const { transcript, expected } = recorded(name);
      const template: TemplateSpec = { ...(getBuiltinTemplate(name) as TemplateSpec), name: `${name}-paged`, pre_commands: [] };
      const sim = await startDevice(transcript);
      try {
        assertSameText(stored(await collectConfig(targetFor(sim.port, transcript), template, LIMITS)), expected);
      } finally {
        await sim.close();
      }
    });
  }
});

describe('exec templates in the shell fallback', { concurrency: true }, () => {
  // mikrotik-routeros and linux use SSH exec; Telnet (and a shell-mode copy) go through the prompt instead,
  // where RouterOS colours its prompt and bash wraps it in bracketed-paste codes.
  for (const name of ['mikrotik-routeros', 'linux']) {
    test(`${name}: a shell-mode copy over SSH stores the same text`, async () => {
      const { transcript, expected } = recorded(name);
      const template: TemplateSpec = { ...(getBuiltinTemplate(name) as TemplateSpec), mode: 'shell' };
      const sim = await startDevice(transcript);
      try {
        assertSameText(stored(await collectConfig(targetFor(sim.port, transcript), template, LIMITS)), expected);
      } finally {
        await sim.close();
      }
    });

    test(`${name}: over Telnet the exec template falls back to the shell`, async () => {
      const { transcript, expected } = recorded(name);
      const sim = await startTelnetSimulator({ devices: [{ name: transcript.hostname, transcript }], login_prompt: 'Login: ' });
      try {
        const template = getBuiltinTemplate(name) as TemplateSpec;
        assertSameText(stored(await collectConfig(targetFor(sim.port, transcript, 'telnet'), template, LIMITS)), expected);
      } finally {
        await sim.close();
      }
    });
  }
});

describe('validateTemplate rejects', () => {
  const base = getBuiltinTemplate('cisco-ios') as TemplateSpec;
  const fieldsOf = (spec: TemplateSpec) => validateTemplate(spec).map((e) => e.field);
  const long = 'x'.repeat(513);

  const cases: { what: string; change: Partial<TemplateSpec>; field: string }[] = [
    { what: 'a name with capitals and spaces', change: { name: 'Cisco IOS' }, field: 'name' },
    { what: 'a name starting with a dash', change: { name: '-ios' }, field: 'name' },
    { what: 'a 65-character name', change: { name: 'a'.repeat(65) }, field: 'name' },
    { what: 'an empty name', change: { name: '' }, field: 'name' },
    { what: 'an unknown mode', change: { mode: 'telnet' as TemplateSpec['mode'] }, field: 'mode' },
    { what: 'a prompt that does not compile', change: { prompt: '[#>' }, field: 'prompt' },
    { what: 'a prompt matching every line', change: { prompt: '.*' }, field: 'prompt' },
    { what: 'no capture command', change: { commands: [] }, field: 'commands' },
    { what: 'an empty command', change: { commands: [''] }, field: 'commands.0' },
    { what: 'a command with a newline', change: { commands: ['show run\nreload'] }, field: 'commands.0' },
    { what: 'a 513-character command', change: { commands: ['show running-config', long] }, field: 'commands.1' },
    { what: 'a pre-command with a carriage return', change: { pre_commands: ['terminal length 0\r'] }, field: 'pre_commands.0' },
    { what: 'a strip pattern that does not compile', change: { strip_patterns: ['^ok', '(unclosed'] }, field: 'strip_patterns.1' },
    { what: 'a 513-character pattern', change: { ignore_patterns: [long] }, field: 'ignore_patterns.0' },
    { what: 'a lookahead (not RE2 syntax)', change: { strip_patterns: ['^(?!x)y$'] }, field: 'strip_patterns.0' },
    { what: 'a backreference (not RE2 syntax)', change: { ignore_patterns: ['^(a)\\1$'] }, field: 'ignore_patterns.0' },
    {
      what: 'a lookbehind in a redact rule',
      change: { redact_patterns: [{ pattern: '(?<=key )\\S+', replacement: 'x' }] },
      field: 'redact_patterns.0.pattern',
    },
    { what: 'a strip pattern matching every line', change: { strip_patterns: ['.*'] }, field: 'strip_patterns.0' },
    { what: '101 strip patterns', change: { strip_patterns: Array.from({ length: 101 }, (_, i) => `^line${i}$`) }, field: 'strip_patterns' },
    {
      what: 'a redact pattern that does not compile',
      change: { redact_patterns: [{ pattern: '(?<x', replacement: '' }] },
      field: 'redact_patterns.0.pattern',
    },
    {
      what: 'a redact pattern matching the empty string',
      change: { redact_patterns: [{ pattern: 'x*', replacement: '<redacted>' }] },
      field: 'redact_patterns.0.pattern',
    },
    {
      what: 'a replacement with a newline',
      change: { redact_patterns: [{ pattern: 'secret \\S+', replacement: 'a\nb' }] },
      field: 'redact_patterns.0.replacement',
    },
    {
      what: 'an enable password prompt that does not compile',
      change: { enable: { command: 'enable', password_prompt: '*Password', prompt: null } },
      field: 'enable.password_prompt',
    },
    { what: 'a multi-line exit command', change: { exit_command: 'exit\nexit' }, field: 'exit_command' },
  ];

  for (const c of cases) {
    test(c.what, () => {
      const fields = fieldsOf({ ...base, ...c.change });
      assert.ok(fields.includes(c.field), `expected an error on ${c.field}, got ${JSON.stringify(validateTemplate({ ...base, ...c.change }))}`);
    });
  }

  test('every error names its field and says why', () => {
    const errors = validateTemplate({ ...base, name: 'X', commands: [], strip_patterns: ['('] });
    assert.deepEqual(errors.map((e) => e.field).sort(), ['commands', 'name', 'strip_patterns.0']);
    for (const e of errors) assert.ok(e.message.length > 10, e.field);
  });
});

describe('patterns are RE2: linear time whatever the pattern', () => {
  // Each of these backtracks catastrophically in JavaScript on a long non-matching line; RE2 accepts them and stays linear.
  const hostile = ['^ description uplink to the (.|.)*zzz$', '(.|.)*zzz$', '^(a|a)*x$', '(\\w|\\d)+$', '(a+){2,40}$', '(\\w+\\s?){1,30}#$', '^(a+)+$'];
  const line = ' description uplink to the ' + 'a1 '.repeat(3_000) + 'a'.repeat(3_000);
  for (const p of hostile) {
    test(`${p} is accepted and runs in linear time`, () => {
      assert.deepEqual(
        validateTemplate({ ...getBuiltinTemplate('frr')!, name: 'x', strip_patterns: [p] }).map((e) => e.field),
        [],
      );
      const re = compilePattern(p);
      const started = performance.now();
      re.test(line);
      assert.ok(performance.now() - started < 500, `${p} took ${Math.round(performance.now() - started)} ms`);
    });
  }

  test('built-in templates keep their JavaScript-only patterns (trusted code); a custom copy of them still saves', () => {
    const ios = getBuiltinTemplate('cisco-ios') as TemplateSpec;
    assert.ok(
      ios.redact_patterns.some((r) => r.pattern.includes('(?!')),
      'the IOS template uses a lookahead',
    );
    assert.deepEqual(validateTemplate({ ...ios, name: 'my-ios' }), []);
  });

  test('the error names the problem and why RE2', () => {
    const errors = validateTemplate({ ...getBuiltinTemplate('frr')!, name: 'x', strip_patterns: ['(a)\\1'] });
    assert.equal(errors[0].field, 'strip_patterns.0');
    assert.match(errors[0].message, /not valid RE2 syntax: .*backreferences are not supported/);
  });
});
