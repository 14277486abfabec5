// Opens the appliance's state for any command: data dir (0700), native addons, database (migrated), master key.
import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { AppConfig, ConfigFlags } from '../config/config';
import { loadConfig } from '../config/config';
import { migrate, type MigrateResult } from '../db/migrate';
import { openDatabase, type DB } from '../db/open';
import { tuneDatabase } from '../db/tuning';
import type { SecretBox } from '../identity/secrets';
import { openSecretBox } from '../features/credentials/master-key.service';
import { prepareNativeAddons } from '../runtime/native';
import { runtimeEnv } from '../config/runtime-env';
import { SnapshotStore } from '../store/snapshots';
import { syncBuiltinTemplates } from '../features/templates/templates.service';

export interface Appliance {
  config: Readonly<AppConfig>;
  dataDir: string;
  dbFile: string;
  db: DB;
  secrets: SecretBox;
  snapshots: SnapshotStore;
  migration: MigrateResult;
  close(): void;
}

export const DB_FILE_NAME = 'confvault.db';

export function ensureDataDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // mkdir's mode is filtered by the umask and ignored for an existing folder.
  if ((statSync(dir).mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
}

export function openAppliance(flags: ConfigFlags, config: Readonly<AppConfig> = loadConfig(flags)): Appliance {
  const dataDir = config.storage.data_dir;
  ensureDataDir(dataDir);
  prepareNativeAddons(dataDir, runtimeEnv().nativeDir);
  const dbFile = path.join(dataDir, DB_FILE_NAME);
  const db = openDatabase(dbFile);
  const p = config.performance;
  tuneDatabase(db, { statementCache: p.statement_cache, engineSyncNormal: p.engine_sync_normal, historyPageCache: p.history_page_cache });
  // Device secrets are encrypted, but configuration metadata is still nobody else's business.
  for (const f of [dbFile, `${dbFile}-wal`, `${dbFile}-shm`]) {
    try {
      if (existsSync(f) && (statSync(f).mode & 0o077) !== 0) chmodSync(f, 0o600);
    } catch {
      /* not ours to change (e.g. another user's file read by an operator); the 0700 data dir still guards it */
    }
  }
  let migration: MigrateResult;
  let secrets: SecretBox;
  try {
    migration = migrate(db, dbFile);
    syncBuiltinTemplates(db);
    // A master key that cannot open this database's secrets stops every command here, not the first backup.
    secrets = openSecretBox(db, dataDir);
  } catch (err) {
    db.close();
    throw err;
  }
  return {
    config,
    dataDir,
    dbFile,
    db,
    secrets,
    snapshots: new SnapshotStore(dataDir, config.storage.compress_snapshots),
    migration,
    close: () => {
      if (db.open) db.close();
    },
  };
}
