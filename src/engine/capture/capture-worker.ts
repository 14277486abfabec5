// Entry of the engine's worker threads: a capture worker post-processes one captured configuration at a time (capture-pool.ts); a session worker (workerData[ENGINE_WORKER_ROLE] = SESSION_ROLE) drives device sessions (session-pool.ts). One bundle for both, built once.
import { workerData } from 'node:worker_threads';
import { serveWorkerTasks } from '../../runtime/worker-pool';
import { processCapture, type CaptureTask } from './capture-task';
import { serveSessions } from './session-worker';
import { ENGINE_WORKER_ROLE, SESSION_ROLE } from './session-messages';

if ((workerData as Record<string, unknown> | null)?.[ENGINE_WORKER_ROLE] === SESSION_ROLE) serveSessions();
else serveCaptures();

function serveCaptures(): void {
  serveWorkerTasks({
    capture: (task) => {
      const answer = processCapture(task as unknown as CaptureTask);
      if (!answer.ok || answer.empty) return { value: answer };
      // The compressed body is moved, not copied, to the main thread; a Buffer sharing a larger pool is copied first.
      const body = answer.prepared.snapshot.body;
      const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : new Uint8Array(body);
      answer.prepared.snapshot.body = own;
      return { value: answer, transfer: [own.buffer as ArrayBuffer] };
    },
  });
}
