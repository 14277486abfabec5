// Engine fixes from real device sessions (issue #13): prompts redrawn without a newline, pagers glued to text, FortiOS HA prompts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { collectConfig } from '../../src/engine/collect';
import { TerminalScreen } from '../../src/engine/normalise';
import { compilePattern } from '../../src/templates/patterns';
import { getBuiltinTemplate } from '../../src/templates/index';
import type { TemplateSpec } from '../../src/templates/types';
import type { CollectResult, CollectTarget } from '../../src/engine/types';
import { ARUBA_SCROLL } from '../sim/device-shell';
import { IOS_TEMPLATE, fixtureTranscript } from '../sim/fixtures/engine-fixtures';
import { generateHostKey, loadTranscript, startSimulator, type Transcript } from '../sim/simulator';
import { startTelnetSimulator } from '../sim/telnet-sim';
import { templateWithDefaults } from '../../src/templates/files';

const SIM = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'sim');
const HOST_KEY = generateHostKey();
/** Short command timeout: the old engine timed out on each of these sessions, and a test must say so quickly. */
const LIMITS = { connect_timeout_ms: 5_000, login_timeout_ms: 5_000, command_timeout_ms: 2_500, overall_timeout_ms: 20_000 };

function target(port: number, t: Transcript, protocol: CollectTarget['protocol'] = 'ssh'): CollectTarget {
  return { host: '127.0.0.1', port, protocol, username: t.username, password: t.password, enable_secret: t.enable?.password ?? null };
}

function stored(result: CollectResult): string {
  if (!result.ok) assert.fail(`collection failed: ${result.failure}: ${result.message}`);
  return result.text;
}

async function backUp(t: Transcript, template: TemplateSpec): Promise<CollectResult> {
  const sim = await startSimulator({ devices: [{ name: t.hostname, transcript: t }], host_key: HOST_KEY });
  try {
    return await collectConfig(target(sim.port, t), template, LIMITS);
  } finally {
    await sim.close();
  }
}

function expectedText(name: string): string {
  return readFileSync(path.join(SIM, 'transcripts', `${name}.expected.txt`), 'utf8');
}

describe('terminal model: a line ended by escape codes instead of CR/LF', () => {
  test('ArubaOS-Switch scroll (delete the top row, insert one at the bottom) completes the echoed line', () => {
    const screen = new TerminalScreen();
    screen.feed('\x1b[1;24r\x1b[24;1H\x1b[2Kacc-sw2# \x1b[24;1H\x1b[24;10H\x1b[?25hno page');
    screen.feed(ARUBA_SCROLL + '\x1b[1;24r\x1b[24;1H\x1b[2Kacc-sw2# \x1b[24;1H\x1b[24;10H\x1b[?25h');
    assert.deepEqual(screen.lines, ['acc-sw2# no page']);
    assert.equal(screen.current.trim(), 'acc-sw2#');
  });

  test('the shape real 2930s send on a 232-row terminal (row 1000 = "the bottom", echo typed with cursor addressing)', () => {
    // Shape of the session in netmiko issue #1751 (Aruba 2530, 16.x): every key echoed at an addressed column,
    // Enter answered by the delete-top-row / insert-bottom-row scroll, the prompt redrawn on the bottom row.
    const screen = new TerminalScreen();
    const prompt = (p: string, col: number) =>
      `\x1b[1;232r\x1b[1000;1H\x1b[232;1H\x1b[2K\x1b[1000;1H\x1b[?25h\x1b[1000;1H\x1b[232;1H${p} \x1b[1000;1H\x1b[232;${col}H`;
    screen.feed(prompt('SW002#', 8));
    screen.feed('\x1b[232;8Hend\x1b[1000;8H\x1b[?25h\x1b[1000;11H');
    screen.feed('\x1b[1;0H\x1b[1M\x1b[232;1H\x1b[1L\x1b[1000;11H\x1b[232;1H\x1b[2K\x1b[1000;1H\x1b[?25h' + prompt('SW002#', 8));
    assert.deepEqual(screen.lines, ['SW002# end']);
    assert.equal(screen.current.trim(), 'SW002#');
  });

  test('a prompt redrawn over the echo (bottom row, erase, draw) leaves the echo as wiped, not as output', () => {
    const screen = new TerminalScreen();
    screen.feed('\x1b[24;1H\x1b[2Ksw1# terminal width 1920\x1b[24;1H\x1b[2Ksw1# ');
    assert.equal(screen.lineCount, 0);
    assert.deepEqual(screen.wiped, ['sw1# terminal width 1920']);
    assert.equal(screen.current, 'sw1# ');
    screen.takeLines();
    assert.deepEqual(screen.wiped, []);
  });

  test('cursor addressing on one row alone does not end the line (ProCurve pager and prompt redraws)', () => {
    const screen = new TerminalScreen();
    screen.feed('\x1b[24;1H-- MORE --\x1b[24;1H\x1b[24;12H\x1b[24;1H\x1b[2Kline');
    assert.equal(screen.lineCount, 0);
    assert.equal(screen.current, 'line');
  });
});

