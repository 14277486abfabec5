// The capture memory budget (src/engine/capture/memory-budget.ts): what does not fit waits, in order; work larger than the budget runs alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryBudget } from '../../src/engine/capture/memory-budget';

const settled = () => new Promise((r) => setImmediate(r));

test('a capture that does not fit next to those in flight waits for one to end, first come first served', async () => {
  const b = new MemoryBudget(100);
  const order: string[] = [];
  const a = await b.acquire(60);
  const pending = [b.acquire(60).then((r) => (order.push('second'), r)), b.acquire(10).then((r) => (order.push('small'), r))];
  await settled();
  assert.deepEqual(order, [], 'the second big one waits, and the small one does not overtake it');
  assert.equal(b.queued, 2);
  a();
  const [second, small] = await Promise.all(pending);
  assert.deepEqual(order, ['second', 'small']);
  assert.equal(b.inUse, 70);
  second();
  small();
  small(); // a second release changes nothing
  assert.equal(b.inUse, 0);
});

test('a capture larger than the whole budget runs, but alone', async () => {
  const b = new MemoryBudget(100);
  const small = await b.acquire(10);
  let bigStarted = false;
  const big = b.acquire(500).then((r) => ((bigStarted = true), r));
  await settled();
  assert.equal(bigStarted, false, 'waits for the one in flight');
  small();
  const release = await big;
  assert.equal(bigStarted, true);
  let next = false;
  void b.acquire(1).then(() => (next = true));
  await settled();
  assert.equal(next, false, 'nothing runs beside it');
  release();
  await settled();
  assert.equal(next, true);
});
