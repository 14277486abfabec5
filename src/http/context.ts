// What every request handler can reach (database, settings, logger, secret box, snapshots, the backup runner's interface)
// and the per-request variables; the composition root (src/app/services.ts) builds it.
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config';
import type { DB } from '../db/open';
import type { SecretBox } from '../identity/secrets';
import type { Principal } from '../identity/principal';
import type { Actor, Door } from '../identity/actor';
import type { SnapshotStore } from '../store/snapshots';

export interface AppServices {
  db: DB;
  config: Readonly<AppConfig>;
  log: Logger;
  secrets: SecretBox;
  /** Absolute data directory (database, master key, snapshots). */
  dataDir: string;
  snapshots: SnapshotStore;
  /** The process's one backup runner, built by the composition root (src/app/services.ts): manual backups share its one-backup-per-device guard. */
  runner: BackupJobRunner;
}

/** What a request handler sees of one device's backup run (src/engine/runner.ts DeviceRunResult has these fields). */
export interface RunSummary {
  backupId: string | null;
  success: boolean;
  changed: boolean;
  failure: string | null;
  message: string | null;
  attempts: number;
}

/** The backup runner as request handlers use it: start one device's backup now, and ask whether one is running. */
export interface BackupJobRunner {
  isRunning(deviceId: number): boolean;
  backupDevice(deviceId: number, opts: { trigger: 'manual'; onProgress?: (deviceId: number, text: string) => void }): Promise<RunSummary>;
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
