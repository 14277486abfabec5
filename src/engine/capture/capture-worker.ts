// Entry of a capture worker thread: post-processes one captured configuration at a time for the backup runner (capture-pool.ts).
import { serveWorkerTasks } from '../../runtime/worker-pool';
import { processCapture, type CaptureTask } from './capture-task';

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
