// Child process: the storage path of one backup of a 200 KB configuration (fingerprint, snapshot file with fsync, record transactions), timed per backup.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openAppliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { changeFingerprint } from '../../src/templates/patterns';
import { finishBackup, startBackup } from '../../src/features/backups/backup-record.service';
import { withEngineSync } from '../../src/db/open';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { isEntryPoint, mean, percentile, reportFatal, sendToParent } from './common';
import { bigConfig } from './seed-configs';

export interface Timing {
  mean_ms: number;
  p50_ms: number;
  p99_ms: number;
}

export interface StorageResult {
  backups: number;
  text_bytes: number;
  stored_bytes: number;
  total: Timing;
  fingerprint: Timing;
  start_backup: Timing;
  finish_backup: Timing;
  put_alone: Timing;
}

export function isStorageResult(m: unknown): m is { storage: StorageResult } {
  return !!m && typeof m === 'object' && 'storage' in m;
}

const timing = (xs: number[]): Timing => ({ mean_ms: mean(xs), p50_ms: percentile(xs, 50), p99_ms: percentile(xs, 99) });

async function run(count: number): Promise<StorageResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'confvault-bench-storage-'));
  try {
    const a = openAppliance({}, loadConfig({ dataDir: path.join(dir, 'data') }, { CONFVAULT_LOG_LEVEL: 'silent' }));
    const { db, secrets, snapshots } = a;
    const template = seedBuiltinTemplate(db, 'cisco-ios');
    const device = seedDevice(db, {
      name: 'chassis',
      port: 22,
      credential_id: seedCredential(db, secrets, { name: 'c', username: 'u', password: 'p' }),
      template_id: template,
    });
    // Distinct texts made before the clock starts: every put writes a new file, as a changed configuration does.
    const texts = Array.from({ length: count * 2 }, (_, i) => bigConfig('chassis', 1000 + i));
    const parts = { total: [] as number[], fingerprint: [] as number[], start: [] as number[], finish: [] as number[], put: [] as number[] };
    let stored = 0;
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      changeFingerprint(texts[i], []); // timed apart; finishBackup computes it again (the changed rule lives there)
      const t1 = performance.now();
      const started = withEngineSync(db, () => startBackup(db, device, template, 'schedule')); // as the runner does
      const t2 = performance.now();
      const done = await finishBackup(db, snapshots, started, { ok: true, text: texts[i], ignorePatterns: [] });
      const t3 = performance.now();
      parts.fingerprint.push(t1 - t0);
      parts.start.push(t2 - t1);
      parts.finish.push(t3 - t2);
      parts.total.push(t3 - t0);
      if (!done.success) throw new Error('the backup was not recorded');
    }
    for (let i = count; i < count * 2; i++) {
      const t0 = performance.now();
      const snap = snapshots.put(texts[i]);
      parts.put.push(performance.now() - t0);
      stored += snap.stored_size;
    }
    a.close();
    return {
      backups: count,
      text_bytes: Buffer.byteLength(texts[0]),
      stored_bytes: Math.round(stored / count),
      total: timing(parts.total),
      fingerprint: timing(parts.fingerprint),
      start_backup: timing(parts.start),
      finish_backup: timing(parts.finish),
      put_alone: timing(parts.put),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isEntryPoint(import.meta.url)) {
  run(Number(process.argv[2] ?? 100))
    .then((storage) => sendToParent({ storage }))
    .then(() => process.exit(0), reportFatal);
}
