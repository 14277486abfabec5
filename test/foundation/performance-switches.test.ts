// Each [performance] switch (docs/performance.md) turns its speed-up off, and the appliance still answers with it off.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { withEngineSync } from '../../src/db/open';
import { prepareCached } from '../../src/db/statements';
import { tuningOf } from '../../src/db/tuning';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';

const OFF = {
  CONFVAULT_PERFORMANCE_HISTORY_PAGE_CACHE: '0',
  CONFVAULT_PERFORMANCE_STATEMENT_CACHE: '0',
  CONFVAULT_PERFORMANCE_ENGINE_SYNC_NORMAL: '0',
  CONFVAULT_PERFORMANCE_LOOP_LAG_HOLD: '0',
  CONFVAULT_PERFORMANCE_SESSION_THREADS: '0',
  CONFVAULT_PERFORMANCE_SEARCH_INDEX: '0',
};

let on: TestAppliance;
let off: TestAppliance;
before(async () => {
  [on, off] = await Promise.all([startTestAppliance(), startTestAppliance(OFF)]);
});
after(async () => {
  await Promise.all([on?.close(), off?.close()]);
});

/** The synchronous setting a commit inside withEngineSync runs with: 1 NORMAL, 2 FULL. */
const engineSync = (t: TestAppliance) => withEngineSync(t.services.db, () => t.services.db.pragma('synchronous', { simple: true }));

test('the defaults: every speed-up on', () => {
  assert.deepEqual(on.services.config.performance, {
    history_page_cache: true,
    statement_cache: true,
    engine_sync_normal: true,
    loop_lag_hold: true,
    session_threads: true,
    search_index: true,
  });
  assert.deepEqual(tuningOf(on.services.db), { statementCache: true, engineSyncNormal: true, historyPageCache: true });
  assert.equal(prepareCached(on.services.db, 'SELECT 1'), prepareCached(on.services.db, 'SELECT 1'), 'one statement kept');
  assert.equal(engineSync(on), 1);
});

test('switched off by CONFVAULT_PERFORMANCE_*: statements prepared per use, engine commits with FULL, the database tuned so', () => {
  assert.deepEqual(Object.values(off.services.config.performance), [false, false, false, false, false, false]);
  assert.deepEqual(tuningOf(off.services.db), { statementCache: false, engineSyncNormal: false, historyPageCache: false });
  assert.notEqual(prepareCached(off.services.db, 'SELECT 1'), prepareCached(off.services.db, 'SELECT 1'));
  assert.equal(engineSync(off), 2);
});

test('with every speed-up off the API answers the same', async () => {
  for (const t of [on, off]) {
    const key = await t.keyFor({ permissions: 'all' });
    const list = await t.api('/api/v1/devices', { key });
    assert.equal(list.status, 200);
    assert.equal((await t.api('/api/v1/devices/999999/backups', { key })).status, 404);
    assert.equal((await t.api('/healthz')).status, 200);
  }
});
