// `confvault backup run|import|import-git` as an operator runs them: real CLI process, real database, simulated devices.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { getBackupRow, readBackupText } from '../../src/features/backups/backups.service';
import { startSimulator, loadTranscript, type RunningSimulator } from '../sim/simulator';
import { REPO_ROOT, runCli, runCliAsync, startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));
const frrExpected = readFileSync(path.join(REPO_ROOT, 'test/sim/transcripts/frr.expected.txt'), 'utf8');

let t: TestAppliance;
let sim: RunningSimulator;
let dataArgs: string[];

before(async () => {
  t = await startTestAppliance();
  dataArgs = ['--data-dir', t.services.dataDir];
  sim = await startSimulator({
    devices: [
      { name: 'good1', transcript: frr, username: 'good1', password: 'pw-good-123' },
      { name: 'good2', transcript: frr, username: 'good2', password: 'pw-good-123' },
      { name: 'bad', transcript: frr, username: 'bad', password: 'pw', failure: 'wrong_password' },
    ],
  });
});
const scratchDirs: string[] = [];
/** A temporary folder removed after the tests. */
function scratchDir(prefix?: string): string {
  const dir = tempDir(prefix);
  scratchDirs.push(dir);
  return dir;
}
after(async () => {
  await sim.close();
  await t.close();
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
});

test('backup run backs up a group and prints one summary line per device; a failure makes the exit code 1', async () => {
  const { db, secrets } = t.services;
  const tpl = seedBuiltinTemplate(db, 'frr');
  const site = seedGroup(db, 'site-a');
  const rack = seedGroup(db, 'rack-1', site);
  const cred = (u: string, p: string) => seedCredential(db, secrets, { name: `cli-${u}`, username: u, password: p });
  const g1 = seedDevice(db, { name: 'cli-good1', port: sim.port, credential_id: cred('good1', 'pw-good-123'), template_id: tpl, group_id: site });
  const g2 = seedDevice(db, { name: 'cli-good2', port: sim.port, credential_id: cred('good2', 'pw-good-123'), template_id: tpl, group_id: rack });

  const ok = await runCliAsync(['backup', 'run', '--group', String(site), ...dataArgs]);
  assert.equal(ok.status, 0, ok.stderr);
  const lines = ok.stdout
    .trim()
    .split('\n')
    .map((l) => l.split('\t'));
  assert.deepEqual(
    lines.map((l) => [Number(l[0]), l[1], l[2]]),
    [
      [g1, 'cli-good1', 'ok'],
      [g2, 'cli-good2', 'ok'],
    ],
    'subgroups are included',
  );
  assert.match(ok.stderr, /2 device\(s\): 2 ok/);

  const bad = seedDevice(db, { name: 'cli-bad', port: sim.port, credential_id: cred('bad', 'nope-nope-1'), template_id: tpl, group_id: rack });
  const mixed = await runCliAsync(['backup', 'run', '--group', String(site), ...dataArgs]);
  assert.equal(mixed.status, 1, 'any failed backup makes the exit code non-zero');
  const badLine = mixed.stdout
    .trim()
    .split('\n')
    .find((l) => l.startsWith(`${bad}\t`))!
    .split('\t');
  assert.equal(badLine[2], 'failed');
  assert.equal(badLine[5], 'AUTH_FAILED');

  const one = await runCliAsync(['backup', 'run', '--device', String(g1), ...dataArgs]);
  assert.equal(one.status, 0);
  assert.equal(one.stdout.trim().split('\n').length, 1);

  const usage = runCli(['backup', 'run', '--device', '1', '--all', ...dataArgs]);
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /exactly one of/);
});

test('backup import records a file as a successful backup at the given time', () => {
  const { db, secrets, snapshots } = t.services;
  const id = seedDevice(db, {
    name: 'imported-sw',
    port: 22,
    credential_id: seedCredential(db, secrets, { name: 'imp', username: 'x' }),
    template_id: seedBuiltinTemplate(db, 'cisco-ios'),
  });
  const dir = scratchDir();
  const file = path.join(dir, 'imported-sw.cfg');
  writeFileSync(file, 'hostname imported-sw\r\ninterface Gi0/1   \r\n description uplink\r\n\r\n\r\n');
  const r = runCli(['backup', 'import', '--device', String(id), '--file', file, '--started-at', '2024-03-05 10:20:30', ...dataArgs]);
  assert.equal(r.status, 0, r.stderr);
  const backupId = r.stdout.trim();
  const row = getBackupRow(db, backupId)!;
  assert.equal(row.success, 1);
  assert.equal(row.trigger, 'import');
  assert.equal(row.started_at, Date.UTC(2024, 2, 5, 10, 20, 30));
  assert.equal(readBackupText(snapshots, null, row), 'hostname imported-sw\ninterface Gi0/1\n description uplink\n');

  const missing = runCli(['backup', 'import', '--device', '999999', '--file', file, ...dataArgs]);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /device 999999 not found/);
  const badTime = runCli(['backup', 'import', '--device', String(id), '--file', file, '--started-at', 'yesterday', ...dataArgs]);
  assert.equal(badTime.status, 2);
});

