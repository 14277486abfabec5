// What every request handler can reach: the database, settings, logger, secret box; and the per-request variables.
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config';
import type { DB } from '../db/open';
import type { SecretBox } from '../identity/secrets';
import type { Principal } from '../identity/principal';
import type { SnapshotStore } from '../store/snapshots';
import type { BackupRunner } from '../engine/runner';

export interface AppServices {
  db: DB;
  config: Readonly<AppConfig>;
  log: Logger;
  secrets: SecretBox;
  /** Absolute data directory (database, master key, snapshots). */
  dataDir: string;
  snapshots: SnapshotStore;
  /** The process's backup runner (set by `serve`): manual backups share its one-backup-per-device guard. */
  runner?: BackupRunner;
}

export interface AppEnv {
  Variables: {
    requestId: string;
    app: AppServices;
    principal: Principal;
    /** IANA zone used to render timestamps in this request. */
    timezone: string;
  };
}
