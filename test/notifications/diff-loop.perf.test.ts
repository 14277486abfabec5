// Issue #20 item 3: a digest of large configuration diffs is built off the event loop; /healthz stays fast meanwhile.
// Heavy scenario: runs in npm run test:lab (test/run.sh), beside the device lab; CI runs it after npm test.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { importBackup } from '../../src/features/backups/import.service';
import { createChannel, createRule } from '../../src/features/notifications/notifications.service';
import { NotificationWorker } from '../../src/features/notifications/notifications.worker';
import { DIFF_DID_NOT_FIT } from '../../src/features/notifications/notification-diffs';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { DestinationPolicy } from '../../src/lib/destinations';
import { runNotificationDiffs } from '../../src/features/configs/workers/notification-diffs';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { WebhookReceiver } from './receivers';

/** About 460 KB: 10,000 interfaces; `version` rewrites the description of every third one (a change too big to diff cheaply). */
function bigConfig(device: number, version: number): string {
  const lines = [`hostname big${device}`];
  for (let i = 0; i < 10_000; i++) lines.push(`interface Gi${device}/${i}`, ` description link ${i}${i % 3 === 0 ? ` v${version}` : ''} to rack`);
  return lines.join('\n') + '\nend\n';
}

const DEVICES = 8;

describe('notification diffs off the event loop (issue #20)', () => {
  let t: TestAppliance;
  let hook: WebhookReceiver;
  let worker: NotificationWorker;

  before(async () => {
    t = await startTestAppliance();
    hook = await new WebhookReceiver().start();
    const db = t.appliance.db;
    const tpl = seedBuiltinTemplate(db, 'cisco-ios');
    const cred = seedCredential(db, t.appliance.secrets, { name: 'c', username: 'u', password: 'p' });
    await createChannel(db, SYSTEM_ACTOR, t.appliance.secrets, new DestinationPolicy(['127.0.0.1']), { name: 'big', type: 'webhook', url: hook.url });
    createRule(db, SYSTEM_ACTOR, { name: 'big', events: ['config_changed'], channels: ['big'], include_diff: true });
    for (let d = 1; d <= DEVICES; d++) {
      const id = seedDevice(db, { name: `big${d}`, hostname: `10.9.0.${d}`, port: 22, credential_id: cred, template_id: tpl });
      importBackup(db, SYSTEM_ACTOR, t.appliance.snapshots, id, bigConfig(d, 1));
      importBackup(db, SYSTEM_ACTOR, t.appliance.snapshots, id, bigConfig(d, 2));
    }
    worker = new NotificationWorker({
      db,
      secrets: t.appliance.secrets,
      snapshots: t.appliance.snapshots,
      config: { ...t.services.config, notifications: { ...t.services.config.notifications, allowed_destinations: ['127.0.0.1'] } },
      diffs: runNotificationDiffs,
    });
  });

  after(async () => {
    await worker.stop();
    await hook.stop();
    await t.close();
  });

  test('/healthz p99 stays under 50 ms while a digest of 8 diffs of ~460 KB versions is built', async (ctx) => {
    // Warm the pool (its code is bundled on first use) so that the measurement is about the diffs alone.
    await runNotificationDiffs({ diffs: [], redaction_key: '00', deadline_at: Date.now() + 1000, snapshotsRoot: t.appliance.snapshots.root }, 30_000);
    let done = false;
    const measure = async (samples: number[], max: number) => {
      for (let i = 0; i < max && !done; i++) {
        const start = performance.now();
        const res = await fetch(`${t.url}/healthz`);
        await res.arrayBuffer();
        samples.push(performance.now() - start);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const p99 = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.min(samples.length - 1, Math.floor(samples.length * 0.99))];
    // The same probe with nothing else running: on a machine shared with other work, that is the floor.
    const idle: number[] = [];
    await measure(idle, 150);
    const samples: number[] = [];
    const probe = measure(samples, 1500);
    await new Promise((r) => setTimeout(r, 100));
    worker.tick(Date.now());
    try {
      await hook.waitFor(() => hook.ok().length === 1, 60_000);
    } finally {
      done = true;
      await probe;
    }
    const digest = JSON.parse(hook.ok()[0].body) as { event: string; events: { diff?: string; diff_truncated?: boolean }[] };
    assert.equal(digest.event, 'digest');
    assert.equal(digest.events.length, DEVICES);
    // Each event carries its diff, or says why not (too large a change, or the message's deadline passed).
    for (const e of digest.events) assert.ok(e.diff && (e.diff.startsWith('@@') || e.diff.startsWith('(')), e.diff?.slice(0, 80));
    assert.ok(digest.events.every((e) => e.diff !== DIFF_DID_NOT_FIT || e.diff_truncated));
    // Under 50 ms; on a machine whose idle p99 is already above 25 ms (other work on its two cores), within twice
    // that. Before the diffs moved to the pool, the loop was held for seconds: 5 samples in 18 s.
    const limit = Math.max(50, 2 * p99(idle));
    const busy = p99(samples);
    ctx.diagnostic(`healthz p99 ${busy.toFixed(1)} ms during the build (${samples.length} requests), idle p99 ${p99(idle).toFixed(1)} ms`);
    assert.ok(
      busy < limit,
      `/healthz p99 ${busy.toFixed(1)} ms over ${samples.length} requests (idle p99 ${p99(idle).toFixed(1)} ms, limit ${limit.toFixed(1)} ms)`,
    );
    assert.ok(samples.length >= 20, `${samples.length} samples`);
  });
});
