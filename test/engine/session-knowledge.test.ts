// A platform the engine defaults do not know needs a template, not a release (issue #13): each session field and command_output, replayed.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { collectConfig } from '../../src/engine/collect';
import { validateTemplate } from '../../src/templates/index';
import type { TemplateSpec } from '../../src/templates/types';
import type { CollectResult, CollectTarget } from '../../src/engine/types';
import { generateHostKey, loadTranscript, startSimulator, type Transcript } from '../sim/simulator';
import { startTelnetSimulator } from '../sim/telnet-sim';
import { templateWithDefaults } from '../../src/templates/files';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'sim', 'fixtures');
const HOST_KEY = generateHostKey();
/** Short timeouts: without the template field each of these sessions stalls, and the test must say so quickly. */
const LIMITS = { connect_timeout_ms: 5_000, login_timeout_ms: 2_000, command_timeout_ms: 1_500, overall_timeout_ms: 20_000 };

const fixture = (name: string): Transcript => loadTranscript(path.join(FIXTURES, `${name}.json`));

/** The configuration every fixture device holds (its "show config" between the markers). */
const CONFIG = fixture('custom-pager').commands['show config'];

const BASE: TemplateSpec = templateWithDefaults({
  name: 'made-up-os',
  vendor: 'Made-up OS',
  description: 'A platform no engine default knows',
  commands: ['show config'],
  redact: false,
  exit_command: 'exit',
});

/** A custom template (its patterns run as RE2), checked by the validator the API uses. */
function template(extra: Partial<TemplateSpec>): TemplateSpec {
  const spec = { ...BASE, ...extra };
  assert.deepEqual(validateTemplate(spec), []);
  return spec;
}

function target(port: number, t: Transcript, extra: Partial<CollectTarget> = {}): CollectTarget {
  return { host: '127.0.0.1', port, protocol: 'ssh', username: t.username, password: t.password, enable_secret: t.enable?.password ?? null, ...extra };
}

async function overSsh(t: Transcript, spec: TemplateSpec, extra: Partial<CollectTarget> = {}): Promise<CollectResult> {
  const sim = await startSimulator({ devices: [{ name: t.hostname, transcript: t }], host_key: HOST_KEY });
  try {
    return await collectConfig(target(sim.port, t, extra), spec, LIMITS);
  } finally {
    await sim.close();
  }
}

async function overTelnet(t: Transcript, spec: TemplateSpec): Promise<CollectResult> {
  const sim = await startTelnetSimulator({ devices: [{ name: t.hostname, transcript: t }] });
  try {
    return await collectConfig(target(sim.port, t, { protocol: 'telnet' }), spec, LIMITS);
  } finally {
    await sim.close();
  }
}

function stored(result: CollectResult): string {
  if (!result.ok) assert.fail(`collection failed: ${result.failure}: ${result.message}`);
  return result.text;
}

function failure(result: CollectResult): string {
  if (result.ok) assert.fail(`collection succeeded, storing ${JSON.stringify(result.text.slice(0, 80))}`);
  return result.failure;
}

describe('session.pagers: a pager with its own answer key', () => {
  const t = fixture('custom-pager');
  const pager = { pattern: '^\\[n\\]ext page, \\[q\\]uit\\?$', answer: 'n' };

  test('without the template field the pager is not recognised and the command times out', async () => {
    assert.equal(failure(await overSsh(t, BASE)), 'TIMEOUT');
  });

  test("recognised but answered with the defaults' space, the device keeps waiting", async () => {
    assert.equal(failure(await overSsh(t, template({ session: { pagers: [{ ...pager, answer: ' ' }] } }))), 'TIMEOUT');
  });

  test('with the pager and its answer the whole configuration is stored, over SSH and Telnet', async () => {
    const spec = template({ session: { pagers: [pager] } });
    assert.equal(stored(await overSsh(t, spec)), CONFIG);
    assert.equal(stored(await overTelnet(t, spec)), CONFIG);
  });
});

describe('session.press_enter: a line that wants Enter in the middle of output', () => {
  const t = fixture('press-enter-pager');

  test('without the template field the line is not answered and the command times out', async () => {
    assert.equal(failure(await overSsh(t, BASE)), 'TIMEOUT');
  });

  test('with it, Enter (the session newline) is sent and the whole configuration is stored, over SSH and Telnet', async () => {
    const spec = template({ session: { press_enter: ['(?i)hit enter for the next screen'] } });
    assert.equal(stored(await overSsh(t, spec)), CONFIG);
    assert.equal(stored(await overTelnet(t, spec)), CONFIG);
  });
});

