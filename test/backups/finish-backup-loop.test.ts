// Recording a finished backup keeps the event loop free (snapshot off the loop), stays correct when identical texts finish at once, and leaves other writes fully synchronous.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { withEngineSync } from '../../src/db/open';
import { finishBackup, finishBackupSync, startBackup } from '../../src/features/backups/backup-record.service';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';

let t: TestAppliance;
let devices: number[];
before(async () => {
  t = await startTestAppliance();
  const { db, secrets } = t.services;
  const credential_id = seedCredential(db, secrets, { name: 'fb', username: 'u' });
  const template_id = seedBuiltinTemplate(db, 'cisco-ios');
  devices = [1, 2, 3].map((i) => seedDevice(db, { name: `fb${i}`, port: 22, credential_id, template_id }));
});
after(() => t.close());

const bigConfig = (tag: string, mb: number) => {
  const lines: string[] = [];
  for (let i = 0, size = 0; size < mb * 1_000_000; i++) {
    const l = `interface ${tag}-${i} description uplink ${i % 97} port ${(i * 7919) % 10007}`;
    lines.push(l);
    size += l.length + 1;
  }
  return lines.join('\n') + '\n';
};

/** Ticks of a 5 ms interval while `work` runs: a blocked event loop gets none. */
async function ticksDuring(work: () => unknown): Promise<number> {
  let ticks = 0;
  const tick = setInterval(() => ticks++, 5);
  await new Promise((r) => setTimeout(r, 10));
  ticks = 0;
  await work();
  clearInterval(tick);
  return ticks;
}

const FULL = 2;

test('finishing a backup of a 10 MB configuration lets timers (and requests) run while the snapshot is written', async () => {
  const { db, snapshots } = t.services;
  const text = bigConfig('fb', 10);
  const started = startBackup(db, devices[0], null, 'schedule');
  let done: Awaited<ReturnType<typeof finishBackup>> | undefined;
  const pending = finishBackup(db, snapshots, started, { ok: true, text, ignorePatterns: [] });
  assert.ok(pending instanceof Promise, 'finishBackup returns before the snapshot is on disk');
  const ticks = await ticksDuring(async () => (done = await pending));
  assert.equal(done?.success, true);
  assert.equal(snapshots.read(done.hash), text);
  assert.ok(ticks > 0, 'the event loop ran no timer while the 10 MB snapshot was hashed, compressed and written');
  const row = db.prepare('SELECT success, config_snapshot_hash FROM backups WHERE id = ?').get(started.id) as { success: number; config_snapshot_hash: string };
  assert.deepEqual(row, { success: 1, config_snapshot_hash: done.hash });
});

test('two devices finishing with the same text at the same moment: both recorded, one file, no temporary file left', async () => {
  const { db, snapshots } = t.services;
  const text = bigConfig('same', 1);
  const a = startBackup(db, devices[1], null, 'schedule');
  const b = startBackup(db, devices[2], null, 'schedule');
  const [ra, rb] = await Promise.all([
    finishBackup(db, snapshots, a, { ok: true, text, ignorePatterns: [] }),
    finishBackup(db, snapshots, b, { ok: true, text, ignorePatterns: [] }),
  ]);
  assert.equal(ra.success && rb.success, true);
  assert.equal(ra.hash, rb.hash);
  const dir = path.join(snapshots.root, ra.hash!.slice(0, 2));
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.includes(ra.hash!)),
    [`${ra.hash}.gz`],
  );
  assert.equal(snapshots.read(ra.hash!), text);
});

test('the engine records commit with synchronous=NORMAL; the connection is back at FULL for everything else, also inside a transaction', async () => {
  const { db, snapshots } = t.services;
  assert.equal(db.pragma('synchronous', { simple: true }), FULL);
  const seen = withEngineSync(db, () => db.pragma('synchronous', { simple: true }));
  assert.equal(seen, 1, 'NORMAL inside withEngineSync');
  assert.equal(db.pragma('synchronous', { simple: true }), FULL);
  const started = startBackup(db, devices[0], null, 'manual');
  await finishBackup(db, snapshots, started, { ok: false, failure: 'TIMEOUT', message: 'timed out' });
  assert.equal(db.pragma('synchronous', { simple: true }), FULL, 'finishBackup put FULL back');
  // An import records inside its own (audited) transaction, where SQLite cannot change the setting: it stays FULL.
  const inside = db
    .transaction(() => {
      const s = startBackup(db, devices[0], null, 'import');
      finishBackupSync(db, snapshots, s, { ok: true, text: 'hostname fb1\n', ignorePatterns: [] });
      return withEngineSync(db, () => db.pragma('synchronous', { simple: true }));
    })
    .immediate();
  assert.equal(inside, FULL);
  assert.throws(
    () =>
      withEngineSync(db, () => {
        throw new Error('boom');
      }),
    /boom/,
  );
  assert.equal(db.pragma('synchronous', { simple: true }), FULL, 'FULL is back after a failure too');
});
