// Every failure type the engine can meet on loopback, with its reachability and a message free of secrets and config.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { collectConfig } from '../../src/engine/collect';
import type { CollectFailure, CollectLimits, CollectResult, CollectTarget, FailureType } from '../../src/engine/types';
import type { TemplateSpec } from '../../src/templates/types';
import { startSimulator, type RunningSimulator } from '../sim/simulator';
import { FAST_LIMITS, IOS_EXEC_TEMPLATE, IOS_TEMPLATE, fixtureTranscript, iosDevice, target } from '../sim/fixtures/engine-fixtures';

/** Every message produced here is checked for these at the end. */
const SECRETS = ['admin123', 'enablepass', 'wrong-password-xyz', 'wrong-enable-xyz'];
const CONFIG_SNIPPETS = ['s3cretCommunity', 'EnableHashValue0', 'interface GigabitEthernet', 'hostname core-sw1', 'Invalid input'];
const messages: string[] = [];

function failure(r: CollectResult, type: FailureType, reachable: boolean): CollectFailure {
  if (r.ok) assert.fail(`expected ${type}, got success`);
  messages.push(r.message);
  assert.equal(r.failure, type, r.message);
  assert.equal(r.reachable, reachable, `reachable for ${type}: ${r.message}`);
  assert.ok(r.message.length > 10 && r.message.length < 300);
  assert.ok(!r.message.includes('\n'));
  return r;
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

function collect(t: CollectTarget, tpl: TemplateSpec = IOS_TEMPLATE, limits: Partial<CollectLimits> = {}, signal?: AbortSignal) {
  return collectConfig(t, tpl, { ...FAST_LIMITS, ...limits }, { signal });
}

describe('connection failures', () => {
  it('CONNECTION_REFUSED on a closed port', async () => {
    const port = await freePort();
    const r = failure(await collect(target(port)), 'CONNECTION_REFUSED', false);
    assert.equal(r.message, `Connection refused by 127.0.0.1:${port} — is SSH enabled on the device?`);
    assert.equal(r.host_key, null);
  });

  it('DNS_ERROR on a name that cannot exist', async () => {
    const r = failure(await collect({ ...target(22), host: 'core-sw1.invalid' }), 'DNS_ERROR', false);
    assert.match(r.message, /core-sw1\.invalid/);
  });

  it('TIMEOUT (unreachable) on a TCP listener that never speaks', async () => {
    // Reads (and so notices the client leaving) but never says a word.
    const silent = net.createServer((sock) => sock.resume().on('error', () => undefined));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const started = Date.now();
      const r = failure(await collect(target(port), IOS_TEMPLATE, { login_timeout_ms: 800 }), 'TIMEOUT', false);
      assert.ok(Date.now() - started < 3000);
      assert.match(r.message, /no SSH greeting/);
    } finally {
      silent.close();
    }
  });
});