describe('session.press_enter: a Telnet console that waits for Enter before its login questions', () => {
  const t = fixture('telnet-press-enter');

  test('without the template field the login never starts', async () => {
    assert.equal(failure(await overTelnet(t, BASE)), 'PROMPT_NOT_FOUND');
  });

  test('with it Enter is sent, the login questions follow and the configuration is stored', async () => {
    assert.equal(stored(await overTelnet(t, template({ session: { press_enter: ['^Hit <Enter> to open the console$'] } }))), CONFIG);
  });
});

describe('session.username_prompt and session.password_prompt: Telnet login questions', () => {
  const t = fixture('custom-login');

  test('without the template fields no login question is recognised', async () => {
    assert.equal(failure(await overTelnet(t, BASE)), 'PROMPT_NOT_FOUND');
  });

  test('with the user name question alone the password question still stops the login', async () => {
    assert.equal(failure(await overTelnet(t, template({ session: { username_prompt: '^Account:\\s*$' } }))), 'PROMPT_NOT_FOUND');
  });

  test('with both the login completes and the configuration is stored', async () => {
    const spec = template({ session: { username_prompt: '^Account:\\s*$', password_prompt: '^Passphrase:\\s*$' } });
    assert.equal(stored(await overTelnet(t, spec)), CONFIG);
  });
});

describe('session.enable_refused: a refused privilege change where the prompt shows no level', () => {
  const t = fixture('enable-refusal');
  const enable = { command: 'super', password_prompt: 'Password:\\s*$', prompt: null, prompt_unchanged: true };
  const base = { commands: ['display current-configuration'], enable, exit_command: 'quit' };

  test('without the template field a wrong secret passes for privilege (the capture is then refused, not the secret)', async () => {
    assert.equal(failure(await overSsh(t, template(base), { enable_secret: 'wrong' })), 'COMMAND_FAILED');
  });

  test('with it a wrong secret is ENABLE_FAILED, and the right one still backs up', async () => {
    const spec = template({ ...base, session: { enable_refused: ['^Privilege raise rejected'] } });
    assert.equal(failure(await overSsh(t, spec, { enable_secret: 'wrong' })), 'ENABLE_FAILED');
    assert.equal(stored(await overSsh(t, spec)), CONFIG);
  });
});

describe('session.command_errors: a refusal line the defaults do not know', () => {
  const t = fixture('command-refusal');
  const wrongCommand = { commands: ['show running-config'] };

  test('without the template field the error message is stored as the configuration', async () => {
    assert.equal(stored(await overSsh(t, template(wrongCommand))), "Command not found. Use '?' for help.\n");
  });

  test('with it the backup fails with COMMAND_FAILED, in shell and exec mode, and good output is still stored', async () => {
    const session = { command_errors: ['^Command not found\\. Use'] };
    for (const mode of ['shell', 'exec'] as const) {
      const result = await overSsh(t, template({ ...wrongCommand, mode, session }));
      assert.equal(failure(result), 'COMMAND_FAILED', mode);
      assert.equal(stored(await overSsh(t, template({ mode, session }))), CONFIG, mode);
    }
  });
});

describe('command_output: cuts per capture command, before strip and redaction', () => {
  const t = fixture('output-cuts');
  const commands = ['show config', 'show inventory'];
  const command_output = {
    'show config': { start_after: '^===== BEGIN CONFIG', stop_before: '^===== END CONFIG' },
    'show inventory': { drop_first: 2, drop_last: 1 },
  };
  const inventory = '1     EDGE-7-24P\n2     EDGE-7-SFP\n';

  test('without it the progress, marker, timing and header lines are stored', async () => {
    const text = stored(await overSsh(t, template({ commands })));
    for (const line of ['Collecting configuration', '===== BEGIN CONFIG', 'Elapsed 0.42 s', 'Slot  Module', '(2 modules, read at'])
      assert.ok(text.includes(line), line);
  });

  test('with it only the configuration and the inventory rows are stored, in shell and exec mode', async () => {
    for (const mode of ['shell', 'exec'] as const) {
      const result = await overSsh(t, template({ commands, mode, command_output }));
      assert.equal(stored(result), CONFIG + inventory, mode);
      assert.ok(result.ok && !result.raw.includes('Elapsed'), `${mode}: raw output is cut too`);
    }
  });

  test('strip patterns still apply to what the cuts keep', async () => {
    const spec = template({ commands, command_output, strip_patterns: ['^ntp server '] });
    assert.equal(stored(await overSsh(t, spec)), CONFIG.replace('ntp server 10.99.0.123\n', '') + inventory);
  });
});
