// What every request handler can reach: the database, settings, logger, secret box; and the per-request variables.
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config';
import type { DB } from '../db/open';
import type { SecretBox } from '../identity/secrets';
import type { Principal } from '../identity/principal';
import type { Actor, Door } from '../identity/actor';
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
    /** Set by the web session gate; API requests are the key's door. */
    door?: Door;
    /** IANA zone used to render timestamps in this request. */
    timezone: string;
  };
}

/** The acting principal of a request and the door it came through, for the services' policy and audit. */
export function actorOf(c: { get(key: 'principal'): Principal; get(key: 'door'): Door | undefined; get(key: 'requestId'): string }): Actor {
  const principal = c.get('principal');
  const door: Door = c.get('door') ?? (principal.apiKeyId !== null ? { kind: 'api', apiKeyId: principal.apiKeyId } : { kind: 'system' });
  return { principal, door, requestId: c.get('requestId') ?? null };
}