function gitRepo(files: { at: string; changes: Record<string, string> }[]): string {
  const dir = scratchDir('confvault-git-');
  const git = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    execFileSync('git', ['-C', dir, ...args], {
      env: { ...process.env, GIT_AUTHOR_NAME: 'oxidized', GIT_AUTHOR_EMAIL: 'o@x', GIT_COMMITTER_NAME: 'oxidized', GIT_COMMITTER_EMAIL: 'o@x', ...env },
    });
  git(['init', '-q']);
  for (const c of files) {
    for (const [p, text] of Object.entries(c.changes)) {
      mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
      writeFileSync(path.join(dir, p), text);
      git(['add', p]);
    }
    git(['commit', '-q', '-m', 'update'], { GIT_AUTHOR_DATE: c.at, GIT_COMMITTER_DATE: c.at });
  }
  return dir;
}

test('backup import-git replays an Oxidized history once, at commit times, matching devices by name', () => {
  const { db, secrets } = t.services;
  const tpl = seedBuiltinTemplate(db, 'cisco-ios');
  const cred = seedCredential(db, secrets, { name: 'git-cred', username: 'x' });
  const core = seedDevice(db, { name: 'core-rtr1', port: 22, credential_id: cred, template_id: tpl });
  const edge = seedDevice(db, { name: 'EDGE-SW2', port: 22, credential_id: cred, template_id: tpl });
  const repo = gitRepo([
    { at: '2023-01-01T00:00:00Z', changes: { 'core-rtr1': 'hostname core-rtr1\n!v1\n', 'edge-sw2': 'hostname edge-sw2\n' } },
    { at: '2023-02-01T00:00:00Z', changes: { 'core-rtr1': 'hostname core-rtr1\n!v2\n', 'unknown-box': 'x\n' } },
    { at: '2023-03-01T00:00:00Z', changes: { 'core-rtr1': 'hostname core-rtr1\n!v3\n' } },
  ]);
  const r = runCli(['backup', 'import-git', '--repo', repo, '--layout', 'oxidized', ...dataArgs]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^imported\t4$/m);
  assert.match(r.stderr, /unknown-box/);
  const history = db.prepare('SELECT started_at, changed FROM backups WHERE device_id = ? ORDER BY started_at').all(core) as {
    started_at: number;
    changed: number;
  }[];
  assert.deepEqual(
    history.map((h) => new Date(h.started_at).toISOString().slice(0, 10)),
    ['2023-01-01', '2023-02-01', '2023-03-01'],
  );
  assert.deepEqual(
    history.map((h) => h.changed),
    [0, 1, 1],
  );
  assert.equal(db.prepare('SELECT count(*) FROM backups WHERE device_id = ?').pluck().get(edge), 1, 'names match case-insensitively');

  const again = runCli(['backup', 'import-git', '--repo', repo, '--layout', 'oxidized', ...dataArgs]);
  assert.equal(again.status, 0);
  assert.match(again.stdout, /^imported\t0$/m, 'a second run imports nothing twice');
  assert.equal(db.prepare('SELECT count(*) FROM backups WHERE device_id = ?').pluck().get(core), 3);
});

test('backup import-git reads the RANCID layout <group>/configs/<device>', () => {
  const { db, secrets } = t.services;
  const dev = seedDevice(db, {
    name: 'rancid-sw9',
    port: 22,
    credential_id: seedCredential(db, secrets, { name: 'rc', username: 'x' }),
    template_id: seedBuiltinTemplate(db, 'cisco-ios'),
  });
  const repo = gitRepo([
    {
      at: '2022-06-01T12:00:00Z',
      changes: { 'campus/configs/rancid-sw9': '!RANCID-CONTENT-TYPE: cisco\nhostname rancid-sw9\n', 'campus/router.db': 'rancid-sw9;cisco;up\n' },
    },
  ]);
  const r = runCli(['backup', 'import-git', '--repo', repo, '--layout', 'rancid', ...dataArgs]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^imported\t1$/m);
  assert.equal(db.prepare('SELECT count(*) FROM backups WHERE device_id = ?').pluck().get(dev), 1);
  const bad = runCli(['backup', 'import-git', '--repo', scratchDir(), '--layout', 'rancid', ...dataArgs]);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /not a git repository/);
});

test('frr transcript text is what the runner stores (guards the fixture the lab tests rely on)', () => {
  assert.ok(frrExpected.includes('hostname r1-lab'));
});
