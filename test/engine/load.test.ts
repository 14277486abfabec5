// Many simulated devices backed up concurrently: everything finishes and each device gets its own text (timing is the benchmark's job).
// Heavy scenario: runs in npm run test:lab (test/run.sh), beside the device lab; CI runs it after npm test.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { collectConfig } from '../../src/engine/collect';
import type { CollectResult } from '../../src/engine/types';
import { startSimulator, type RunningSimulator, type SimDevice } from '../sim/simulator';
import { IOS_EXEC_TEMPLATE, IOS_TEMPLATE, fixtureTranscript, target } from '../sim/fixtures/engine-fixtures';

async function pool<T, R>(items: T[], concurrency: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

describe('load', () => {
  const transcript = fixtureTranscript('ios-like');
  const devices: SimDevice[] = Array.from({ length: 200 }, (_, i) => ({ name: `sw${String(i).padStart(4, '0')}`, hostname: `sw${i}`, transcript }));
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulator({ devices });
  });
  after(() => sim.close());

  for (const [label, template] of [
    ['shell', IOS_TEMPLATE],
    ['exec', IOS_EXEC_TEMPLATE],
  ] as const) {
    it(`backs up 200 devices at concurrency 32 (${label})`, async () => {
      const results: CollectResult[] = await pool(devices, 32, (d) => collectConfig(target(sim.port, { username: d.name }), template));
      const failures = results.filter((r) => !r.ok);
      assert.equal(
        failures.length,
        0,
        failures
          .map((f) => (f.ok ? '' : `${f.failure}: ${f.message}`))
          .slice(0, 3)
          .join('; '),
      );
      results.forEach((r, i) => {
        assert.ok(r.ok && r.text.includes(`\nhostname ${devices[i].hostname}\n`), `device ${devices[i].name} got its own config`);
      });
    });
  }
});
