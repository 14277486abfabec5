// The syslog receiver's UDP socket: the receive buffer of [events] udp_receive_buffer_kb, and datagrams the kernel
// dropped (buffer full while the process was busy) counted on /metrics.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { BackupRunner } from '../../src/engine/runner';
import { startSyslogReceiver } from '../../src/events/receiver';
import { startEventBackups, type RunningEvents } from '../../src/events/start';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';

const procValue = (file: string) => {
  try {
    return Number(readFileSync(file, 'utf8').trim());
  } catch {
    return NaN;
  }
};

/** Sends `count` datagrams of 200 bytes to the port from another process, as fast as it can, and waits until it is done. */
function floodFromChild(port: number, count: number): void {
  const script = `const s=require('dgram').createSocket('udp4');const b=Buffer.alloc(200,120);let n=0;
    const next=()=>{if(n>=${count})return s.close();n++;s.send(b,${port},'127.0.0.1',next)};next();`;
  const r = spawnSync(process.execPath, ['-e', script], { timeout: 30_000 });
  assert.equal(r.status, 0, String(r.stderr));
}

let t: TestAppliance;
let running: RunningEvents | null = null;
before(async () => {
  t = await startTestAppliance();
});
after(async () => {
  await running?.stop();
  await t.close();
});

test('the UDP receive buffer is the one asked for (up to net.core.rmem_max), larger than the kernel default', async (ctx) => {
  const rmemMax = procValue('/proc/sys/net/core/rmem_max');
  const rmemDefault = procValue('/proc/sys/net/core/rmem_default');
  if (!(rmemMax > rmemDefault)) return ctx.skip('net.core.rmem_max is not above the default here');
  const plain = await startSyslogReceiver({ listen: '127.0.0.1:0', onMessage: () => undefined });
  const asked = await startSyslogReceiver({ listen: '127.0.0.1:0', onMessage: () => undefined, udpReceiveBufferBytes: 4096 * 1024 });
  try {
    assert.ok(asked.udpReceiveBuffer > plain.udpReceiveBuffer, `${asked.udpReceiveBuffer} > ${plain.udpReceiveBuffer}`);
    assert.ok(asked.udpReceiveBuffer >= Math.min(4096 * 1024, rmemMax), 'granted up to the cap');
  } finally {
    await plain.close();
    await asked.close();
  }
});

test('datagrams the kernel drops while the server is busy are counted on /metrics', async (ctx) => {
  if (!existsSync('/proc/net/udp')) return ctx.skip('no /proc/net/udp (not Linux)');
  const config = { ...t.services.config, events: { ...t.services.config.events, syslog_listen: '127.0.0.1:0', udp_receive_buffer_kb: 0 } };
  const services = { ...t.services, config };
  running = await startEventBackups(services, new BackupRunner(services));
  assert.ok(running, 'the receiver started');
  // The server's event loop is held while another process sends: the kernel's default buffer overflows.
  floodFromChild(running.udpPort, 20_000);
  const key = await t.keyFor({ permissions: ['dashboard.view'] });
  let text = '';
  const value = (name: string, labels = '') => Number(new RegExp(`^${name}${labels.replace(/[{}"]/g, '\\$&')} (\\d+)$`, 'm').exec(text)?.[1]);
  const counted = () => value('confvault_syslog_udp_dropped') + value('confvault_syslog_messages', '{transport="udp"}');
  // The datagrams the kernel kept are read once the loop runs again: scrape until all are accounted for (bounded).
  for (let i = 0; i < 50 && counted() !== 20_000; i++) {
    const res = await t.api('/metrics', { key });
    assert.equal(res.status, 200);
    text = await res.text();
    if (counted() !== 20_000) await new Promise((r) => setTimeout(r, 100));
  }
  const dropped = value('confvault_syslog_udp_dropped');
  assert.ok(dropped > 0, `some datagrams dropped (got ${dropped})`);
  assert.equal(counted(), 20_000, 'every datagram sent is either received or counted as dropped');
  assert.ok(value('confvault_syslog_udp_receive_buffer_bytes') > 0);
});
