// A collector's syslog listener over real UDP on loopback, forwarding to the central over real HTTP: only its zone's change events queue backups.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createLogger } from '../../src/lib/logger';
import { REPO_ROOT, startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { startSimulator, loadTranscript, type RunningSimulator } from '../sim/simulator';
import { setZone } from '../../src/features/collectors/collectors.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { saveIdentity } from '../../src/collector/identity';
import { HEADERS, PROTOCOL_VERSION } from '../../src/lib/collector-protocol';
import { EVENT_SPOOL_DIR, SyslogForwarder } from '../../src/collector/syslog-forward';
import { startCollectorEvents, type RunningCollectorEvents } from '../../src/events/start';
import type { EventBackups } from '../../src/events/event-backups';
import { createApp } from '../../src/app/app';
import { startServer, type RunningServer } from '../../src/app/server';
import { enrol, signedPost, spawnConfvault, until, type CollectorChild, type EnrolledCollector } from './harness';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));
const FRR_CHANGE = '<189>Nov 24 10:00:00 r1 bgpd[812]: vty[5]@(vtysh)(config-router)# neighbor 192.0.2.1 remote-as 65002';
const NOT_A_CHANGE = '<189>Nov 24 10:00:00 r1 zebra[90]: interface eth1 link down';
const PASSWORD = 'pw-syslog-site-2718';
const ZONE = 'syslog-a';

let t: TestAppliance;
let sim: RunningSimulator;
let site: string;
let collectorEvents: RunningCollectorEvents;
let run: CollectorChild;
let udpPort: number;
let restarted: RunningServer | undefined;
let enrolled: EnrolledCollector;
const children = new Set<ChildProcess>();
const ids = { inZone: 0, otherZone: 0, central: 0 };

const events = (): EventBackups => {
  const e = collectorEvents.events();
  assert.ok(e, 'the central has event backups for forwarded syslog');
  return e;
};
const backups = (deviceId: number) =>
  t.services.db.prepare('SELECT trigger, success FROM backups WHERE device_id = ? ORDER BY started_at').all(deviceId) as { trigger: string; success: number }[];
const queued = (deviceId: number) => t.services.db.prepare('SELECT count(*) FROM collector_work WHERE device_id = ?').pluck().get(deviceId) as number;

/** One datagram to the collector's listener from `from` (any 127/8 address is this host's). */
async function sendFrom(from: string, line: string): Promise<void> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, from, () => r()));
  await new Promise<void>((r, j) => s.send(line, udpPort, '127.0.0.1', (e) => (e ? j(e) : r())));
  s.close();
}

before(async () => {
  t = await startTestAppliance({ CONFVAULT_COLLECTOR_POLL_SECONDS: '1' });
  sim = await startSimulator({ devices: [{ name: 'r1', transcript: frr, username: 'r1', password: PASSWORD }] });
  const { db, secrets } = t.services;
  const credential_id = seedCredential(db, secrets, { name: 'c-r1', username: 'r1', password: PASSWORD });
  const template_id = seedBuiltinTemplate(db, 'frr');
  ids.inZone = seedDevice(db, { name: 'zone-r1', port: sim.port, credential_id, template_id });
  ids.otherZone = seedDevice(db, { name: 'other-r1', hostname: '127.0.0.3', port: sim.port, credential_id, template_id });
  ids.central = seedDevice(db, { name: 'central-r1', hostname: '127.0.0.5', port: sim.port, credential_id, template_id });
  setZone(db, SYSTEM_ACTOR, { device: 'zone-r1' }, ZONE);
  setZone(db, SYSTEM_ACTOR, { device: 'other-r1' }, 'syslog-b');

  // The central's side exactly as `serve` wires it (no local receiver), events debounced 0 s to keep the test short.
  const config = t.services.config;
  collectorEvents = startCollectorEvents({ ...t.services, config: { ...config, events: { ...config.events, debounce_seconds: 0 } } }, t.services.runner, null);
  t.services.collectorEvents = collectorEvents.sink;

  site = path.join(tempDir('confvault-syslog-site-'), 'data');
  enrolled = await enrol(t, ZONE, 'syslog-a-1');
  saveIdentity(site, { central_url: t.url, collector_id: enrolled.id, name: 'syslog-a-1', zone: ZONE, keys: enrolled.keys });
  const conf = path.join(site, '..', 'appliance.conf');
  writeFileSync(conf, '[collector]\nsyslog_listen = "127.0.0.1:0"\n');
  run = spawnConfvault(['collector', 'run', '--data-dir', site, '--config', conf], children);
  udpPort = await until(
    'the collector’s syslog listener',
    () => {
      const line = run
        .output()
        .split('\n')
        .find((l) => l.includes('syslog receiver listening'));
      return line ? (JSON.parse(line) as { udp_port: number }).udp_port : undefined;
    },
    run.output,
  );
});
after(async () => {
  for (const c of children) c.kill('SIGKILL');
  await collectorEvents?.stop();
  await restarted?.close();
  await sim?.close();
  await t?.close();
});

