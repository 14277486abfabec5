// A prompt that changes with every command (Extreme EXOS "X460G2-24t.1 #", then ".2 #") is recognised through the template's prompt regex (issue #14).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { collectConfig } from '../../src/engine/collect';
import { getBuiltinTemplate } from '../../src/templates/index';
import type { TemplateSpec } from '../../src/templates/types';
import type { CollectResult, CollectTarget } from '../../src/engine/types';
import { generateHostKey, loadTranscript, startSimulator, type RunningSimulator } from '../sim/simulator';
import { startTelnetSimulator } from '../sim/telnet-sim';

const TRANSCRIPTS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'sim', 'transcripts');
const LIMITS = { connect_timeout_ms: 5_000, login_timeout_ms: 3_000, command_timeout_ms: 2_000, overall_timeout_ms: 20_000 };
const t = loadTranscript(path.join(TRANSCRIPTS, 'extreme-exos.json'));
const expected = readFileSync(path.join(TRANSCRIPTS, 'extreme-exos.expected.txt'), 'utf8');
const exos = getBuiltinTemplate('extreme-exos') as TemplateSpec;

function target(port: number, protocol: CollectTarget['protocol']): CollectTarget {
  return { host: '127.0.0.1', port, protocol, username: t.username, password: t.password, enable_secret: null };
}

function stored(result: CollectResult): string {
  if (!result.ok) assert.fail(`${result.failure}: ${result.message}`);
  return result.text;
}

describe('extreme-exos: the prompt counts commands', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulator({ devices: [{ name: t.hostname, transcript: t }], host_key: generateHostKey() });
  });
  after(() => sim.close());

  test('the configuration is stored although each prompt differs from the one before', async () => {
    assert.ok(exos, 'extreme-exos is a built-in');
    assert.equal(stored(await collectConfig(target(sim.port, 'ssh'), exos, LIMITS)), expected);
  });

  test('with paging left on the template answers the EXOS pager line on every page', async () => {
    assert.equal(stored(await collectConfig(target(sim.port, 'ssh'), { ...exos, name: 'exos-paged', pre_commands: [] }, LIMITS)), expected);
  });

  test('over Telnet (login: / password:) too', async () => {
    const telnet = await startTelnetSimulator({ devices: [{ name: t.hostname, transcript: t }] });
    try {
      assert.equal(stored(await collectConfig(target(telnet.port, 'telnet'), exos, LIMITS)), expected);
    } finally {
      await telnet.close();
    }
  });

  test("a command EXOS refuses ('%% Invalid input') is a failed backup, not a stored configuration", async () => {
    const result = await collectConfig(target(sim.port, 'ssh'), { ...exos, name: 'exos-typo', commands: ['show configuraton'] }, LIMITS);
    assert.equal(result.ok ? 'stored' : result.failure, 'COMMAND_FAILED');
  });
});
