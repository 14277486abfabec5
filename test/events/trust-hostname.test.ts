// [events] trust_hostname: a message from an unknown address is matched by its HOSTNAME only when the operator allows it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AppConfig } from '../../src/config/config';
import { BackupRunner } from '../../src/engine/runner';
import { EventBackups } from '../../src/events/event-backups';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';

const LINE = '<29>Nov 24 10:00:00 edge-7 staticd[71]: [M7Q4P-46WDR] vty[14]@(config)# ip route 203.0.113.77/32 Null0';
let t: TestAppliance;
after(() => t?.close());

async function eventsWith(trust: boolean, resolve?: (h: string) => Promise<string[]>): Promise<EventBackups> {
  t ??= await startTestAppliance();
  const { db, secrets, snapshots } = t.services;
  if (!db.prepare("SELECT 1 FROM devices WHERE name = 'edge-7'").get()) {
    const cred = seedCredential(db, secrets, { name: 'c', username: 'u', password: 'p' });
    seedDevice(db, { name: 'edge-7', hostname: 'edge-7.example.net', port: 22, credential_id: cred, template_id: seedBuiltinTemplate(db, 'frr') });
  }
  // A long debounce: these tests look at what is queued, no backup runs.
  const config: Readonly<AppConfig> = {
    ...t.services.config,
    events: { ...t.services.config.events, syslog_listen: '127.0.0.1:0', trust_hostname: trust, debounce_seconds: 3600 },
  };
  const e = new EventBackups({ db, runner: new BackupRunner({ db, secrets, snapshots, config }), config, resolve: resolve ?? (() => Promise.resolve([])) });
  await e.start();
  return e;
}

test('trust_hostname off (default): the HOSTNAME field names no device, the sender is unknown', async () => {
  const e = await eventsWith(false);
  e.handle('198.51.100.7', LINE);
  assert.equal(e.pendingCount(), 0);
  assert.equal(e.counters.unknown_senders, 1);
  await e.stop();
});

test('trust_hostname on: the HOSTNAME field matches the device name (or hostname, or its first label)', async () => {
  const e = await eventsWith(true);
  e.handle('198.51.100.7', LINE);
  assert.equal(e.pendingCount(), 1);
  assert.equal(e.counters.unknown_senders, 0);
  await e.stop();
});

test('a device hostname is resolved and its addresses matched', async () => {
  const e = await eventsWith(false, (h) => Promise.resolve(h === 'edge-7.example.net' ? ['192.0.2.77', '2001:db8::77'] : []));
  e.handle('::ffff:192.0.2.77', LINE);
  e.handle('2001:DB8::77', LINE);
  assert.equal(e.pendingCount(), 1, 'both addresses are the one device: one pending backup');
  assert.equal(e.counters.change_events, 2);
  await e.stop();
});
