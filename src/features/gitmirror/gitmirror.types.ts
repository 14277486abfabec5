// What the git mirror's service and push need: the database, the snapshot store, the settings and a log.
import type { Logger } from 'pino';
import type { DB } from '../../db/open';
import type { AppConfig } from '../../config/config';
import type { SnapshotStore } from '../../store/snapshots';

export interface MirrorContext {
  db: DB;
  store: SnapshotStore;
  config: Readonly<AppConfig>;
  log: Logger | null;
}

/** One [[git_mirror.remote]]. */
export type RemoteConfig = AppConfig['git_mirror']['remote'][number];
