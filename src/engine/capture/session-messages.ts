// The engine worker's contract: its bundle, the role a thread plays, and the messages between the session pool (session-pool.ts) and a session worker thread (session-worker.ts).
import type { TemplateSpec } from '../../templates/types';
import type { CapturedParts } from '../collect';
import type { CollectFailure, CollectLimits, CollectTarget } from '../types';

/** Name of the engine workers' bundle among the executable's assets (build/build.mjs writes it): capture and session workers. */
export const ENGINE_WORKER_ASSET = 'workers/capture-worker.cjs';
/** Its entry in the source tree, bundled once per process in development. */
export const ENGINE_WORKER_ENTRY = 'src/engine/capture/capture-worker.ts';
/** workerData key naming a thread's role: SESSION_ROLE, or absent for a capture worker. */
export const ENGINE_WORKER_ROLE = 'engineWorkerRole';
export const SESSION_ROLE = 'session';

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
