// `confvault serve` with [events] syslog_listen: the receiver starts with the appliance and a change message backs the device up,
// also of a device added while serve runs.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSimulator, loadTranscript, type RunningSimulator } from '../sim/simulator';
import { REPO_ROOT, spawnServe, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { createTestDevice, seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));
let t: TestAppliance;
let sim: RunningSimulator;
before(async () => {
  t = await startTestAppliance();
  sim = await startSimulator({ devices: [{ name: 'r1', transcript: frr, username: 'r1', password: 'pw-r1-123' }] });
});
after(async () => {
  await sim.close();
  await t.close();
});

/** `serve` with the receiver on a free port (debounce 1 s); resolves once it logged that port. */
async function serveWithSyslog(confName: string) {
  const conf = path.join(t.dir, confName);
  writeFileSync(conf, ['[server]', 'listen = "127.0.0.1:0"', '', '[events]', 'syslog_listen = "127.0.0.1:0"', 'debounce_seconds = 1', ''].join('\n'));
  const served = await spawnServe(['--config', conf, '--data-dir', t.services.dataDir], { CONFVAULT_LOG_LEVEL: 'info' });
  let port = 0;
  for (const deadline = Date.now() + 10_000; !port && Date.now() < deadline; await sleep(50)) {
    port = Number(/"msg":"syslog receiver listening"/.test(served.output().stdout) && /"udp_port":(\d+)/.exec(served.output().stdout)?.[1]);
  }
  if (!port) await served.stop();
  assert.ok(port, `serve logs the receiver's port:\n${served.output().stdout}`);
  return { served, port };
}

/** One FRR configuration command as syslog over UDP from 127.0.0.1. */
async function sendChange(port: number, route: string): Promise<void> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  await new Promise<void>((r, j) =>
    s.send(`<29>Nov 24 10:00:00 r1 staticd[71]: [M7Q4P-46WDR] vty[14]@(config)# ip route ${route} Null0`, port, '127.0.0.1', (e) => (e ? j(e) : r())),
  );
  s.close();
}

async function eventBackupOf(deviceId: number): Promise<{ trigger: string; success: number } | undefined> {
  const q = t.services.db.prepare("SELECT trigger, success FROM backups WHERE device_id = ? AND trigger = 'event' AND finished_at IS NOT NULL");
  let row: { trigger: string; success: number } | undefined;
  for (const deadline = Date.now() + 20_000; !row && Date.now() < deadline; await sleep(100)) row = q.get(deviceId) as typeof row;
  return row;
}

const refs = (credential: string) => ({
  credential_id: seedCredential(t.services.db, t.services.secrets, { name: credential, username: 'r1', password: 'pw-r1-123' }),
  template_id: seedBuiltinTemplate(t.services.db, 'frr'),
});

test('serve receives syslog on [events] syslog_listen and records an event backup', { timeout: 60_000 }, async () => {
  const id = seedDevice(t.services.db, { name: 'r1', port: sim.port, ...refs('c') });
  const { served, port } = await serveWithSyslog('appliance.conf');
  try {
    assert.match(served.output().stdout, /"udp_receive_buffer_kb":4096,"udp_receive_buffer_granted_kb":\d+/, 'the buffer asked for and granted');
    await sendChange(port, '203.0.113.77/32');
    assert.deepEqual(await eventBackupOf(id), { trigger: 'event', success: 1 });
  } finally {
    assert.equal(await served.stop(), 0, 'serve stops cleanly with the receiver running');
  }
});

test('a device added while serve runs is backed up on a change message sent right after adding it', { timeout: 60_000 }, async () => {
  const { served, port } = await serveWithSyslog('appliance-added.conf');
  try {
    // Added (by another process, as the CLI or a second server would) after serve loaded its devices.
    const id = createTestDevice(t.services.db, refs('c-added'), 'added-while-running', { hostname: '127.0.0.1', port: sim.port }).id;
    await sendChange(port, '203.0.113.78/32');
    assert.deepEqual(await eventBackupOf(id), { trigger: 'event', success: 1 }, 'the change was not missed');
  } finally {
    assert.equal(await served.stop(), 0);
  }
});
