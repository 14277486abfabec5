// `confvault collector run` as a real child process against simulated devices: enrol, lease, collect, upload, kill -9 mid-job.
// Heavy scenario: runs in npm run test:lab (test/run.sh), beside the device lab; CI runs it after npm test.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, runCliAsync, startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { startSimulator, loadTranscript, type RunningSimulator } from '../sim/simulator';
import { applyTemplate } from '../../src/engine/normalise';
import { getBuiltinTemplate } from '../../src/templates/index';
import { leaveZonedToCollectors } from '../../src/features/collectors/collector-work.service';
import { listCollectors, setZone } from '../../src/features/collectors/collectors.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { IDENTITY_FILE } from '../../src/collector/identity';
import { spawnConfvault, until } from './harness';
import { createApp } from '../../src/app/app';
import { startServer, type RunningServer } from '../../src/app/server';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));
const frrExpected = readFileSync(path.join(REPO_ROOT, 'test/sim/transcripts/frr.expected.txt'), 'utf8');
const PASSWORD = 'pw-site-only-27182818';
const SLOW_PASSWORD = 'pw-slow-site-31415926';
/** Devices of the batching test. */
const MANY = 24;

let t: TestAppliance;
let sim: RunningSimulator;
let adminKey: string;
let site: string;
const children = new Set<ChildProcess>();
/** The central's listener after a restart on the same address (the spool test). */
let restarted: RunningServer | undefined;

before(async () => {
  t = await startTestAppliance({ CONFVAULT_COLLECTOR_LEASE_SECONDS: '3', CONFVAULT_COLLECTOR_POLL_SECONDS: '1' });
  adminKey = await t.keyFor({ permissions: 'all' });
  sim = await startSimulator({
    devices: [
      { name: 'r1', transcript: frr, username: 'r1', password: PASSWORD },
      // Paced output: its backup takes a few seconds, long enough to kill the collector in the middle of it.
      { name: 'slow', transcript: frr, username: 'slow', password: SLOW_PASSWORD, latency_ms: 150, chunk_bytes: 64 },
      { name: 'spool', transcript: frr, username: 'spool', password: SLOW_PASSWORD, latency_ms: 150, chunk_bytes: 64 },
      ...Array.from({ length: MANY }, (_, i) => ({ name: `m${i}`, transcript: frr, username: `m${i}`, password: PASSWORD })),
    ],
  });
  site = path.join(tempDir('confvault-site-'), 'data');
});
after(async () => {
  for (const c of children) c.kill('SIGKILL');
  await restarted?.close();
  await sim.close();
  await t.close();
});

const central = ['--data-dir', () => t.appliance.dataDir] as const;
const centralArgs = () => [central[0], central[1]()];

