// Contract between the backup runner and the collection engine (transports, session driver, normaliser).

import type { FailureType } from '../features/backups/failure-types';
import type { SourceEncoding } from '../lib/decode';

export { FAILURE_TYPES, type CollectTarget, type FailureType } from '../features/backups/failure-types';

/** Failure types meaning no session could be established: the device counts as unreachable. */
export const UNREACHABLE_FAILURES: ReadonlySet<FailureType> = new Set<FailureType>(['TIMEOUT', 'CONNECTION_REFUSED', 'DNS_ERROR', 'NETWORK_UNREACHABLE']);

/** Failure types worth retrying with backoff (transient). */
export const TRANSIENT_FAILURES: ReadonlySet<FailureType> = new Set<FailureType>(['TIMEOUT', 'CONNECTION_REFUSED', 'NETWORK_UNREACHABLE', 'DISCONNECTED']);

export interface CollectLimits {
  connect_timeout_ms: number;
  login_timeout_ms: number;
  command_timeout_ms: number;
  overall_timeout_ms: number;
  max_output_bytes: number;
}

export const DEFAULT_LIMITS: CollectLimits = {
  connect_timeout_ms: 10_000,
  login_timeout_ms: 20_000,
  command_timeout_ms: 30_000,
  overall_timeout_ms: 120_000,
  max_output_bytes: 32 * 1024 * 1024,
};

export interface CollectSuccess {
  ok: true;
  /** Output of the capture commands as received, after terminal clean-up and the template's command_output cuts, before strip/redact. */
  raw: string;
  /** What gets stored: strip patterns removed, redaction applied, LF line endings, trailing newline. */
  text: string;
  /** How the device's bytes were decoded when they were not plain UTF-8 (null: the text is the device's bytes). */
  encoding: SourceEncoding | null;
  host_key: string | null;
  duration_ms: number;
}

export interface CollectFailure {
  ok: false;
  failure: FailureType;
  /** One sentence a network engineer understands. Never contains configuration text or secrets. */
  message: string;
  /** True when a session was established (so the device is reachable despite the failure). */
  reachable: boolean;
  host_key: string | null;
  duration_ms: number;
}

export type CollectResult = CollectSuccess | CollectFailure;

/**
 * A classified collection failure raised inside the engine and turned into a CollectFailure by collectConfig.
 * `reachable` is left undefined when the raiser cannot tell; collectConfig then uses what it has seen.
 */
export class CollectError extends Error {
  readonly failure: FailureType;
  readonly reachable: boolean | undefined;

  constructor(failure: FailureType, message: string, reachable?: boolean) {
    super(message);
    this.name = 'CollectError';
    this.failure = failure;
    this.reachable = reachable;
  }
}