describe('prompt redrawn without a newline (Aruba 2930, WC.16.11)', () => {
  const aruba = loadTranscript(path.join(SIM, 'transcripts', 'aruba-procurve.json'));
  const template = getBuiltinTemplate('aruba-procurve')!;

  test('the recorded session scrolls with escape codes on Enter, never CR/LF', () => {
    assert.equal(aruba.enter_echo, 'ansi_scroll');
  });

  test('SSH: manager login, "no page" and "terminal width 1920" print nothing, and the backup is stored', async () => {
    assert.equal(stored(await backUp(aruba, template)), expectedText('aruba-procurve'));
  });

  test('Telnet: the same session over Telnet is stored too', async () => {
    const sim = await startTelnetSimulator({ devices: [{ name: aruba.username, transcript: aruba }] });
    try {
      const result = await collectConfig(target(sim.port, aruba, 'telnet'), template, LIMITS);
      assert.equal(stored(result), expectedText('aruba-procurve'));
    } finally {
      await sim.close();
    }
  });

  test('a CLI that draws the next prompt over the echo (no scroll at all): commands, enable and capture still finish', async () => {
    const plain = fixtureTranscript('ios-like');
    const redrawn: Transcript = { ...plain, enter_echo: 'none' };
    const expected = stored(await backUp(plain, IOS_TEMPLATE));
    const started = Date.now();
    assert.equal(stored(await backUp(redrawn, IOS_TEMPLATE)), expected);
    assert.ok(Date.now() - started < LIMITS.command_timeout_ms, 'waited for a timeout instead of seeing the prompt');
  });
});

describe('pager glued to the end of a line (Netgate TNSR 23.06)', () => {
  const tnsr = loadTranscript(path.join(SIM, 'fixtures', 'tnsr-glued-pager.json'));
  const template: TemplateSpec = templateWithDefaults({
    name: 'test-tnsr',
    vendor: 'Test TNSR-like',
    description: 'Fixture: paging left on, so every page ends in a glued --More--',
    commands: ['show configuration running cli'],
    redact: false,
    exit_command: 'exit',
  });

  test('every page is answered and the text the pager was glued to is kept', async () => {
    const output = tnsr.commands['show configuration running cli'];
    assert.ok(output.split('\n').length > 80, 'the fixture must span more than four pages');
    assert.equal(stored(await backUp(tnsr, template)), output);
  });

  test('"--More--" written inside a configuration line is text, not a pager', () => {
    const screen = new TerminalScreen();
    screen.feed(' description "see --More-- docs"\r\n');
    assert.deepEqual(screen.lines, [' description "see --More-- docs"']);
  });
});

describe('FortiOS 7.6 HA member prompt "name(Primary) # "', () => {
  const template = getBuiltinTemplate('fortinet-fortios')!;

  test('the built-in prompt pattern matches HA member prompts and keeps matching the others', () => {
    const prompt = compilePattern(template.prompt!);
    for (const p of ['FGT60F-BR1(Primary) # ', 'FGT60F-BR1(Secondary) # ', 'FGT-HQ(Primary) (global) # ', 'FGT-HQ # ', 'FGT-HQ (console) # ', 'ro-admin $ ']) {
      assert.ok(prompt.test(p), p);
    }
    for (const p of ['set hostname "FGT60F-BR1"', 'FGT-HQ(Primary)', '    set password ENC x']) assert.ok(!prompt.test(p), p);
  });

  test('the HA cluster member is backed up at once, without waiting for the Enter nudge', async () => {
    const ha = loadTranscript(path.join(SIM, 'fixtures', 'fortios-ha.json'));
    const started = Date.now();
    const result = await backUp(ha, template);
    assert.equal(stored(result), expectedText('fortinet-fortios'));
    // The nudge fallback presses Enter after 1.5 s of quiet; a recognised prompt needs only the 0.1 s settle.
    assert.ok(Date.now() - started < 1_200, `took ${Date.now() - started} ms: the prompt was not recognised`);
  });
});