describe('session failures', () => {
  let sim: RunningSimulator;
  let execOff: RunningSimulator;
  before(async () => {
    sim = await startSimulator({
      devices: [
        iosDevice(),
        iosDevice({ name: 'locked-out', failure: 'wrong_password' }),
        iosDevice({ name: 'no-prompt', failure: 'no_prompt' }),
        iosDevice({ name: 'stall', failure: 'stall_mid_output' }),
        iosDevice({ name: 'slow', latency_ms: 1500, chunk_bytes: 256 }),
        iosDevice({ name: 'drop', failure: 'disconnect_mid_output' }),
        iosDevice({ name: 'huge', failure: 'huge_output', huge_output_bytes: 4 * 1024 * 1024 }),
        iosDevice({ name: 'exit1', exec_exit_codes: { 'show running-config': 1 } }),
        iosDevice({ name: 'empty', commands: { 'show running-config': '' } }),
      ],
    });
    execOff = await startSimulator({ devices: [iosDevice({ transcript: { ...fixtureTranscript('ios-like'), exec: false } })] });
  });
  after(async () => {
    await sim.close();
    await execOff.close();
  });

  it('AUTH_FAILED on a wrong password, naming user and methods', async () => {
    const r = failure(await collect(target(sim.port, { username: 'core-sw1', password: 'wrong-password-xyz' })), 'AUTH_FAILED', true);
    assert.equal(r.message, 'Authentication failed for user core-sw1 (password, keyboard-interactive).');
    assert.equal(r.host_key, sim.hostKeyFingerprint);
  });

  it('AUTH_FAILED when the device refuses every login', async () => {
    failure(await collect(target(sim.port, { username: 'locked-out' })), 'AUTH_FAILED', true);
  });

  it('AUTH_FAILED when no method the device offers is configured', async () => {
    const r = failure(await collect(target(sim.port, { username: 'core-sw1', password: null })), 'AUTH_FAILED', true);
    assert.match(r.message, /does not accept any configured login method for user core-sw1/);
  });

  it('PROMPT_NOT_FOUND when the device never shows a prompt', async () => {
    const r = failure(await collect(target(sim.port, { username: 'no-prompt' }), IOS_TEMPLATE, { login_timeout_ms: 2000 }), 'PROMPT_NOT_FOUND', true);
    assert.match(r.message, /no CLI prompt was recognised within 2 s/);
  });

  it('ENABLE_FAILED on a wrong enable secret', async () => {
    const r = failure(await collect(target(sim.port, { username: 'core-sw1', enable_secret: 'wrong-enable-xyz' })), 'ENABLE_FAILED', true);
    assert.match(r.message, /enable secret/);
  });

  it('TIMEOUT (reachable) when the device stops answering mid-output', async () => {
    const r = failure(await collect(target(sim.port, { username: 'stall' })), 'TIMEOUT', true);
    assert.equal(r.message, "The device stopped answering while running 'show running-config' (no output for 1.5 s).");
  });

  it('TIMEOUT when output is slower than the idle timeout', async () => {
    failure(await collect(target(sim.port, { username: 'slow' }), IOS_TEMPLATE, { command_timeout_ms: 700 }), 'TIMEOUT', true);
  });

  it('TIMEOUT for the whole backup when the overall limit is reached', async () => {
    const started = Date.now();
    const r = failure(
      await collect(target(sim.port, { username: 'stall' }), IOS_TEMPLATE, { command_timeout_ms: 10_000, overall_timeout_ms: 700 }),
      'TIMEOUT',
      true,
    );
    assert.match(r.message, /overall time limit/);
    assert.ok(Date.now() - started < 2000);
  });

  it('INTERRUPTED when the caller cancels', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = Date.now();
    failure(await collect(target(sim.port, { username: 'stall' }), IOS_TEMPLATE, { command_timeout_ms: 10_000 }, controller.signal), 'INTERRUPTED', true);
    assert.ok(Date.now() - started < 2000);
  });

  it('INTERRUPTED before connecting when already cancelled', async () => {
    failure(await collect(target(sim.port), IOS_TEMPLATE, {}, AbortSignal.abort()), 'INTERRUPTED', false);
  });

  it('DISCONNECTED when the connection drops mid-output (shell)', async () => {
    const r = failure(await collect(target(sim.port, { username: 'drop' })), 'DISCONNECTED', true);
    assert.equal(r.message, "The device closed the connection while running 'show running-config'.");
  });

  it('DISCONNECTED when the connection drops mid-output (exec)', async () => {
    failure(await collect(target(sim.port, { username: 'drop' }), IOS_EXEC_TEMPLATE), 'DISCONNECTED', true);
  });

  it('OUTPUT_TOO_LARGE over the output cap (shell)', async () => {
    const r = failure(await collect(target(sim.port, { username: 'huge' }), IOS_TEMPLATE, { max_output_bytes: 1024 * 1024 }), 'OUTPUT_TOO_LARGE', true);
    assert.match(r.message, /more than 1 MiB/);
  });

  it('OUTPUT_TOO_LARGE over the output cap (exec)', async () => {
    failure(await collect(target(sim.port, { username: 'huge' }), IOS_EXEC_TEMPLATE, { max_output_bytes: 1024 * 1024 }), 'OUTPUT_TOO_LARGE', true);
  });

  it('COMMAND_FAILED on a non-zero exit status without output (exec)', async () => {
    const r = failure(await collect(target(sim.port, { username: 'exit1' }), IOS_EXEC_TEMPLATE), 'COMMAND_FAILED', true);
    assert.equal(r.message, "'show running-config' failed with exit status 1 and produced no output.");
  });

  it('COMMAND_FAILED when the device refuses exec channels', async () => {
    const r = failure(await collect(target(execOff.port), IOS_EXEC_TEMPLATE), 'COMMAND_FAILED', true);
    assert.match(r.message, /shell-mode template/);
  });

  it('COMMAND_FAILED when the capture leaves no configuration text', async () => {
    const r = failure(await collect(target(sim.port, { username: 'empty' })), 'COMMAND_FAILED', true);
    assert.match(r.message, /returned no configuration text/);
  });

  it('COMMAND_FAILED when the device refuses a capture command: its error message is not a configuration (exec)', async () => {
    const r = failure(await collect(target(sim.port, { username: 'core-sw1' }), { ...IOS_EXEC_TEMPLATE, commands: ['show nonsense'] }), 'COMMAND_FAILED', true);
    assert.match(r.message, /rejected 'show nonsense'/);
  });
});

describe('failure messages', () => {
  it('never contain a password, secret or configuration text', () => {
    assert.ok(messages.length >= 15, `checked ${messages.length} messages`);
    for (const m of messages) {
      for (const s of [...SECRETS, ...CONFIG_SNIPPETS]) assert.ok(!m.includes(s), `message leaks ${JSON.stringify(s)}: ${m}`);
    }
  });

  it('scrub a secret that somehow ends up in a message', async () => {
    const port = await freePort();
    const r = await collect({ ...target(port), host: '127.0.0.1', username: 'x', password: `${port}` });
    assert.equal(r.ok, false);
    if (!r.ok) assert.ok(!r.message.includes(`${port}`) && r.message.includes('********'));
  });
});
