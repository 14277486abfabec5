// A CLI whose reader went away (`confvault backup jobs --all | head -1`): no EPIPE stack trace, the exit status of the work done.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { requestBackupJob } from '../../src/features/backups/jobs.service';
import { REPO_ROOT, cliArgv, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { createTestDevice, seedBuiltinTemplate, seedCredential } from '../helpers/seed';

let t: TestAppliance;

before(async () => {
  t = await startTestAppliance();
  const { db, secrets } = t.services;
  const refs = { credential_id: seedCredential(db, secrets, { name: 'c', username: 'u', password: 'p' }), template_id: seedBuiltinTemplate(db, 'frr') };
  const ids = Array.from({ length: 5 }, (_, i) => createTestDevice(db, refs, `d${i}`).id);
  for (const id of ids) requestBackupJob(db, SYSTEM_ACTOR, { deviceIds: [id] }, null);
});
after(() => t.close());

/** Runs the CLI with stdout (and, with `closeStderr`, stderr) a pipe whose reading end is closed before the command writes. */
function runWithClosedPipe(args: string[], closeStderr = false): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(process.execPath, [...cliArgv(), ...args, '--data-dir', t.services.dataDir], {
    cwd: REPO_ROOT,
    env: { ...process.env, CONFVAULT_LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.destroy();
  if (closeStderr) child.stderr.destroy();
  let stderr = '';
  if (!closeStderr) child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stderr });
    }),
  );
}

for (const args of [
  ['backup', 'jobs', '--all'],
  ['backup', 'jobs', '--all', '--json'],
  ['device', 'list'],
  ['backup', '--help'],
]) {
  test(`confvault ${args.join(' ')} into a closed pipe ends quietly with status 0`, async () => {
    const r = await runWithClosedPipe(args);
    assert.doesNotMatch(r.stderr, /EPIPE|at .+:\d+:\d+/, 'no EPIPE and no stack trace');
    assert.equal(r.stderr, '');
    assert.equal(r.status, 0);
  });
}

test('a usage error into closed pipes keeps its own status (2), not a crash (1)', async () => {
  const r = await runWithClosedPipe(['backup', 'jobs', 'cancel'], true);
  assert.equal(r.status, 2);
});