async function cli(args: string[], input?: string) {
  const r = await runCliAsync(args, { input });
  assert.equal(r.status, 0, `confvault ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** `confvault collector run` for the site. */
const startCollector = () => spawnConfvault(['collector', 'run', '--data-dir', site], children);

type Item = { id: string; success: boolean };
async function backupsOf(deviceId: number): Promise<Item[]> {
  const res = await t.api(`/api/v1/devices/${deviceId}/backups?limit=200`, { key: adminKey });
  return ((await res.json()) as { items: Item[] }).items;
}

function siteDevice(name: string, password: string): number {
  const { db, secrets } = t.services;
  return seedDevice(db, {
    name,
    port: sim.port,
    credential_id: seedCredential(db, secrets, { name: `c-${name}`, username: name.replace('site-', ''), password }),
    template_id: seedBuiltinTemplate(db, 'frr'),
  });
}

/** Every file under `dir`, read whole. */
function filesUnder(dir: string): { file: string; text: string }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .map((file) => ({ file, text: readFileSync(file, 'latin1') }));
}

test('enrolled with a one-time token, the collector backs up its zone through the central; no credential on the site disk', async () => {
  const token = (await cli(['collector', 'token', 'create', '--zone', 'site-a', ...centralArgs()])).trim();
  assert.match(token, /^cvc_/);
  assert.match(
    await cli(['collector', 'enrol', '--central', t.url, '--name', 'site-a-1', '--data-dir', site], token + '\n'),
    /enrolled as collector site-a-1 .* of zone site-a/,
  );
  assert.equal(statSync(path.join(site, IDENTITY_FILE)).mode & 0o777, 0o600);
  const reuse = await runCliAsync(['collector', 'enrol', '--central', t.url, '--name', 'site-a-2', '--data-dir', tempDir('confvault-site2-')], {
    input: token + '\n',
  });
  assert.equal(reuse.status, 1, 'the token was used up');

  const id = siteDevice('site-r1', PASSWORD);
  await cli(['collector', 'zone', '--device', 'site-r1', '--zone', 'site-a', ...centralArgs()]);
  assert.deepEqual(leaveZonedToCollectors(t.appliance.db, [id], 'cli'), []);

  const run = startCollector();
  try {
    const item = await until('the collector to store a version', async () => (await backupsOf(id)).find((b) => b.success), run.output);
    const res = await t.api(`/api/v1/backups/${item.id}/content`, { key: adminKey });
    const stored = applyTemplate(frrExpected, getBuiltinTemplate('frr')!, { redact: true, key: t.services.secrets.redactionKey });
    assert.equal(((await res.json()) as { config_text: string }).config_text, stored, 'the stored text is the local backup’s, redacted with the same tokens');
    const [c] = listCollectors(t.appliance.db, SYSTEM_ACTOR, 60_000);
    assert.deepEqual([c.name, c.state, c.stored_total, c.queued, c.leased], ['site-a-1', 'online', 1, 0, 0]);
  } finally {
    run.child.kill('SIGTERM');
    await run.exited;
  }
  for (const { file, text } of filesUnder(site)) assert.ok(!text.includes(PASSWORD), `the password is in ${file}`);
  assert.ok(!run.output().includes(PASSWORD), 'the password is in the collector’s log');
});

test('kill -9 of the collector mid-job: the lease expires, the backup is queued again and stored once', async () => {
  const id = siteDevice('site-slow', SLOW_PASSWORD);
  await cli(['collector', 'zone', '--device', 'site-slow', '--zone', 'site-a', ...centralArgs()]);
  assert.deepEqual(leaveZonedToCollectors(t.appliance.db, [id], 'schedule'), []);

  const first = startCollector();
  // Mid-job: the device has this collector's login (a lease row alone can be another, stopped collector's: see below).
  await until('the job running at the site', () => (sim.logins('slow') === 1 ? true : undefined), first.output);
  first.child.kill('SIGKILL');
  await first.exited;
  assert.deepEqual(await backupsOf(id), [], 'nothing stored by the killed collector');

  const second = startCollector();
  try {
    await until('the second collector to store the version', async () => (await backupsOf(id)).find((b) => b.success), second.output);
    // Give a duplicate every chance to show: the queue is empty and the collector idles.
    await until(
      'an empty queue',
      () =>
        listCollectors(t.appliance.db, SYSTEM_ACTOR, 60_000)[0].queued + listCollectors(t.appliance.db, SYSTEM_ACTOR, 60_000)[0].leased === 0
          ? true
          : undefined,
      second.output,
    );
    const all = await backupsOf(id);
    assert.equal(all.length, 1, `stored once: ${JSON.stringify(all)}`);
    assert.equal(all[0].success, true);
  } finally {
    second.child.kill('SIGTERM');
    await second.exited;
  }
  for (const { file, text } of filesUnder(site)) assert.ok(!text.includes(SLOW_PASSWORD), `the password is in ${file}`);
});

test('the central away while a job runs: the result is spooled (no credential in it) and delivered once when it is back', async () => {
  const id = siteDevice('site-spool', SLOW_PASSWORD);
  await cli(['collector', 'zone', '--device', 'site-spool', '--zone', 'site-a', ...centralArgs()]);
  assert.deepEqual(leaveZonedToCollectors(t.appliance.db, [id], 'schedule'), []);
  const run = startCollector();
  try {
    // The device's login, not the lease row: the previous test's collector, stopped a moment before, can still have a
    // held lease request the central has not seen close, and it takes the job (its lease runs out 3 s later). The
    // central closed on that lease row left this test waiting for a spool that could not come (a fresh-clone CI run).
    await until('the job running at the site', () => (sim.logins('spool') === 1 ? true : undefined), run.output);
    const { port } = new URL(t.url);
    await t.server.close();
    await until('the result in the spool', () => (run.output().includes('result spooled') ? true : undefined), run.output);
    const spooled = filesUnder(path.join(site, 'spool'));
    assert.equal(spooled.length, 1);
    assert.ok(!spooled[0].text.includes(SLOW_PASSWORD), 'no credential in the spool');
    assert.equal(statSync(spooled[0].file).mode & 0o777, 0o600);

    const config = t.services.config;
    restarted = await startServer(createApp(t.services), { ...config, server: { ...config.server, listen: `127.0.0.1:${port}` } });
    await until('the spooled version stored', async () => (await backupsOf(id)).find((b) => b.success), run.output);
    await until('an empty spool', () => (filesUnder(path.join(site, 'spool')).length === 0 ? true : undefined), run.output);
    assert.equal((await backupsOf(id)).length, 1, 'stored once');
  } finally {
    run.child.kill('SIGTERM');
    await run.exited;
  }
});

test('a zone’s backups travel in batches: fewer signed requests than devices (protocol 2), each stored once', async () => {
  const ids = Array.from({ length: MANY }, (_, i) => siteDevice(`site-m${i}`, PASSWORD));
  for (let i = 0; i < MANY; i++) setZone(t.appliance.db, SYSTEM_ACTOR, { device: `site-m${i}` }, 'site-a');
  const [c] = listCollectors(t.appliance.db, SYSTEM_ACTOR, 60_000);
  const requests = t.appliance.db.prepare('SELECT count(*) FROM collector_nonces WHERE collector_id = ?').pluck();
  const run = startCollector();
  try {
    await until(
      'the collector idle',
      () => (listCollectors(t.appliance.db, SYSTEM_ACTOR, 60_000)[0].last_seen_at! > c.last_seen_at! ? true : undefined),
      run.output,
    );
    const before = requests.get(c.id) as number;
    assert.deepEqual(leaveZonedToCollectors(t.appliance.db, ids, 'schedule'), []);
    await until('every device stored', async () => ((await Promise.all(ids.map(backupsOf))).every((b) => b.length > 0) ? true : undefined), run.output);
    const used = (requests.get(c.id) as number) - before;
    // One request per result plus a lease request after each (protocol 1) made at least 2 per device.
    assert.ok(used < MANY, `${used} signed requests for ${MANY} devices`);
    for (const id of ids) assert.equal((await backupsOf(id)).length, 1, 'stored once');
  } finally {
    run.child.kill('SIGTERM');
    await run.exited;
  }
});

test('SIGTERM: the jobs leased ahead and not started go back to the queue at once, not when their leases run out', async () => {
  // Twelve paced devices for a site running 8 at a time: it leases all 12 (twice its concurrency ahead), starts 8.
  const { db, secrets } = t.services;
  const template_id = seedBuiltinTemplate(db, 'frr');
  const ids = Array.from({ length: 12 }, (_, i) =>
    seedDevice(db, {
      name: `site-stop-${i}`,
      port: sim.port,
      credential_id: seedCredential(db, secrets, { name: `c-site-stop-${i}`, username: 'slow', password: SLOW_PASSWORD }),
      template_id,
    }),
  );
  for (let i = 0; i < ids.length; i++) setZone(db, SYSTEM_ACTOR, { device: `site-stop-${i}` }, 'site-a');
  const collector = () => listCollectors(db, SYSTEM_ACTOR, 60_000).find((c) => c.name === 'site-a-1')!;
  const run = startCollector();
  try {
    await until('the collector started', () => (run.output().includes('collector started') ? true : undefined), run.output);
    // Past the hold of a lease request the previous test's collector may have left at the central (poll_seconds 1 here).
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual(leaveZonedToCollectors(db, ids, 'schedule'), []);
    await until('all 12 leased', () => (collector().leased === 12 ? true : undefined), run.output);
  } finally {
    run.child.kill('SIGTERM');
    await run.exited;
  }
  assert.match(run.output(), /"released":4\b.*handed back to the queue/);
  // Leases run out only when the central next leases (lease_seconds is 3 here): none has happened since the exit.
  assert.ok(collector().queued >= 4, `the 4 unstarted are queued again: ${JSON.stringify(collector())}`);
});
