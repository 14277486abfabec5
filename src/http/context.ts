// What every request handler can reach: the database, settings, logger, secret box; and the per-request variables.
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config';
import type { DB } from '../db/open';
import type { SecretBox } from '../identity/secrets';
import type { Principal } from '../identity/principal';
import type { SnapshotStore } from '../store/snapshots';

export interface AppServices {
  db: DB;
  config: Readonly<AppConfig>;
  log: Logger;
  secrets: SecretBox;
  /** Absolute data directory (database, master key, snapshots). */
  dataDir: string;
  snapshots: SnapshotStore;
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
