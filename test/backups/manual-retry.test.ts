// Backups someone asked for ("Back up now", `backup run`) retry a transient failure once, at once, and say so; the schedule keeps its backoff.
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createUser } from '../../src/features/users/users.service';
import { retryPlan } from '../../src/engine/runner';
import { runCliAsync, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { WebClient } from '../web/web-client';

let t: TestAppliance;
let deviceId: number;

/** A 127.0.0.1 port nobody listens on: bound once by us, then closed. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

before(async () => {
  // The defaults: two retries, 30 s then 60 s apart. A manual backup used to report after 90 s.
  t = await startTestAppliance();
  assert.equal(t.services.config.backup.retries, 2);
  assert.equal(t.services.config.backup.retry_backoff, 30);
  const { db, secrets } = t.services;
  const cred = seedCredential(db, secrets, { name: 'closed-port-cred', username: 'u', password: 'p-123456' });
  deviceId = seedDevice(db, { name: 'closed-port', port: await closedPort(), credential_id: cred, template_id: seedBuiltinTemplate(db, 'frr') });
  await createUser(db, SYSTEM_ACTOR, { username: 'operator', password: 'operator-password-1', role: 'administrator' });
});
after(async () => {
  await t?.close();
});

interface JobView {
  id: string;
  state: string;
  failure: string | null;
  progress: string | null;
  attempts: number | null;
}

test('"Back up now" against a closed port fails in seconds after one immediate retry, and the job says it retried', { timeout: 30_000 }, async () => {
  const w = new WebClient(t.url);
  assert.equal((await w.login('operator', 'operator-password-1')).status, 303);
  const began = Date.now();
  const start = await w.fetch(`/api/devices/${deviceId}/backups`, { method: 'POST', headers: { 'X-CSRF-Token': await w.csrf() } });
  assert.equal(start.status, 202);
  let job = (await start.json()) as JobView;
  while (job.state === 'running') {
    assert.ok(Date.now() - began < 20_000, 'still running after 20 s');
    await sleep(100);
    job = (await (await w.fetch(`/api/backup-jobs/${job.id}`)).json()) as JobView;
  }
  const ms = Date.now() - began;
  assert.ok(ms < 5000, `finished after ${ms} ms`);
  assert.equal(job.state, 'failed');
  assert.equal(job.failure, 'CONNECTION_REFUSED');
  assert.equal(job.attempts, 2);
  assert.equal(job.progress, 'retrying: connection refused');
  // The page shows it too once done (the running text carries it while running).
  const page = await w.get(`/devices/${deviceId}?job=${job.id}`);
  assert.match(page.html, /CONNECTION_REFUSED/);
});

test('`backup run --device` against a closed port: one immediate retry, a progress line, exit 1 in seconds', { timeout: 60_000 }, async () => {
  const began = Date.now();
  const r = await runCliAsync(['backup', 'run', '--device', String(deviceId), '--data-dir', t.services.dataDir]);
  const ms = Date.now() - began;
  assert.equal(r.status, 1, r.stderr);
  assert.ok(ms < 15_000, `finished after ${ms} ms (process start-up included)`);
  assert.match(r.stderr, new RegExp(`^device ${deviceId}: retrying: connection refused$`, 'm'));
  assert.equal(r.stderr.match(/retrying/g)?.length, 1, 'exactly one retry');
  const line = r.stdout
    .trim()
    .split('\n')
    .find((l) => l.startsWith(`${deviceId}\t`));
  assert.ok(line, r.stdout);
  assert.equal(line.split('\t')[2], 'failed');
  assert.equal(line.split('\t')[5], 'CONNECTION_REFUSED');
});

test('scheduled runs keep the configured backoff; manual ones retry at most once, without waiting', () => {
  const config = t.services.config;
  const schedule = retryPlan('schedule', config);
  assert.equal(schedule.retries, 2);
  assert.deepEqual([schedule.waitMs(1), schedule.waitMs(2)], [30_000, 60_000]);
  for (const trigger of ['manual', 'cli'] as const) {
    const plan = retryPlan(trigger, config);
    assert.equal(plan.retries, 1);
    assert.equal(plan.waitMs(1), 0);
  }
  assert.equal(retryPlan('manual', { ...config, backup: { ...config.backup, retries: 0 } }).retries, 0);
});
