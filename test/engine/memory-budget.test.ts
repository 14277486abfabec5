// The capture memory budget (src/engine/capture/memory-budget.ts): captures are admitted before their bytes arrive and account them as they do; what does not fit waits, in order; a capture larger than the budget runs alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryBudget, memoryPlan, type CaptureShare, type HeapCeiling } from '../../src/engine/capture/memory-budget';

const settled = () => new Promise((r) => setImmediate(r));

test('bytes are counted as they arrive; once those in flight fill the budget, the next capture waits for one to end, first come first served', async () => {
  const b = new MemoryBudget(100);
  const a = await b.admit();
  const c = await b.admit();
  a.add(60);
  c.add(40);
  assert.equal(b.inUse, 100);
  const order: string[] = [];
  const pending = [b.admit().then((s) => (order.push('third'), s)), b.admit().then((s) => (order.push('fourth'), s))];
  await settled();
  assert.deepEqual(order, [], 'a full budget admits nothing new');
  assert.equal(b.queued, 2);
  a.release();
  const [third, fourth] = await Promise.all(pending);
  assert.deepEqual(order, ['third', 'fourth'], 'in order, as soon as the bytes in flight are under the limit');
  assert.equal(b.inUse, 40);
  for (const s of [c, third, fourth]) s.release();
  c.release(); // a second release changes nothing
  assert.equal(b.inUse, 0);
});

test('post-processing waits for room next to the captures in flight, but one always runs: no deadlock when every capture holds bytes', async () => {
  const b = new MemoryBudget(100);
  const shares: CaptureShare[] = [];
  for (let i = 0; i < 3; i++) shares.push(await b.admit());
  shares.forEach((s) => s.add(30));
  const done: number[] = [];
  // Each wants room for its post-processing; together far over the budget.
  const steps = shares.map((s, i) => s.reserve(50).then(() => done.push(i)));
  await settled();
  assert.deepEqual(done, [0], 'the first runs although it does not fit');
  assert.equal(b.inUse, 140);
  shares[0].release();
  await settled();
  assert.deepEqual(done, [0, 1], 'the next runs once no other step does (60 + 50 is over the budget too)');
  assert.equal(b.inUse, 110);
  shares[1].release();
  await settled();
  assert.deepEqual(done, [0, 1, 2]);
  shares[2].release();
  await Promise.all(steps);
  assert.equal(b.inUse, 0);
});

test('a capture larger than the whole budget runs, but alone', async () => {
  const b = new MemoryBudget(100);
  const big = await b.admit();
  big.add(500);
  let next = false;
  const waiting = b.admit().then((s) => ((next = true), s));
  await settled();
  assert.equal(next, false, 'nothing starts beside it');
  await big.reserve(1000);
  assert.equal(b.inUse, 1500, 'its post-processing runs: no other step does');
  big.release();
  (await waiting).release();
  assert.equal(next, true);
  assert.equal(b.inUse, 0);
});

const heap = (c: HeapCeiling) => c.maxOldGenerationSizeMb + c.maxYoungGenerationSizeMb;
const MB = 1024 * 1024;

test("the budget holds the worker threads' heap ceilings first, then the captures' bytes: together never more than capture_memory_mb", () => {
  for (const capture_memory_mb of [256, 512, 768, 1024, 4096]) {
    for (const max_output_mb of [4, 32, 64]) {
      for (const sessionThreads of [0, 1, 2]) {
        const p = memoryPlan({ capture_memory_mb, max_output_mb }, { sessionThreads, maxCaptureWorkers: 2 });
        const heaps = sessionThreads * heap(p.sessionHeap) + p.captureWorkers * heap(p.captureHeap);
        const what = JSON.stringify({ capture_memory_mb, max_output_mb, sessionThreads, p });
        assert.ok(p.captureWorkers >= 1 && p.captureWorkers <= 2, what);
        if (heaps <= capture_memory_mb) assert.equal(heaps * MB + p.captureBytes, capture_memory_mb * MB, what);
        else assert.equal(p.captureBytes, 0, `heaps over the budget: captures one at a time: ${what}`);
      }
    }
  }
});

test('the defaults on a 2-core host: one capture worker whose heap holds a max_output_mb capture, and room left for captures in flight', () => {
  const p = memoryPlan({ capture_memory_mb: 512, max_output_mb: 32 }, { sessionThreads: 2, maxCaptureWorkers: 1 });
  assert.equal(p.captureWorkers, 1);
  // Measured: the post-processing of a 30 MB configuration needs more than 128 MB of old generation and fits in 160.
  assert.ok(p.captureHeap.maxOldGenerationSizeMb >= 160 * (32 / 30), JSON.stringify(p));
  assert.ok(p.captureBytes >= 128 * MB, `room for four 32 MB captures at once at least: ${JSON.stringify(p)}`);
  const more = memoryPlan({ capture_memory_mb: 2048, max_output_mb: 32 }, { sessionThreads: 2, maxCaptureWorkers: 2 });
  assert.equal(more.captureWorkers, 2, 'a larger budget affords a second capture worker');
  const tight = memoryPlan({ capture_memory_mb: 600, max_output_mb: 32 }, { sessionThreads: 2, maxCaptureWorkers: 2 });
  assert.equal(tight.captureWorkers, 1, 'no second worker that would leave no room for a capture of the largest size');
});
