// Why a backup failed: the recorded failure types, shared by the engine that detects them and the services that store them.

export const FAILURE_TYPES = [
  'TIMEOUT',
  'CONNECTION_REFUSED',
  'DNS_ERROR',
  'NETWORK_UNREACHABLE',
  'AUTH_FAILED',
  'HOST_KEY_CHANGED',
  'PROMPT_NOT_FOUND',
  'ENABLE_FAILED',
  'DISCONNECTED',
  'ALGORITHM_MISMATCH',
  'OUTPUT_TOO_LARGE',
  'COMMAND_FAILED',
  'INTERRUPTED',
  /** The stored credential cannot be decrypted with this master key: nothing was sent. */
  'CREDENTIAL_UNREADABLE',
  /** The device is held, or its credential's usage scope does not cover its group: nothing was sent. */
  'CREDENTIAL_NOT_PERMITTED',
  /** The snapshot could not be written (disk full, read-only, quota): nothing half-written was kept. */
  'STORAGE_ERROR',
  'INTERNAL',
] as const;
export type FailureType = (typeof FAILURE_TYPES)[number];
