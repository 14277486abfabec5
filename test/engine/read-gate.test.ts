// Back-pressure from the capture memory budget (memory-budget.ts) to the device sockets (read-gate.ts, readInTurns in tcp.ts): over the budget, every capture but the oldest pauses its reads; under it, all read again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { MemoryBudget } from '../../src/engine/capture/memory-budget';
import { CaptureGate, gateFor } from '../../src/engine/capture/read-gate';
import { readGate, readInTurns } from '../../src/engine/transports/tcp';

test('over the budget every capture but the oldest is held, the oldest never; all go again once under, and a released capture passes the turn to the next oldest', async () => {
  const b = new MemoryBudget(100);
  const shares = [await b.admit(), await b.admit(), await b.admit()];
  const late = await b.admit();
  const held = shares.map(() => false);
  shares.forEach((s, i) => s.onHold((h) => (held[i] = h)));
  shares[0].add(40);
  shares[1].add(40);
  assert.deepEqual(held, [false, false, false], 'under the limit nobody is held');
  shares[2].add(30);
  assert.deepEqual(held, [false, true, true], 'over it, all but the oldest');
  shares[0].add(500);
  assert.equal(held[0], false, 'the oldest keeps reading, however much it holds: it must finish for memory to come back');
  shares[0].release();
  assert.deepEqual(held.slice(1), [false, false], 'back under the limit, everyone reads again');
  shares[1].add(100);
  assert.deepEqual(held.slice(1), [false, true], 'the second is now the oldest, and never held');
  late.onHold((h) => (held[3] = h));
  assert.equal(held[3], true, 'a capture subscribing while over the limit hears at once that it is held');
  shares[1].release();
  assert.deepEqual(held.slice(2), [false, false]);
  shares[2].release();
  late.release();
  assert.equal(b.inUse, 0);
});

test('a held gate waits for go, or for its bound (a quarter of the command timeout, 2 s at most) so the device idle timer never runs out', async () => {
  assert.equal(gateFor({ command_timeout_ms: 1000 })['maxHold'], 250);
  assert.equal(gateFor(undefined)['maxHold'], 2000);
  const gate = new CaptureGate(60_000);
  assert.equal(gate.whenOpen(), null, 'open: no wait');
  gate.set(true);
  const waiting = gate.whenOpen();
  assert.ok(waiting);
  gate.set(false);
  await waiting;
  const bounded = new CaptureGate(20);
  bounded.set(true);
  await bounded.whenOpen(); // resolves by its bound, the gate still held
  assert.equal(bounded.isHeld, true);
});

test("a held capture's socket reads no more than a turn until its gate opens; then the rest arrives", async () => {
  const total = 4 * 1024 * 1024;
  const server = net.createServer((s) => s.end(Buffer.alloc(total, 0x61)));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const gate = new CaptureGate(60_000);
    gate.set(true);
    const { port } = server.address() as net.AddressInfo;
    const sock = net.connect({ host: '127.0.0.1', port });
    let got = 0;
    sock.on('data', (c: Buffer) => (got += c.length));
    readGate.run(gate, () => readInTurns(sock));
    // Wait until the held socket has paused after its first turn and stayed so for some turns of the loop.
    for (let i = 0; i < 200 && !sock.isPaused(); i++) await new Promise((r) => setTimeout(r, 5));
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    assert.ok(sock.isPaused(), 'held after its first turn');
    assert.ok(got > 0 && got < total / 2, `read ${got} bytes while held`);
    gate.set(false);
    await once(sock, 'end');
    assert.equal(got, total, 'everything arrives once it goes');
    sock.destroy();
  } finally {
    server.close();
  }
});
