// The server's frequent reads of its queues (queued jobs, dead running jobs, run-out collector leases) use their partial indexes, on the real statements.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { QUEUED_JOBS_SQL, STALE_JOBS_SQL } from '../../src/features/backups/jobs.store';
import { EXPIRE_LEASES_SQL } from '../../src/features/collectors/collectors.store';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';

let t: TestAppliance;
before(async () => {
  t = await startTestAppliance();
});
after(async () => {
  await t?.close();
});

const plan = (sql: string, ...args: unknown[]) =>
  (t.services.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((r) => r.detail).join('; ');

test('the poll for queued jobs reads backup_jobs_queued, without a sort', () => {
  const p = plan(QUEUED_JOBS_SQL);
  assert.match(p, /USING INDEX backup_jobs_queued/);
  assert.doesNotMatch(p, /TEMP B-TREE/);
});

test('the sweep of dead jobs searches backup_jobs_running by heartbeat', () => {
  assert.match(plan(STALE_JOBS_SQL, Date.now()), /SEARCH backup_jobs USING INDEX backup_jobs_running \(heartbeat_at<\?\)/);
});

test('each lease request finds run-out leases through collector_work_lease_expiry, not by reading the whole queue', () => {
  assert.match(plan(EXPIRE_LEASES_SQL, Date.now()), /SEARCH collector_work USING (COVERING )?INDEX collector_work_lease_expiry \(lease_expires_at<\?\)/);
});
