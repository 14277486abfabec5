// less's ":" between pages is answered once the output is quiet, even when no more data follows it (issue #14).
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { collectConfig } from '../../src/engine/collect';
import { getBuiltinTemplate } from '../../src/templates/index';
import type { TemplateSpec } from '../../src/templates/types';
import { generateHostKey, loadTranscript, startSimulator } from '../sim/simulator';
import { startTelnetSimulator } from '../sim/telnet-sim';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'sim', 'fixtures');
const LIMITS = { connect_timeout_ms: 5_000, login_timeout_ms: 3_000, command_timeout_ms: 2_000, overall_timeout_ms: 20_000 };

describe("less's ':' pager with paging left on", () => {
  const t = loadTranscript(path.join(FIXTURES, 'less-pager.json'));
  const vyos = getBuiltinTemplate('vyos');
  assert.ok(vyos);
  /** A copy of the vyos template that leaves the pager on. */
  const spec: TemplateSpec = { ...vyos, name: 'vyos-paged', pre_commands: [], redact: false };
  const expected = t.commands['show configuration commands'].trimEnd();
  const target = (port: number, protocol: 'ssh' | 'telnet') => ({
    host: '127.0.0.1',
    port,
    protocol,
    username: t.username,
    password: t.password,
    enable_secret: null,
  });

  test('over SSH every page is fetched and the whole configuration stored', async () => {
    const sim = await startSimulator({ devices: [{ name: t.hostname, transcript: t }], host_key: generateHostKey() });
    try {
      const result = await collectConfig(target(sim.port, 'ssh'), spec, LIMITS);
      if (!result.ok) assert.fail(`${result.failure}: ${result.message}`);
      assert.equal(result.text.trimEnd(), expected);
    } finally {
      await sim.close();
    }
  });

  test('over Telnet too', async () => {
    const sim = await startTelnetSimulator({ devices: [{ name: t.hostname, transcript: t }] });
    try {
      const result = await collectConfig(target(sim.port, 'telnet'), spec, LIMITS);
      if (!result.ok) assert.fail(`${result.failure}: ${result.message}`);
      assert.equal(result.text.trimEnd(), expected);
    } finally {
      await sim.close();
    }
  });
});
