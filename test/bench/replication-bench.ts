// Replication: the data-loss window (how far the replica trails the last acknowledged write, sampled while versions are written) and the restore time of a database with 10,000 versions.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { DB_FILE_NAME, openAppliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { importBackup } from '../../src/features/backups/import.service';
import { checkDatabase } from '../../src/features/maintenance/maintenance.service';
import { checkSnapshots } from '../../src/features/maintenance/snapshots-check';
import { restoreFromReplica } from '../../src/features/replication/replication.restore';
import { runLitestreamTrials } from './replication-litestream-bench';
import { readReplicaManifest, replicateOnce, startReplication } from '../../src/features/replication/replication.service';
import { MASTER_KEY_FILE } from '../../src/identity/secrets';
import { SnapshotStore } from '../../src/store/snapshots';
import { withEngineSync } from '../../src/db/open';
import { makeDataTemplate, tempDir } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { num, percentile, row, type Section } from './common';

const configText = (i: number, d: number) =>
  `hostname site-${d}\n! revision ${i}\n` + Array.from({ length: 40 }, (_, k) => `interface ge-0/0/${k}\n description uplink ${k} rev ${i}\n`).join('');

/** `versions` versions over 50 devices, then a sampled window while writing every `writeEveryMs` for `seconds`. */
export async function runReplicationBench(
  say: (line: string) => void,
  o: { versions: number; interval: number; seconds: number; writeEveryMs: number; litestreamTrials: number },
): Promise<Section> {
  const work = tempDir('confvault-replication-bench-');
  try {
    const dataDir = await makeDataTemplate(path.join(work, 'data'));
    const replica = path.join(work, 'replica');
    const config = loadConfig({ dataDir }, { CONFVAULT_LOG_LEVEL: 'silent' });
    const a = openAppliance({}, config);
    const template = seedBuiltinTemplate(a.db, 'frr');
    const devices = Array.from({ length: 50 }, (_, d) =>
      seedDevice(a.db, { name: `site-${d}`, credential_id: seedCredential(a.db, a.secrets, { name: `c${d}`, password: 'pw-bench-1' }), template_id: template }),
    );
    let seq = 0;
    const write = () => {
      const d = seq % devices.length;
      importBackup(a.db, SYSTEM_ACTOR, a.snapshots, devices[d], configText(seq++, d));
      return Date.now();
    };
    let t = performance.now();
    // Seeding only: without an fsync per commit (the measured part below runs with the appliance's settings).
    withEngineSync(a.db, () => {
      for (let i = 0; i < o.versions; i++) write();
    });
    say(`  seeded ${num(o.versions)} versions in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    t = performance.now();
    const known = new Set<string>();
    const first = await replicateOnce(a.db, a.snapshots, replica, known);
    const firstS = (performance.now() - t) / 1000;
    say(`  first pass: ${(first.db_bytes / 1e6).toFixed(1)} MB database, ${num(first.files_copied)} files in ${firstS.toFixed(2)} s`);
    write();
    t = performance.now();
    const next = await replicateOnce(a.db, a.snapshots, replica, known);
    const nextS = (performance.now() - t) / 1000;
    say(`  pass after one new version: ${next.files_copied} file, ${nextS.toFixed(2)} s`);

    // The same writes without replication first: the event-loop delay they cost alone, to compare with below.
    const bare = monitorEventLoopDelay({ resolution: 10 });
    bare.enable();
    for (const stop = Date.now() + Math.min(10, o.seconds) * 1000; Date.now() < stop;) {
      await new Promise((r) => setTimeout(r, o.writeEveryMs));
      write();
    }
    bare.disable();
    const bareP99 = bare.percentile(99) / 1e6;

    // The window: at each sample, had the host died then, the replica would lack what was acknowledged after consistent_at.
    const running = startReplication(
      a.db,
      a.snapshots,
      dataDir,
      { ...config, replication: { ...config.replication, enabled: true, replica, interval_seconds: o.interval } },
      null,
    );
    const windows: number[] = [];
    // The event loop of the process that replicates (and, here, also writes): what a pass costs a server's requests.
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const end = Date.now() + o.seconds * 1000;
    let lastAck = write();
    while (Date.now() < end) {
      await new Promise((r) => setTimeout(r, o.writeEveryMs));
      lastAck = write();
      const m = readReplicaManifest(replica);
      if (m) windows.push(Math.max(0, lastAck - m.consistent_at) / 1000);
    }
    await running.stop();
    loop.disable();
    const loopP99 = loop.percentile(99) / 1e6;
    const loopMax = loop.max / 1e6;
    say(
      `  event-loop delay meanwhile: p99 ${loopP99.toFixed(1)} ms, max ${loopMax.toFixed(1)} ms (the same writes without replication: p99 ${bareP99.toFixed(1)} ms)`,
    );
    const p50 = percentile(windows, 50);
    const max = Math.max(...windows);
    say(`  data-loss window over ${o.seconds} s of writes (interval ${o.interval} s): median ${p50.toFixed(1)} s, max ${max.toFixed(1)} s`);
    // engine = "litestream" on the same database, its snapshot mirror the replica's snapshots/ (already complete).
    const ls = await runLitestreamTrials(say, { a, dataDir, config, replica, write, trials: o.litestreamTrials, writeEveryMs: o.writeEveryMs });
    const versionsNow = seq;
    a.close();

    const fresh = path.join(work, 'fresh');
    mkdirSync(fresh, { mode: 0o700 });
    copyFileSync(path.join(dataDir, MASTER_KEY_FILE), path.join(fresh, MASTER_KEY_FILE));
    t = performance.now();
    const restored = await restoreFromReplica(fresh, DB_FILE_NAME, replica);
    const restoreS = (performance.now() - t) / 1000;
    t = performance.now();
    const b = openAppliance({}, loadConfig({ dataDir: fresh }, { CONFVAULT_LOG_LEVEL: 'silent' }));
    const checks = [checkDatabase(b.db), checkSnapshots(b.db, new SnapshotStore(fresh))];
    b.close();
    const checkS = (performance.now() - t) / 1000;
    const ok = checks.every((c) => c.ok);
    say(
      `  restore: ${num(restored.filesCopied)} files and the database in ${restoreS.toFixed(2)} s; db check ${ok ? 'ok' : 'FAILED'} in ${checkS.toFixed(2)} s`,
    );
    return {
      title: `Replication (${num(versionsNow)} versions, [replication] interval_seconds ${o.interval})`,
      rows: [
        row(
          'data-loss window, max over the samples',
          `${max.toFixed(1)} s`,
          `≤ interval + one pass + 1 s (${o.interval} + ${nextS.toFixed(1)} + 1 s)`,
          max <= o.interval + nextS + 1,
          {
            p50,
            max,
            samples: windows.length,
          },
        ),
        row('data-loss window, median', `${p50.toFixed(1)} s`, 'info', null),
        row(
          'event-loop delay p99 while replicating and writing',
          `${loopP99.toFixed(1)} ms (max ${loopMax.toFixed(1)} ms); writing alone ${bareP99.toFixed(1)} ms`,
          'info',
          null,
        ),
        row('steady pass (one new version)', `${nextS.toFixed(2)} s`, 'info', null, { db_mb: first.db_bytes / 1e6 }),
        row(`first pass (${num(first.files_copied)} files)`, `${firstS.toFixed(2)} s`, 'info', null),
        row('restore from the replica onto a fresh data dir', `${restoreS.toFixed(2)} s`, '< 60 s', restoreS < 60, { files: restored.filesCopied }),
        row('db check of the restored data dir', `${checkS.toFixed(2)} s, ${ok ? 'ok' : 'FAILED'}`, 'ok', ok),
        ...ls.rows,
      ],
      notes: [
        'Window: while a version is written every ' +
          `${o.writeEveryMs} ms, the time between the last acknowledged write and the replica's consistent_at, sampled after each write (what a crash at that moment would lose).`,
        "Restore: restoreFromReplica in-process (the work of `confvault db restore --from-replica`, without the process start); the check is `db check`'s database and snapshot parts.",
        ...ls.notes,
      ],
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
