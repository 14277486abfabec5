// A session worker thread's work: drives many device sessions at once (transport, login, shell, capture) for the runner's session pool (session-pool.ts); capture-worker.ts is its entry.
import { parentPort, type MessagePort, type Transferable } from 'node:worker_threads';
import { captureParts } from '../collect';
import type { CollectFailure } from '../types';
import { RECEIVED_REPORT_BYTES, type SessionReply, type SessionRequest } from './session-messages';

/** The captures running in this thread, by the pool's id: what an abort message stops. */
const running = new Map<number, AbortController>();

async function capture(port: MessagePort, req: Extract<SessionRequest, { type: 'capture' }>): Promise<void> {
  const send = (m: SessionReply, transfer: Transferable[] = []) => port.postMessage(m, transfer);
  const controller = new AbortController();
  running.set(req.id, controller);
  let unreported = 0;
  const report = () => {
    if (unreported > 0) send({ type: 'received', id: req.id, bytes: unreported });
    unreported = 0;
  };
  try {
    const result = await captureParts(req.target, req.template, req.limits, {
      signal: controller.signal,
      onReceived: (bytes) => {
        unreported += bytes;
        if (unreported >= RECEIVED_REPORT_BYTES) report();
      },
    });
    report();
    if (!result.ok) return send({ type: 'done', id: req.id, result });
    // Each part owns its memory (ownedBuffer), so it moves; a part sharing a buffer with another is copied first.
    const seen = new Set<ArrayBufferLike>();
    const parts = result.parts.map((p) => {
      const own = p.byteOffset === 0 && p.byteLength === p.buffer.byteLength && !seen.has(p.buffer) ? p : new Uint8Array(p);
      seen.add(own.buffer);
      return own;
    });
    send(
      { type: 'done', id: req.id, result: { ...result, parts } },
      parts.map((p) => p.buffer as ArrayBuffer),
    );
  } finally {
    running.delete(req.id);
  }
}

const unsent: CollectFailure = {
  ok: false,
  failure: 'INTERNAL',
  message: 'Internal error in the collection engine (the session thread could not return the capture).',
  reachable: true,
  host_key: null,
  duration_ms: 0,
};

/** Serves the session pool's requests on this thread. */
export function serveSessions(): void {
  const port = parentPort;
  if (!port) return;
  // At normal priority, unlike the capture workers: a session runs against its device's timeouts, and on a busy
  // machine a lowered thread carrying eight 30 MB captures ran past the 120 s device_timeout.
  port.on('message', (req: SessionRequest) => {
    if (req.type === 'abort') running.get(req.id)?.abort();
    // A capture that could not be sent back (captureParts itself never throws) still ends, as a failure.
    else capture(port, req).catch(() => port.postMessage({ type: 'done', id: req.id, result: unsent } satisfies SessionReply));
  });
}
