// Event-driven backups end to end on loopback: real syslog sockets, real runner, simulated devices, real SQLite.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import path from 'node:path';
import { BackupRunner } from '../../src/engine/runner';
import { EventBackups } from '../../src/events/event-backups';
import { startSyslogReceiver, type SyslogReceiver } from '../../src/events/receiver';
import type { AppConfig } from '../../src/config/config';
import { startSimulator, loadTranscript, type RunningSimulator, type SimDevice } from '../sim/simulator';
import { REPO_ROOT, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { updateDevice } from '../../src/features/devices/devices.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { createTestDevice, seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));
const FRR_CHANGE = '<189>Nov 24 10:00:00 r1 bgpd[812]: vty[5]@(vtysh)(config-router)# neighbor 192.0.2.1 remote-as 65002';
const IOS_CHANGE = (user: string) => `<189>12: *Nov 24 10:00:00: %SYS-5-CONFIG_I: Configured from console by ${user} on vty0 (192.0.2.9)`;

let t: TestAppliance;
let sim: RunningSimulator;
let events: EventBackups;
let receiver: SyslogReceiver;
let runner: BackupRunner;
let frrId: number;
let iosId: number;
const simDevice: SimDevice = { name: 'r1', transcript: frr, username: 'r1', password: 'pw-r1-123' };

interface Row {
  id: string;
  trigger: string;
  changed_by: string | null;
  started_at: number;
  finished_at: number | null;
  success: number;
}
const rows = (deviceId: number) =>
  t.services.db
    .prepare('SELECT id, trigger, changed_by, started_at, finished_at, success FROM backups WHERE device_id = ? ORDER BY started_at')
    .all(deviceId) as Row[];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

async function sendUdp(lines: string[], from = '127.0.0.1', gapMs = 0): Promise<void> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, from, () => r()));
  for (const l of lines) {
    await new Promise<void>((r, j) => s.send(l, receiver.udpPort, '127.0.0.1', (e) => (e ? j(e) : r())));
    if (gapMs) await sleep(gapMs);
  }
  s.close();
}

before(async () => {
  t = await startTestAppliance();
  sim = await startSimulator({ devices: [simDevice] });
  const { db, secrets, snapshots } = t.services;
  const cred = seedCredential(db, secrets, { name: 'c-r1', username: 'r1', password: 'pw-r1-123' });
  frrId = seedDevice(db, { name: 'r1', port: sim.port, credential_id: cred, template_id: seedBuiltinTemplate(db, 'frr') });
  // Same address, another template: only its own vendor's messages start its backups (which fail against an FRR shell).
  iosId = seedDevice(db, { name: 'sw1', port: sim.port, credential_id: cred, template_id: seedBuiltinTemplate(db, 'cisco-ios') });
  const config: Readonly<AppConfig> = {
    ...t.services.config,
    events: { ...t.services.config.events, syslog_listen: '127.0.0.1:0', trust_hostname: false, debounce_seconds: 1 },
    backup: { ...t.services.config.backup, retries: 0, command_timeout: 2, login_timeout: 3 },
  };
  runner = new BackupRunner({ db, secrets, snapshots, config });
  events = new EventBackups({ db, runner, config });
  await events.start();
  receiver = await startSyslogReceiver({ listen: '127.0.0.1:0', onMessage: (a, raw) => events.handle(a, raw) });
});
after(async () => {
  await receiver.close();
  await events.stop();
  await sim.close();
  await t.close();
});

test('a burst of 50 change messages gives ONE event backup, started once the burst is quiet for debounce_seconds', async () => {
  const before = rows(frrId).length;
  await sendUdp(
    Array.from({ length: 50 }, () => FRR_CHANGE),
    '127.0.0.1',
    10,
  );
  const lastSent = Date.now();
  assert.equal(events.pendingCount() <= 2, true, 'at most one pending entry per device');
  await until('the event backup', () => rows(frrId).length > before && rows(frrId).at(-1)!.finished_at !== null);
  await sleep(1500);
  const made = rows(frrId).slice(before);
  assert.equal(made.length, 1, 'one backup for the whole burst');
  assert.equal(made[0].trigger, 'event');
  assert.equal(made[0].success, 1);
  assert.equal(made[0].changed_by, null, 'FRR does not name the user');
  assert.ok(made[0].started_at >= lastSent + 900, 'started after the debounce window following the last message');
  assert.equal(rows(iosId).length, 0, 'an FRR message is not a change event of the IOS device');
});

test('the user the message names is recorded as changed_by (several users of one burst, in order)', async () => {
  await sendUdp([IOS_CHANGE('alice'), IOS_CHANGE('bob'), IOS_CHANGE('alice')]);
  await until('the IOS event backup', () => rows(iosId).length === 1 && rows(iosId)[0].finished_at !== null);
  const [r] = rows(iosId);
  assert.equal(r.trigger, 'event');
  assert.equal(r.changed_by, 'alice, bob');
});

