// Shared by the engine and the backup services: why a backup failed (the recorded failure types), and what one device backup connects to.

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

/** Where and how one device backup connects (address, decrypted credential, host key state), or why it must not. */
export interface CollectTarget {
  host: string;
  port: number;
  protocol: 'ssh' | 'telnet';
  username: string;
  password?: string | null;
  private_key?: string | null;
  passphrase?: string | null;
  enable_secret?: string | null;
  /** "SHA256:<base64>" fingerprint recorded on the first successful connection, or null. */
  known_host_key?: string | null;
  /** The one changed host key fingerprint a user approved for this device; any other changed key is refused. */
  accepted_host_key?: string | null;
  /** Set when the backup must not run (the credential may not go there, or cannot be read): no connection is made. */
  refused?: { failure: FailureType; message: string };
}
