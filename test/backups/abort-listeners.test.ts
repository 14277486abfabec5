// A run of 100+ devices leaves no listener behind on its shared abort signal, so Node never prints a
// MaxListenersExceededWarning (plain text on stderr, inside serve's JSON log): in process, and as `confvault backup run --all`.
// Heavy scenario: runs in npm run test:lab (test/run.sh), beside the device lab; CI runs it after npm test.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { BackupRunner } from '../../src/engine/runner';
import { probeReachability } from '../../src/engine/scheduler';
import type { JobView } from '../../src/features/backups/jobs.service';
import { runCliAsync, spawnServe, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { createTestDevice, seedBuiltinTemplate, seedCredential } from '../helpers/seed';

const DEVICES = 120;
let t: TestAppliance;
let refused: net.Server;
let ids: number[];

before(async () => {
  // Every device's address accepts and hangs up at once: each backup fails fast as data.
  refused = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => refused.listen(0, '127.0.0.1', () => r()));
  const port = (refused.address() as net.AddressInfo).port;
  t = await startTestAppliance();
  const { db, secrets } = t.services;
  const refs = { credential_id: seedCredential(db, secrets, { name: 'c', username: 'u', password: 'p' }), template_id: seedBuiltinTemplate(db, 'frr') };
  ids = Array.from({ length: DEVICES }, (_, i) => createTestDevice(db, refs, `d${i}`, { hostname: '127.0.0.1', port }).id);
});
after(async () => {
  await t.close();
  await new Promise((r) => refused.close(r));
});

test(`a scheduled run of ${DEVICES} devices with jitter leaves no abort listener on the run's signal`, async () => {
  const { db, secrets, snapshots, config } = t.services;
  const deps = { db, secrets, snapshots, config: { ...config, backup: { ...config.backup, retries: 0 } } };
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  try {
    const controller = new AbortController();
    const runner = new BackupRunner(deps);
    const results = await runner.run(ids, { trigger: 'schedule', jitterMs: 5, signal: controller.signal });
    assert.equal(results.length, DEVICES);
    // The reachability probe between backups: 32 connects at once on the scheduler's signal.
    assert.equal(await probeReachability(deps, runner, controller.signal), DEVICES);
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0, 'every wait took its listener away');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(
      warnings.filter((w) => w.startsWith('MaxListenersExceededWarning')),
      [],
    );
  } finally {
    process.off('warning', onWarning);
  }
});

test(`confvault backup run --all with ${DEVICES} devices prints no MaxListenersExceededWarning`, async () => {
  const r = await runCliAsync(['backup', 'run', '--all', '--data-dir', t.services.dataDir]);
  assert.equal(r.stdout.trim().split('\n').length, DEVICES, 'one line per device');
  assert.equal(r.status, 1, 'every device failed (connection closed)');
  assert.doesNotMatch(r.stderr, /MaxListenersExceededWarning|memory leak/);
});

test(`serve's log stays JSON, one object a line, while it runs a queued job of ${DEVICES} devices`, async () => {
  const dataArgs = ['--data-dir', t.services.dataDir];
  const served = await spawnServe([...dataArgs, '--listen', '127.0.0.1:0'], { CONFVAULT_LOG_LEVEL: 'info', CONFVAULT_BACKUP_SCHEDULE: '0 0 1 1 *' });
  try {
    const q = await runCliAsync(['backup', 'run', '--all', '--no-wait', ...dataArgs]);
    assert.equal(q.status, 0, q.stderr);
    const jobId = q.stdout.trim();
    let job: JobView | undefined;
    for (const deadline = Date.now() + 60_000; job?.state !== 'finished' && Date.now() < deadline; await sleep(250)) {
      const r = await runCliAsync(['backup', 'jobs', '--all', '--json', ...dataArgs]);
      job = (JSON.parse(r.stdout) as JobView[]).find((j) => j.id === jobId);
    }
    assert.equal(job?.state, 'finished', 'the server ran the job');
  } finally {
    await served.stop();
  }
  const { stdout, stderr } = served.output();
  assert.equal(stderr, '', 'nothing outside the JSON log');
  for (const line of stdout.split('\n').filter(Boolean)) assert.doesNotThrow(() => JSON.parse(line), line);
});
