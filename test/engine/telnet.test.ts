// Telnet: option negotiation and IAC removal, in-band login, capture and its failures.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { collectConfig } from '../../src/engine/collect';
import { TelnetFilter } from '../../src/engine/transports/telnet';
import type { CollectResult } from '../../src/engine/types';
import { startTelnetSimulator, type RunningTelnetSimulator } from '../sim/telnet-sim';
import { startSimulator } from '../sim/simulator';
import { FAST_LIMITS, IOS_EXEC_TEMPLATE, IOS_TEMPLATE, iosDevice, target } from '../sim/fixtures/engine-fixtures';

describe('TelnetFilter', () => {
  function run(chunks: number[][]): { data: number[]; replies: number[][] } {
    const replies: number[][] = [];
    const filter = new TelnetFilter((b) => replies.push([...b]));
    const data: number[] = [];
    for (const c of chunks) data.push(...filter.filter(Buffer.from(c)));
    return { data, replies };
  }

  it('accepts the device echoing and suppressing go-ahead (character mode), refuses every other option', () => {
    // DO TERMINAL-TYPE, WILL ECHO, WILL SGA, DO SGA, DO NAWS, WILL STATUS, then data
    const r = run([[255, 253, 24, 255, 251, 1, 255, 251, 3, 255, 253, 3, 255, 253, 31, 255, 251, 5, 65]]);
    assert.deepEqual(r.replies, [
      [255, 252, 24], // WONT TERMINAL-TYPE
      [255, 253, 1], // DO ECHO
      [255, 253, 3], // DO SGA
      [255, 251, 3], // WILL SGA
      [255, 252, 31], // WONT NAWS
      [255, 254, 5], // DONT STATUS
    ]);
    assert.deepEqual(r.data, [65]);
  });

  it('answers only changes of state: a repeated offer gets no reply, a withdrawn one is acknowledged once', () => {
    const r = run([
      [255, 251, 1, 255, 251, 1], // WILL ECHO twice
      [255, 252, 1, 255, 252, 1], // WONT ECHO twice
      [255, 252, 3, 255, 254, 24], // WONT/DONT of options never enabled
    ]);
    assert.deepEqual(r.replies, [
      [255, 253, 1], // DO ECHO, once
      [255, 254, 1], // DONT ECHO, once
    ]);
  });

  it('skips subnegotiation, including an escaped 0xff inside it', () => {
    const r = run([[65, 255, 250, 24, 1, 255, 255, 7, 255, 240, 66]]);
    assert.deepEqual(r.data, [65, 66]);
  });

  it('keeps state across chunk boundaries', () => {
    const r = run([[65, 255], [253], [31, 66, 255, 250], [24, 1, 255], [240, 67]]);
    assert.deepEqual(r.data, [65, 66, 67]);
    assert.deepEqual(r.replies, [[255, 252, 31]]);
  });

  it('turns IAC IAC into one 0xff data byte and drops NOP/GA', () => {
    const r = run([[65, 255, 255, 66, 255, 241, 255, 249, 67]]);
    assert.deepEqual(r.data, [65, 255, 66, 67]);
  });
});

describe('Telnet capture', () => {
  let telnet: RunningTelnetSimulator;
  let linuxStyle: RunningTelnetSimulator;
  let sshText = '';
  before(async () => {
    telnet = await startTelnetSimulator({ devices: [iosDevice(), iosDevice({ name: 'locked-out', failure: 'wrong_password' })] });
    linuxStyle = await startTelnetSimulator({ devices: [iosDevice()], login_prompt: 'core-sw1 login: ' });
    const ssh = await startSimulator({ devices: [iosDevice()] });
    const r = await collectConfig(target(ssh.port), IOS_TEMPLATE, FAST_LIMITS);
    await ssh.close();
    assert.ok(r.ok);
    sshText = r.text;
  });
  after(async () => {
    await telnet.close();
    await linuxStyle.close();
  });

  const telnetTarget = (port: number, extra = {}) => target(port, { protocol: 'telnet', ...extra });
  const failed = (r: CollectResult) => (r.ok ? assert.fail('expected a failure') : r);

  it('logs in through Username:/Password:, enables and captures the same text as SSH', async () => {
    const r = await collectConfig(telnetTarget(telnet.port, { username: 'core-sw1' }), IOS_TEMPLATE, FAST_LIMITS);
    assert.ok(r.ok, r.ok ? '' : r.message);
    assert.equal(r.text, sshText);
    assert.equal(r.host_key, null);
  });

  it('logs in through "<host> login:"', async () => {
    const r = await collectConfig(telnetTarget(linuxStyle.port), IOS_TEMPLATE, FAST_LIMITS);
    assert.ok(r.ok, r.ok ? '' : r.message);
    assert.equal(r.text, sshText);
  });

  it('runs an exec-mode template through the shell', async () => {
    const r = await collectConfig(telnetTarget(telnet.port, { username: 'core-sw1' }), IOS_EXEC_TEMPLATE, FAST_LIMITS);
    assert.ok(r.ok, r.ok ? '' : r.message);
    assert.equal(r.text, sshText);
  });

  it('fails with AUTH_FAILED on a wrong password, without the password in the message', async () => {
    const r = failed(await collectConfig(telnetTarget(telnet.port, { username: 'core-sw1', password: 'wrong-password-xyz' }), IOS_TEMPLATE, FAST_LIMITS));
    assert.equal(r.failure, 'AUTH_FAILED');
    assert.equal(r.reachable, true);
    assert.equal(r.message, 'Authentication failed for user core-sw1 (telnet login).');
  });

  it('fails with AUTH_FAILED when the device refuses every login', async () => {
    const r = failed(await collectConfig(telnetTarget(telnet.port, { username: 'locked-out' }), IOS_TEMPLATE, FAST_LIMITS));
    assert.equal(r.failure, 'AUTH_FAILED');
  });

  it('fails with CONNECTION_REFUSED naming Telnet', async () => {
    const srv = net.createServer();
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const { port } = srv.address() as AddressInfo;
    await new Promise<void>((resolve) => srv.close(() => resolve()));
    const r = failed(await collectConfig(telnetTarget(port), IOS_TEMPLATE, FAST_LIMITS));
    assert.equal(r.failure, 'CONNECTION_REFUSED');
    assert.match(r.message, /is Telnet enabled/);
  });

  it('fails with TIMEOUT (unreachable) when the port accepts but never speaks', async () => {
    const silent = net.createServer((sock) => sock.resume().on('error', () => undefined));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const r = failed(await collectConfig(telnetTarget(port), IOS_TEMPLATE, { ...FAST_LIMITS, login_timeout_ms: 800 }));
      assert.equal(r.failure, 'TIMEOUT');
      assert.equal(r.reachable, false);
    } finally {
      silent.close();
    }
  });
});
