// Remote collectors in the device lab (issue #27): the central in a network namespace that cannot reach the lab's devices,
// a collector in the root namespace that can; backups succeed through it across kill -9, a link down and a central restart.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { makeDataTemplate, runCliAsync, tempDir } from '../helpers/appliance';
import { assertDbCheckClean, assertEveryVersionReadable } from '../helpers/fault';
import { spawnConfvault, until } from '../collectors/harness';
import { openAppliance, type Appliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { createApiKey } from '../../src/features/apikeys/apikeys.service';
import { leaveZonedToCollectors } from '../../src/features/collectors/collector-work.service';
import { listCollectors, setZone } from '../../src/features/collectors/collectors.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { labSkip, takeLab } from './backup-lab.shared';
import { LAB_DEVICES } from './lab';

const skip = labSkip();
const NS = 'cvcol-central';
const HOST_IF = 'cvcol0';
const CENTRAL_IP = '10.209.0.2';
const CENTRAL = `http://${CENTRAL_IP}:18480`;
const { r1, r2 } = LAB_DEVICES;
/** The lab's FRR devices on the bridge, as a site's collector reaches them (the central cannot). */
const LAN = { r1: '10.201.0.11', r2: '10.201.0.12' } as const;

let release: (() => void) | undefined;
let dataDir: string;
let site: string;
let a: Appliance;
let adminKey: string;
let central: ChildProcess | undefined;
const children = new Set<ChildProcess>();
const ids: number[] = [];

function sh(cmd: string, ...args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
}

function teardownNamespace(): void {
  spawnSync('ip', ['route', 'del', 'unreachable', `${CENTRAL_IP}/32`], { stdio: 'ignore' });
  spawnSync('ip', ['netns', 'del', NS], { stdio: 'ignore' });
  spawnSync('ip', ['link', 'del', HOST_IF], { stdio: 'ignore' });
}

/** The central's own namespace: one veth to the root namespace (10.209.0.0/30), no route to the lab's 10.201.0.0/24. */
function setupNamespace(): void {
  teardownNamespace();
  sh('ip', 'netns', 'add', NS);
  sh('ip', 'link', 'add', HOST_IF, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', NS);
  sh('ip', 'addr', 'add', '10.209.0.1/30', 'dev', HOST_IF);
  sh('ip', 'link', 'set', HOST_IF, 'up');
  sh('ip', 'netns', 'exec', NS, 'ip', 'addr', 'add', `${CENTRAL_IP}/30`, 'dev', 'eth0');
  sh('ip', 'netns', 'exec', NS, 'ip', 'link', 'set', 'eth0', 'up');
  sh('ip', 'netns', 'exec', NS, 'ip', 'link', 'set', 'lo', 'up');
}

/** `confvault serve` inside the central's namespace; resolves once it answers /healthz. */
async function startCentral(): Promise<void> {
  const env = { CONFVAULT_COLLECTOR_LEASE_SECONDS: '5', CONFVAULT_COLLECTOR_POLL_SECONDS: '1', CONFVAULT_BACKUP_SCHEDULE: '0 0 1 1 *' };
  const c = spawnConfvault(['serve', '--data-dir', dataDir, '--listen', `${CENTRAL_IP}:18480`], children, env, ['ip', 'netns', 'exec', NS]);
  await until('the central to answer', async () => ((await fetch(`${CENTRAL}/healthz`).catch(() => null))?.ok ? true : undefined), c.output, 60_000);
  central = c.child;
}

const startCollector = () => spawnConfvault(['collector', 'run', '--data-dir', site], children);

type Item = { id: string; success: boolean };
async function backupsOf(id: number): Promise<Item[]> {
  const res = await fetch(`${CENTRAL}/api/v1/devices/${id}/backups?limit=200`, { headers: { 'X-API-Key': adminKey } });
  return ((await res.json()) as { items: Item[] }).items;
}

async function contentOf(backupId: string): Promise<string> {
  const res = await fetch(`${CENTRAL}/api/v1/backups/${backupId}/content`, { headers: { 'X-API-Key': adminKey } });
  return ((await res.json()) as { config_text: string }).config_text;
}

/** Queues every lab device for the collector (as the schedule does) and waits until each has exactly one more stored version. */
async function backUpAll(output: () => string, during?: () => Promise<void>): Promise<void> {
  const before = new Map<number, number>();
  for (const id of ids) before.set(id, (await backupsOf(id)).length);
  assert.deepEqual(leaveZonedToCollectors(a.db, ids, 'schedule'), [], 'all lab devices are the zone’s');
  await during?.();
  const n = (id: number) => before.get(id)! + 1;
  for (const id of ids) await until(`version ${n(id)} of device ${id}`, async () => ((await backupsOf(id)).length >= n(id) ? true : undefined), output);
  const idle = () => listCollectors(a.db, SYSTEM_ACTOR, 60_000).every((c) => c.queued + c.leased === 0);
  await until('an empty queue', () => (idle() ? true : undefined), output);
  for (const id of ids) {
    const all = await backupsOf(id);
    assert.equal(all.length, n(id), `device ${id}: every due backup stored once, nothing duplicated: ${JSON.stringify(all)}`);
    assert.ok(all.every((b) => b.success));
  }
}

function assertNoCredentialAtSite(): void {
  for (const e of readdirSync(site, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const file = path.join(e.parentPath, e.name);
    assert.ok(!readFileSync(file, 'latin1').includes(r1.password), `the device password is in ${file}`);
  }
}

before(
  async () => {
    if (skip) return;
    release = await takeLab();
    setupNamespace();
    const dir = tempDir('confvault-collector-lab-');
    dataDir = await makeDataTemplate(path.join(dir, 'central'));
    site = path.join(dir, 'site');
    // The test's own handle on the central's database: seeding and queueing through the services, as the schedule would.
    a = openAppliance({}, loadConfig({ dataDir }, { CONFVAULT_LOG_LEVEL: 'silent' }));
    adminKey = createApiKey(a.db, SYSTEM_ACTOR, { username: 'admin' }).key;
    const cred = seedCredential(a.db, a.secrets, { name: 'netops', username: r1.username, password: r1.password });
    const frr = seedBuiltinTemplate(a.db, 'frr');
    for (const [name, host] of Object.entries(LAN)) {
      ids.push(seedDevice(a.db, { name: `lab-${name}`, hostname: host, port: 22, credential_id: cred, template_id: frr }));
      setZone(a.db, SYSTEM_ACTOR, { device: `lab-${name}` }, 'lab-site');
    }
    await startCentral();
  },
  { timeout: 30 * 60_000 },
);

after(() => {
  for (const c of children) c.kill('SIGKILL');
  a?.close();
  if (!skip) teardownNamespace();
  release?.();
});

test('the central cannot reach the lab; its collector backs the devices up through it', { skip }, async () => {
  const route = spawnSync('ip', ['netns', 'exec', NS, 'ip', 'route', 'get', LAN.r1], { encoding: 'utf8' });
  assert.notEqual(route.status, 0, `the central's namespace has a route to the lab: ${route.stdout}`);

  const token = await runCliAsync(['collector', 'token', 'create', '--zone', 'lab-site', '--data-dir', dataDir]);
  assert.equal(token.status, 0, token.stderr);
  const enrol = await runCliAsync(['collector', 'enrol', '--central', CENTRAL, '--name', 'lab-collector', '--data-dir', site], { input: token.stdout });
  assert.equal(enrol.status, 0, enrol.stderr);

  const run = startCollector();
  try {
    await backUpAll(run.output);
    const [latest] = await backupsOf(ids[0]);
    const text = await contentOf(latest.id);
    assert.match(text, /^hostname r1-lab$/m);
    assert.doesNotMatch(text, /neighbor \S+ password (?!<secret:[0-9a-f]{8}>)/, 'the BGP password is redacted at the site');
    assert.ok(!text.includes(r2.password));
  } finally {
    run.child.kill('SIGTERM');
    await run.exited;
  }
  assertNoCredentialAtSite();
});

test('kill -9 of the collector mid-job: each due backup is stored once after its lease expires', { skip }, async () => {
  const first = startCollector();
  let second: ReturnType<typeof startCollector> | undefined;
  try {
    await backUpAll(
      () => first.output() + (second?.output() ?? ''),
      async () => {
        await until('a lease', () => (listCollectors(a.db, SYSTEM_ACTOR, 60_000)[0].leased > 0 ? true : undefined), first.output);
        first.child.kill('SIGKILL');
        await first.exited;
        second = startCollector();
      },
    );
  } finally {
    second?.child.kill('SIGTERM');
    await second?.exited;
  }
  assertNoCredentialAtSite();
});

test('the link to the central down while a job runs: every due backup is stored once when it is back', { skip }, async () => {
  const run = startCollector();
  try {
    await backUpAll(run.output, async () => {
      await until('a lease', () => (listCollectors(a.db, SYSTEM_ACTOR, 60_000)[0].leased > 0 ? true : undefined), run.output);
      // The route to the central is made unreachable here first, so nothing meant for it takes the default route off
      // the machine while the link is down; then the central's side of the link goes down.
      sh('ip', 'route', 'add', 'unreachable', `${CENTRAL_IP}/32`);
      sh('ip', 'netns', 'exec', NS, 'ip', 'link', 'set', 'eth0', 'down');
      try {
        await new Promise((r) => setTimeout(r, Number(process.env.CONFVAULT_LAB_LINK_DOWN_S ?? 30) * 1000));
      } finally {
        sh('ip', 'netns', 'exec', NS, 'ip', 'link', 'set', 'eth0', 'up');
        sh('ip', 'route', 'del', 'unreachable', `${CENTRAL_IP}/32`);
      }
    });
  } finally {
    run.child.kill('SIGTERM');
    await run.exited;
  }
  assertNoCredentialAtSite();
});

test('a central restart: leases and queue survive, every due backup is stored once', { skip }, async () => {
  const run = startCollector();
  try {
    await backUpAll(run.output, async () => {
      await until('a lease', () => (listCollectors(a.db, SYSTEM_ACTOR, 60_000)[0].leased > 0 ? true : undefined), run.output);
      central?.kill('SIGTERM');
      await until('the central to stop', () => (central?.exitCode !== null ? true : undefined), run.output);
      await startCentral();
    });
  } finally {
    run.child.kill('SIGTERM');
    await run.exited;
  }
  assertNoCredentialAtSite();
});

test('after the faults above: db check of the central passes, nothing running, every version stored readable', { skip }, async () => {
  assert.ok(assertEveryVersionReadable(a.db, a.snapshots) >= ids.length, 'at least one version per device');
  await assertDbCheckClean(dataDir);
});