test('never two at once: changes during a running event backup give a second backup after the first ends', async () => {
  simDevice.latency_ms = 150;
  try {
    const before = rows(frrId).length;
    await sendUdp([FRR_CHANGE]);
    await until('the first backup to start', () => rows(frrId).length === before + 1);
    await sendUdp([FRR_CHANGE, FRR_CHANGE]);
    await until('two finished backups', () => rows(frrId).length === before + 2 && rows(frrId).every((r) => r.finished_at !== null), 30_000);
    const [a, b] = rows(frrId).slice(before);
    assert.ok(b.started_at >= a.finished_at!, 'the second started after the first finished');
  } finally {
    simDevice.latency_ms = 0;
  }
});

test('a change while another backup of the device runs ("Back up now") is backed up after it, not beside it', async () => {
  // Slow enough that the event backup is due (1 s debounce) while the manual one still runs.
  simDevice.latency_ms = 400;
  try {
    const before = rows(frrId).length;
    const manual = runner.backupDevice(frrId, { trigger: 'manual' });
    await until('the manual backup to start', () => rows(frrId).length === before + 1);
    await sendUdp([FRR_CHANGE]);
    await sleep(1300);
    assert.ok(runner.isRunning(frrId), 'the manual backup still runs when the event backup is due');
    await manual;
    await until('the event backup after it', () => rows(frrId).length === before + 2 && rows(frrId).every((r) => r.finished_at !== null), 30_000);
    const [m, e] = rows(frrId).slice(before);
    assert.equal(m.trigger, 'manual');
    assert.equal(e.trigger, 'event');
    assert.ok(e.started_at >= m.finished_at!, 'the event backup started after the manual one finished');
  } finally {
    simDevice.latency_ms = 0;
  }
});

test('TCP with octet counting is received the same way', async () => {
  const before = rows(frrId).length;
  const s = net.connect(receiver.tcpPort, '127.0.0.1');
  await new Promise<void>((r) => s.once('connect', () => r()));
  const bytes = Buffer.byteLength(FRR_CHANGE);
  s.end(`${bytes} ${FRR_CHANGE}`);
  await until('the event backup from TCP', () => rows(frrId).length === before + 1 && rows(frrId).at(-1)!.finished_at !== null);
  assert.equal(rows(frrId).at(-1)!.trigger, 'event');
});

test('unknown senders are counted, never stored, and start nothing', async () => {
  const before = { unknown: events.counters.unknown_senders, backups: events.counters.backups_started };
  const total = t.services.db.prepare('SELECT count(*) FROM backups').pluck().get() as number;
  await sendUdp([FRR_CHANGE, IOS_CHANGE('mallory'), 'garbage'], '127.0.0.9');
  await until('the receiver to count them', () => events.counters.unknown_senders === before.unknown + 3);
  await sleep(1300);
  assert.equal(events.counters.backups_started, before.backups);
  assert.equal(t.services.db.prepare('SELECT count(*) FROM backups').pluck().get(), total);
});

test('a flood from many addresses keeps one pending entry per device and stays fast', () => {
  const started = performance.now();
  for (let i = 0; i < 100_000; i++) {
    events.handle(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, FRR_CHANGE);
    if (i % 10 === 0) events.handle('127.0.0.1', FRR_CHANGE);
  }
  const ms = performance.now() - started;
  assert.ok(events.pendingCount() <= 2, `pending ${events.pendingCount()}`);
  assert.ok(ms < 5000, `110,000 messages took ${Math.round(ms)} ms`);
});

test('a device added or given a new address while the receiver runs is matched by the very next message', () => {
  const { db } = t.services;
  const refs = {
    credential_id: seedCredential(db, t.services.secrets, { name: 'c-new', username: 'u', password: 'p' }),
    template_id: seedBuiltinTemplate(db, 'frr'),
  };
  const changes = () => events.counters.change_events;
  const before = changes();
  const added = createTestDevice(db, refs, 'added-now', { hostname: '127.0.0.41' }).id;
  events.handle('127.0.0.41', FRR_CHANGE);
  assert.equal(changes(), before + 1, 'the new device matched at once, not after a minute');

  updateDevice(db, SYSTEM_ACTOR, added, { hostname: '127.0.0.42' });
  const unknown = events.counters.unknown_senders;
  events.handle('127.0.0.41', FRR_CHANGE);
  assert.equal(events.counters.unknown_senders, unknown + 1, 'the old address is no longer the device');
  events.handle('127.0.0.42', FRR_CHANGE);
  assert.equal(changes(), before + 2, 'the new address is');

  updateDevice(db, SYSTEM_ACTOR, added, { enabled: false });
  events.handle('127.0.0.42', FRR_CHANGE);
  assert.equal(changes(), before + 2, 'a device disabled a moment ago gets no event backup');
});
