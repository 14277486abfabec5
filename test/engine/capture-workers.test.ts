// The capture workers' heaps (src/runtime/worker-pool.ts, src/engine/capture): a worker stays within its heap ceiling, a post-processing that needs more fails as data without taking the server down, and a worker that handled a big capture ends so its heap is given back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createWorkerPool, OffThreadBusyError, type OffThreadTask } from '../../src/runtime/worker-pool';
import { ENGINE_WORKER_ASSET, ENGINE_WORKER_ENTRY } from '../../src/engine/capture/session-messages';
import type { CaptureAnswer } from '../../src/engine/capture/capture-task';
import { addDeflated, type DeflatedOutput } from '../../src/engine/captured-output';
import { sha256Hex } from '../../src/store/snapshots';
import { BUILTIN_FOLDER } from '../../src/templates/files';
import { DEFAULTS_ASSET } from '../../src/templates/defaults';

/** A capture task of about `mb` MB of configuration lines (blocks of them made by `block`), deflated in 256 KB parts as a session packs them, what to move, and the text. */
function captureTask(mb: number, block = (i: number) => `interface GigabitEthernet${i >> 6}/${i & 63}\n description uplink ${i % 97}\n!`) {
  const lines = ['hostname core-sw1', 'snmp-server community Heap-C0mmunity RO'];
  for (let i = 0, size = 0; size < mb * 1_000_000; i++) {
    const line = block(i);
    lines.push(line);
    size += line.length + 1;
  }
  const text = lines.join('\n') + '\n';
  const out: DeflatedOutput = { parts: [], bytes: 0 };
  for (let at = 0; at < text.length; at += 256 * 1024) addDeflated(out, text.slice(at, at + 256 * 1024));
  const template = { name: 'heap-test', strip_patterns: [], redact_patterns: ['^snmp-server community (\\S+)'], ignore_patterns: [] };
  const task: OffThreadTask = { kind: 'capture', parts: out.parts, inflated_bytes: out.bytes, template, redact_key: null, compress: true };
  return { task, transfer: out.parts.map((p) => p.buffer as ArrayBuffer), text };
}

const pool = createWorkerPool({
  asset: ENGINE_WORKER_ASSET,
  entry: ENGINE_WORKER_ENTRY,
  size: 1,
  maxQueued: 8,
  busy: () => new OffThreadBusyError('busy'),
  assets: { folders: [BUILTIN_FOLDER], files: [DEFAULTS_ASSET] },
  resourceLimits: () => ({ maxOldGenerationSizeMb: 24, maxYoungGenerationSizeMb: 8 }),
});

const run = (mb: number, retire = false) => {
  const { task, transfer } = captureTask(mb);
  return pool.run<CaptureAnswer>(task, 120_000, { transfer, retire });
};

test(
  'a post-processing that needs more than its heap ceiling ends its worker and fails; the next capture gets a new worker',
  { timeout: 120_000 },
  async () => {
    const small = await run(0.2);
    assert.ok(small.ok && !small.empty, 'a capture that fits is processed');
    const [first] = pool.workers();
    // About 10 MB of lines need far more than 24 MB of heap: the worker, not the process, runs out.
    await assert.rejects(run(10), (err: Error & { code?: string }) => err.code === 'ERR_WORKER_OUT_OF_MEMORY');
    const after = await run(0.2);
    assert.ok(after.ok && !after.empty, 'the pool goes on');
    assert.notEqual(pool.workers()[0]?.threadId, first.threadId, 'on a new worker');
  },
);

test('a big capture marked to retire ends its worker once processed (its heap given back); other tasks keep theirs', { timeout: 120_000 }, async () => {
  await run(0.2);
  const [kept] = pool.workers();
  await run(0.2);
  assert.deepEqual(
    pool.workers().map((w) => w.threadId),
    [kept.threadId],
    'an ordinary task leaves its worker in the pool',
  );
  const answer = await run(0.5, true);
  assert.ok(answer.ok, 'the retiring task is answered');
  await once(kept, 'exit');
  assert.equal(pool.workers().length, 0, 'its worker has left the pool');
  const next = await run(0.2);
  assert.ok(next.ok && pool.workers()[0].threadId !== kept.threadId, 'the next task starts a new worker');
});

test('a capture deflated as its session packed it is stored as the text it inflates to', { timeout: 120_000 }, async () => {
  const { task, transfer, text } = captureTask(1.5);
  const answer = await pool.run<CaptureAnswer>(task, 120_000, { transfer });
  assert.ok(answer.ok && !answer.empty);
  assert.equal(answer.prepared.snapshot.hash, sha256Hex(Buffer.from(text)));
  assert.equal(answer.prepared.snapshot.size, Buffer.byteLength(text));
});

test(
  'a capture whose lines share long parents fits in a 24 MB heap: its lenient fingerprint no longer builds every parent-and-line key',
  { timeout: 120_000 },
  async () => {
    // Short lines under long top-level lines: the sorting fingerprint built a key of parent and line for each line.
    const block = (i: number) => [`interface Port-channel${i}-${'x'.repeat(120)}`, ...Array.from({ length: 24 }, (_, j) => ` vlan ${j}`)].join('\n');
    const { task, transfer } = captureTask(1.25, block);
    const answer = await pool.run<CaptureAnswer>(task, 120_000, { transfer });
    assert.ok(answer.ok && !answer.empty, 'processed within the ceiling');
  },
);
