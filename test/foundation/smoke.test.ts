// The harness itself: a test appliance answers /healthz and authenticates a key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestAppliance } from '../helpers/appliance';

test('test appliance serves /healthz and authenticates API keys', async () => {
  const t = await startTestAppliance();
  try {
    const health = await t.api('/healthz');
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: 'ok' });
    const key = await t.keyFor({ permissions: ['devices.view'] });
    const res = await t.api('/api/v1/no-such-thing', { key });
    assert.equal(res.status, 404);
    const body = (await res.json()) as { error: { code: string; request_id: string } };
    assert.equal(body.error.code, 'ROUTE_NOT_FOUND');
    assert.equal(body.error.request_id, res.headers.get('x-request-id'));
    const noKey = await t.api('/api/v1/no-such-thing');
    assert.equal(noKey.status, 401);
  } finally {
    await t.close();
  }
});
