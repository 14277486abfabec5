// The appliance's own database copies: verified online copies into <data_dir>/backups/ on [maintenance] db_backup_schedule, keeping the newest N.
import { chmodSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { Cron } from 'croner';
import type { Logger } from 'pino';
import { ConfigError, type AppConfig } from '../../config/config';
import type { DB } from '../../db/open';
import { backupDatabase } from './maintenance.service';

export const DB_BACKUPS_DIR = 'backups';
/** confvault-20261124T023000Z.db (UTC), with -2, -3 ... when two copies fall in one second. */
const COPY_NAME = /^confvault-(\d{8}T\d{6}Z)(?:-(\d+))?\.db$/;
const PARTIAL_SUFFIX = '.partial';

export interface DbCopy {
  file: string;
  bytes: number;
}

export function dbBackupsDir(dataDir: string): string {
  return path.join(dataDir, DB_BACKUPS_DIR);
}

function stamp(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}

/** The copies in the folder, newest first (by the time in their name, then their sequence number). */
export function listDbCopies(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const key = (n: string) => {
    const m = COPY_NAME.exec(n)!;
    return `${m[1]}-${(m[2] ?? '1').padStart(6, '0')}`;
  };
  return names
    .filter((n) => COPY_NAME.test(n))
    .sort((a, b) => (key(a) < key(b) ? 1 : key(a) > key(b) ? -1 : 0))
    .map((n) => path.join(dir, n));
}

/**
 * Write one verified copy: taken under a ".partial" name, checked (backupDatabase runs integrity_check), then renamed,
 * so a file with a copy's name is always a whole, verified database. Then delete the oldest copies beyond `keep`.
 */
export async function writeDbCopy(db: DB, dataDir: string, keep: number, now = Date.now()): Promise<DbCopy & { pruned: string[] }> {
  const dir = dbBackupsDir(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // A copy interrupted by a crash or a full disk leaves its partial file: never a copy, always removed.
  for (const n of readdirSync(dir)) if (n.endsWith(PARTIAL_SUFFIX)) rmSync(path.join(dir, n), { force: true });
  const base = `confvault-${stamp(now)}`;
  let name = `${base}.db`;
  for (let seq = 2; listDbCopies(dir).some((f) => path.basename(f) === name); seq++) name = `${base}-${seq}.db`;
  const final = path.join(dir, name);
  const partial = final + PARTIAL_SUFFIX;
  try {
    await backupDatabase(db, partial);
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
  renameSync(partial, final);
  chmodSync(final, 0o600);
  const pruned = listDbCopies(dir).slice(keep);
  for (const f of pruned) rmSync(f, { force: true });
  return { file: final, bytes: statSync(final).size, pruned };
}

export interface DbBackupSchedule {
  stop(): Promise<void>;
}

/** Start the schedule of `serve`; an invalid expression stops the start-up with one line naming the key. */
export function startDbBackups(db: DB, dataDir: string, config: Readonly<AppConfig>, log: Logger | null): DbBackupSchedule {
  const { db_backup_schedule: expr, db_backup_keep: keep } = config.maintenance;
  if (!expr) return { stop: () => Promise.resolve() };
  let running: Promise<unknown> | null = null;
  const run = () => {
    if (running) return;
    running = writeDbCopy(db, dataDir, keep)
      .then((r) => log?.info({ file: r.file, bytes: r.bytes, pruned: r.pruned.length }, 'database copy written and verified'))
      .catch((err: unknown) => log?.error({ err }, 'database copy failed'))
      .finally(() => (running = null));
  };
  let job: Cron;
  try {
    job = new Cron(expr, { protect: true, timezone: config.server.timezone }, run);
  } catch (err) {
    throw new ConfigError(`invalid configuration: maintenance.db_backup_schedule: ${(err as Error).message}`);
  }
  return {
    async stop() {
      job.stop();
      await running;
    },
  };
}
