// SnapshotStore.putAsync: the same content-addressed file as put(), without holding the event loop on a large configuration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { SnapshotStore, sha256Hex } from '../../src/store/snapshots';
import { tempDir } from '../helpers/appliance';

const config = (tag: string, mb: number) => {
  const lines: string[] = [];
  for (let i = 0, size = 0; size < mb * 1_000_000; i++) {
    const l = `interface ${tag}-${i} description uplink ${i % 97} port ${(i * 7919) % 10007}`;
    lines.push(l);
    size += l.length + 1;
  }
  return lines.join('\n') + '\n';
};

/** The longest gap between 5 ms ticks while `work` runs: how long the event loop was held. */
async function longestStall(work: () => unknown): Promise<number> {
  let last = performance.now();
  let worst = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 5);
  await new Promise((r) => setTimeout(r, 20));
  await work();
  await new Promise((r) => setTimeout(r, 20));
  clearInterval(tick);
  return worst;
}

test('putAsync stores the same verified file as put, dedups, and leaves the event loop free', async () => {
  const dir = tempDir();
  try {
    const store = new SnapshotStore(dir);
    const text = config('a', 10);
    let info: Awaited<ReturnType<SnapshotStore['putAsync']>> | undefined;
    const stall = await longestStall(async () => (info = await store.putAsync(text)));
    assert.equal(info!.hash, sha256Hex(text));
    assert.equal(info!.size, Buffer.byteLength(text));
    assert.equal(info!.compressed, true);
    assert.equal(store.read(info!.hash), text);
    assert.deepEqual(readdirSync(path.join(dir, 'snapshots', info!.hash.slice(0, 2))), [`${info!.hash}.gz`], 'no temporary file left');
    assert.deepEqual(await store.putAsync(text), info, 'identical text is stored once');

    const syncStall = await longestStall(() => store.put(config('b', 10)));
    console.log(`10 MB snapshot: put() held the event loop ${syncStall.toFixed(0)} ms, putAsync() at most ${stall.toFixed(0)} ms between ticks`);
    assert.ok(stall < 150, `putAsync held the event loop ${stall.toFixed(0)} ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('putAsync without compression writes the plain text', async () => {
  const dir = tempDir();
  try {
    const store = new SnapshotStore(dir, false);
    const info = await store.putAsync('hostname r1\n');
    assert.equal(info.compressed, false);
    assert.ok(existsSync(path.join(dir, 'snapshots', info.hash.slice(0, 2), info.hash)));
    assert.equal(store.read(info.hash), 'hostname r1\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
