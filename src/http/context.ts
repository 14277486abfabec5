// What every request handler can reach (database, settings, logger, secret box, snapshots, the backup jobs it runs)
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
  /** Runs the backup jobs this process starts (Back up now, the Jobs page) with its one runner, built by the composition root (src/app/services.ts). */
  jobs: ProcessJobs;
  /** Platform and credential detection for `template_id` / `credential_id` "auto" (engine/device-detect.ts, built by the composition root). */
  detector: DeviceDetector;
  /** Takes the syslog messages collectors forward (src/events/start.ts, set by `serve`); unset: POST /collector/v1/events answers 503. */
  collectorEvents?: CollectorEventSink;
}

/** Syslog messages a collector of `zone` received at its site: matched by the central's event backups, only for devices of that zone. */
export interface CollectorEventSink {
  accept(
    zone: string,
    messages: readonly { address: string; raw: string }[],
  ): Promise<{ received: number; change_events: number; other_zone: number; unknown_senders: number; malformed: number }>;
}

/** Detection at an address: the template and credential picked (null: none), and why. */
export interface DeviceDetector {
  detectAt(
    actor: Actor,
    at: { host: string; port: number; protocol: 'ssh' | 'telnet'; group_id: number | null },
    first: number | null,
  ): Promise<{ template_id: number | null; credential_id: number | null; reason: string }>;
}

/**
 * This process's runner of backup jobs (src/engine/jobs.ts JobExecutor, built by the composition root): the owner it
 * writes on the jobs it runs at once, and running one of them now.
 */
export interface ProcessJobs {
  readonly owner: string;
  execute(jobId: string): Promise<unknown>;
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