test('a change message at the collector’s listener: the central queues the device for the collector, which backs it up (trigger event)', async () => {
  await sendFrom('127.0.0.1', NOT_A_CHANGE);
  await sendFrom('127.0.0.1', FRR_CHANGE);
  const stored = await until('the event backup stored through the collector', () => backups(ids.inZone).find((b) => b.success === 1), run.output);
  assert.equal(stored.trigger, 'event');
  assert.equal(backups(ids.inZone).length, 1, 'one backup for the change; the link-down line is no change');
  assert.equal(events().counters.change_events, 1);
  assert.equal(queued(ids.inZone), 0, 'the work is done');
  // Queued once and done: not handed to the runner, whose "skipped, queued for the collector" requeued it every second.
  assert.deepEqual([events().counters.backups_started, events().pendingCount()], [1, 0]);
});

test('a change message from a device of another zone, or of the central, is dropped and counted: nothing queued, nothing run', async () => {
  const before = { ...events().counters };
  await sendFrom('127.0.0.3', FRR_CHANGE);
  await sendFrom('127.0.0.5', FRR_CHANGE);
  await until('both received at the central', () => (events().counters.received === before.received + 2 ? true : undefined), run.output);
  assert.equal(events().counters.other_zone, before.other_zone + 2, 'both counted as another zone’s');
  assert.equal(events().counters.change_events, before.change_events);
  assert.equal(events().pendingCount(), 0);
  assert.deepEqual([queued(ids.otherZone), queued(ids.central)], [0, 0]);
  assert.deepEqual([backups(ids.otherZone), backups(ids.central)], [[], []]);
});

test('a message from an address that is no device queues nothing', async () => {
  const before = { ...events().counters };
  await sendFrom('127.0.0.4', FRR_CHANGE);
  await until('the message received at the central', () => (events().counters.received === before.received + 1 ? true : undefined), run.output);
  assert.equal(events().counters.unknown_senders, before.unknown_senders + 1);
  assert.equal(events().counters.change_events, before.change_events);
  assert.equal(events().pendingCount(), 0);
  assert.equal(t.services.db.prepare('SELECT count(*) FROM collector_work').pluck().get(), 0);
});

test('POST /collector/v1/events: signed, answered with what the central made of the batch; a malformed or oversized batch is refused', async () => {
  const ok = await signedPost(t, enrolled, '/events', { events: [{ address: '127.0.0.3', at: Date.now(), raw: FRR_CHANGE }] });
  assert.equal(ok.status, 200);
  assert.deepEqual(await ok.json(), { received: 1, change_events: 0, other_zone: 1, unknown_senders: 0, malformed: 0 });
  const event = { address: '127.0.0.1', at: Date.now(), raw: NOT_A_CHANGE };
  for (const events of [[{ ...event, address: 'not-an-address' }], [{ ...event, raw: 'x'.repeat(8193) }], Array.from({ length: 501 }, () => event), []]) {
    const res = await signedPost(t, enrolled, '/events', { events });
    assert.equal(res.status, 422, `refused: ${JSON.stringify(events).slice(0, 80)}`);
  }
  const unsigned = await fetch(`${t.url}/collector/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [HEADERS.protocol]: String(PROTOCOL_VERSION) },
    body: '{"events":[]}',
  });
  assert.equal(unsigned.status, 401);
});

test('the central away: the change is spooled at the site and delivered when it is back, then backed up', async () => {
  const { port } = new URL(t.url);
  await t.server.close();
  await sendFrom('127.0.0.1', FRR_CHANGE);
  const spool = path.join(site, EVENT_SPOOL_DIR);
  await until('the message in the site’s spool', () => (readdirSync(spool).length > 0 ? true : undefined), run.output);
  const config = t.services.config;
  restarted = await startServer(createApp(t.services), { ...config, server: { ...config.server, listen: `127.0.0.1:${port}` } });
  await until('the second event backup', () => (backups(ids.inZone).filter((b) => b.success === 1).length === 2 ? true : undefined), run.output);
  await until('an empty spool', () => (readdirSync(spool).length === 0 ? true : undefined), run.output);
});

test('the forwarder: over the rate limit dropped and counted; past the spool bound the oldest batches dropped and counted', () => {
  const dataDir = tempDir('confvault-forwarder-');
  const f = new SyslogForwarder({
    client: { central_url: 'http://127.0.0.1:9' },
    dataDir,
    log: createLogger('silent'),
    ratePerSecond: 6,
    batchMax: 2,
    // Two batches of two fit, a third pushes the oldest out.
    spoolBytes:
      2 *
      JSON.stringify([
        { address: '192.0.2.1', at: 0, raw: 'x'.repeat(40) },
        { address: '192.0.2.1', at: 0, raw: 'x'.repeat(40) },
      ]).length,
    now: () => 0,
  });
  for (let i = 0; i < 10; i++) f.add('192.0.2.1', 'x'.repeat(40));
  assert.deepEqual(
    [f.counters.received, f.counters.rate_dropped, f.counters.spooled, f.counters.spool_dropped],
    [10, 4, 6, 2],
    'six taken (the burst), four over the rate; three full batches spooled (no sender running), the oldest dropped',
  );
  assert.deepEqual(f.pending(), { queued: 0, spooled_batches: 2 });
});
