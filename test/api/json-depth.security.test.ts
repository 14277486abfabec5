// A JSON body nested absurdly deep is a quick 422 before it is parsed, on any route; ordinary nesting and brackets inside strings pass.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { jsonNestingExceeds } from '../../src/http/middleware';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';

describe('API: JSON nesting depth', () => {
  let t: TestAppliance;
  let key: string;
  before(async () => {
    t = await startTestAppliance();
    key = await t.keyFor({ permissions: ['devices.view'] });
  });
  after(() => t.close());

  test('a 1 MB deeply nested body is a quick 422 naming the problem, whichever route', async () => {
    const n = 500_000;
    const bodies = ['['.repeat(n) + ']'.repeat(n), `{"name":${'['.repeat(n)}${']'.repeat(n)}}`];
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    for (const body of bodies) {
      const res = await t.api('/api/v1/devices', { method: 'POST', key, body, headers: { 'Content-Type': 'application/json' } });
      const json = (await res.json()) as { error: { code: string; message: string; details: { errors: { field: string; message: string }[] } } };
      assert.equal(res.status, 422);
      assert.equal(json.error.message, 'Request body is nested too deeply');
      assert.deepEqual(json.error.details.errors, [{ field: 'body', message: 'nested deeper than 32 levels' }]);
    }
    delay.disable();
    // Generous bound (shared CI machine): before, each of these held the loop for 0.4-1 s.
    assert.ok(delay.max / 1e6 < 300, `event loop held ${Math.round(delay.max / 1e6)} ms`);
  });

  test('ordinary nesting still passes; brackets inside strings do not count', () => {
    assert.equal(jsonNestingExceeds(JSON.stringify({ a: { b: [1, [2, { c: '[[[[{{{{' }]] } }), 32), false);
    assert.equal(jsonNestingExceeds(JSON.stringify({ s: '\\"' + '['.repeat(100) }), 32), false);
    assert.equal(jsonNestingExceeds('['.repeat(33) + ']'.repeat(33), 32), true);
    assert.equal(jsonNestingExceeds('['.repeat(32) + ']'.repeat(32), 32), false);
  });
});
