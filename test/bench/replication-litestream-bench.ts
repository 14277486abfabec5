// Replication with engine = "litestream": the data-loss window of crashes (serve and Litestream killed with SIGKILL while versions are written, then what `litestream restore` gives back) and the restore time.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Appliance } from '../../src/app/bootstrap';
import { DB_FILE_NAME, openAppliance } from '../../src/app/bootstrap';
import { loadConfig, type AppConfig } from '../../src/config/config';
import { openDatabase } from '../../src/db/open';
import { checkDatabase } from '../../src/features/maintenance/maintenance.service';
import { checkSnapshots } from '../../src/features/maintenance/snapshots-check';
import { restoreFromLitestream, restoreLitestreamState } from '../../src/features/replication/litestream.restore';
import { LITESTREAM_PID_FILE, readMirrorManifest } from '../../src/features/replication/litestream.runner';
import { MASTER_KEY_FILE } from '../../src/identity/secrets';
import { SnapshotStore } from '../../src/store/snapshots';
import { spawnServe } from '../helpers/appliance';
import { percentile, row, type Row } from './common';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, ms = 120_000): Promise<void> {
  for (const end = Date.now() + ms; !cond(); await sleep(50)) if (Date.now() > end) throw new Error('litestream bench: timed out');
}

function pidOf(dataDir: string): number {
  try {
    return Number(readFileSync(path.join(dataDir, LITESTREAM_PID_FILE), 'utf8'));
  } catch {
    return 0;
  }
}

/**
 * `trials` crashes: serve with engine = "litestream" (interval_seconds 1) on the data dir of `a`, versions written by
 * this process every `writeEveryMs` for 3-6 s, then serve and its Litestream killed with SIGKILL; the window is how
 * far back the acknowledged versions missing from `litestream restore` (with the mirror fallback) reach.
 */
export async function runLitestreamTrials(
  say: (line: string) => void,
  o: { a: Appliance; dataDir: string; config: Readonly<AppConfig>; replica: string; write: () => number; trials: number; writeEveryMs: number },
): Promise<{ rows: Row[]; notes: string[] }> {
  const work = path.dirname(o.replica);
  const replication = { ...o.config.replication, enabled: true, engine: 'litestream' as const, replica: o.replica, interval_seconds: 1 };
  const conf = path.join(work, 'litestream-bench.conf');
  writeFileSync(
    conf,
    `[replication]\nenabled = true\nengine = "litestream"\nreplica = "${o.replica}"\ninterval_seconds = 1\n\n[maintenance]\ndb_backup_schedule = ""\n\n[backup]\nschedule = "0 0 1 1 *"\n`,
  );
  const maxId = () => Number(o.a.db.prepare('SELECT max(rowid) FROM backups').pluck().get());
  const windows: number[] = [];
  let fallbacks = 0;
  let unmirrored = 0;
  for (let i = 0; i < o.trials; i++) {
    const served = await spawnServe(['--config', conf, '--data-dir', o.dataDir, '--listen', '127.0.0.1:0']);
    const startedAt = Date.now();
    await until(() => pidOf(o.dataDir) > 0 && (readMirrorManifest(o.replica)?.consistent_at ?? 0) > startedAt);
    await until(() => existsSync(path.join(o.replica, 'litestream', 'generations')));
    const acks: { id: number; at: number }[] = [];
    for (const end = Date.now() + 3000 + Math.random() * 3000; Date.now() < end;) {
      await sleep(o.writeEveryMs);
      const at = o.write();
      acks.push({ id: maxId(), at });
    }
    const child = pidOf(o.dataDir);
    served.child.kill('SIGKILL');
    process.kill(child, 'SIGKILL');
    const killedAt = Date.now();
    await new Promise((r) => served.child.once('exit', r));
    const tmp = mkdtempSync(path.join(work, 'ls-trial-'));
    try {
      const state = await restoreLitestreamState(o.dataDir, DB_FILE_NAME, replication, tmp);
      if (state.pointInTime !== null) fallbacks++;
      const db = openDatabase(state.out, { readonly: true });
      const newest = Number(db.prepare('SELECT max(rowid) FROM backups').pluck().get());
      db.close();
      const lost = acks.filter((w) => w.id > newest);
      // What the restore would refuse: a restored state naming a file the mirror lacks.
      unmirrored += state.hashes.filter((h) => !state.files.locate(h)).length;
      windows.push(lost.length ? (killedAt - lost[0].at) / 1000 : 0);
      const via =
        state.pointInTime === null ? 'latest state' : `state at the mirror's time, ${((killedAt - state.pointInTime) / 1000).toFixed(2)} s before the kill`;
      say(`  litestream crash ${i + 1}: ${lost.length} of ${acks.length} versions lost, window ${windows.at(-1)!.toFixed(2)} s (${via})`);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  const fresh = path.join(work, 'fresh-litestream');
  mkdirSync(fresh, { mode: 0o700 });
  copyFileSync(path.join(o.dataDir, MASTER_KEY_FILE), path.join(fresh, MASTER_KEY_FILE));
  let t = performance.now();
  const restored = await restoreFromLitestream(fresh, DB_FILE_NAME, replication);
  const restoreS = (performance.now() - t) / 1000;
  t = performance.now();
  const b = openAppliance({}, loadConfig({ dataDir: fresh }, { CONFVAULT_LOG_LEVEL: 'silent' }));
  const ok = checkDatabase(b.db).ok && checkSnapshots(b.db, new SnapshotStore(fresh)).ok;
  b.close();
  const checkS = (performance.now() - t) / 1000;
  const p50 = percentile(windows, 50);
  const max = Math.max(...windows);
  say(`  litestream: window median ${p50.toFixed(2)} s, max ${max.toFixed(2)} s; restore ${restoreS.toFixed(2)} s; db check ${ok ? 'ok' : 'FAILED'}`);
  return {
    rows: [
      row(`engine = "litestream": data-loss window over ${o.trials} crashes, max`, `${max.toFixed(2)} s (median ${p50.toFixed(2)} s)`, '≤ 5 s', max <= 5, {
        p50,
        max,
        trials: o.trials,
        mirror_fallbacks: fallbacks,
      }),
      row('engine = "litestream": restored states naming a file the mirror lacks', String(unmirrored), '0', unmirrored === 0),
      row('engine = "litestream": restore onto a fresh data dir', `${restoreS.toFixed(2)} s`, '< 60 s', restoreS < 60, { files: restored.filesCopied }),
      row('engine = "litestream": db check of the restored data dir', `${checkS.toFixed(2)} s, ${ok ? 'ok' : 'FAILED'}`, 'ok', ok),
    ],
    notes: [
      `Litestream (interval_seconds 1): serve and its Litestream killed with SIGKILL after 3-6 s of writes, ${o.trials} times; window = the kill minus the acknowledgement of the oldest version the restored state lacks; ${fallbacks} of ${o.trials} restores went back to the snapshot mirror's time. Restore: restoreFromLitestream in-process (litestream restore, the files, db restore's checks).`,
    ],
  };
}
