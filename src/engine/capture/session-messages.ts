// The messages between the backup runner's session pool (session-pool.ts) and a session worker thread (session-worker.ts).
import type { TemplateSpec } from '../../templates/types';
import type { CapturedParts } from '../collect';
import type { CollectFailure, CollectLimits, CollectTarget } from '../types';

/** To a session worker: capture one device's configuration, or stop a capture (a cancelled backup). */
export type SessionRequest =
  { type: 'capture'; id: number; target: CollectTarget; template: TemplateSpec; limits: Partial<CollectLimits> | undefined } | { type: 'abort'; id: number };

/**
 * From a session worker: bytes the device sent since the last report (the memory budget accounts them), then the
 * capture's end, its UTF-8 parts moved (not copied) to the main thread.
 */
export type SessionReply =
  | { type: 'received'; id: number; bytes: number }
  | { type: 'done'; id: number; result: (Omit<CapturedParts, 'parts'> & { parts: Uint8Array[] }) | CollectFailure };

/** A worker reports the bytes received at most this often (every MB), and once more at the capture's end. */
export const RECEIVED_REPORT_BYTES = 1024 * 1024;
