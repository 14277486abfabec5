// `backup import-git` against a hostile repository: its git config must run nothing; another owner's repository needs --trust-owner.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runCli, startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { git } from '../helpers/git';

let t: TestAppliance;
let dataArgs: string[];
let scratch: string;
const NOBODY = 65534;

function script(file: string, body: string): string {
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

/**
 * An Oxidized repository with one signed commit whose .git/config points gpg.program (with log.showSignature),
 * the fsmonitor, the pager and an external diff at a program that leaves a marker file when run.
 */
function hostileRepo(name: string): { repo: string; marker: string } {
  const root = path.join(scratch, name);
  const repo = path.join(root, 'repo');
  execFileSync('mkdir', ['-p', repo]);
  const marker = path.join(root, 'PWNED');
  const evil = script(path.join(root, 'evil.sh'), `echo "$0 $*" >> ${marker}\ncat >/dev/null 2>&1\nexit 0`);
  // Signing for the fixture only: a stand-in gpg that hands git a syntactically valid signature.
  const signer = script(
    path.join(root, 'sign.sh'),
    'cat >/dev/null\necho "[GNUPG:] SIG_CREATED D 1 8 00 0 X" >&2\nprintf -- "-----BEGIN PGP SIGNATURE-----\\n\\nZmFrZQ==\\n-----END PGP SIGNATURE-----\\n"',
  );
  git(repo, ['init', '-q', '-b', 'main']);
  writeFileSync(path.join(repo, 'hostile-sw'), 'hostname hostile-sw\ninterface Gi0/1\n');
  git(repo, ['add', '.']);
  git(repo, ['-c', `gpg.program=${signer}`, 'commit', '-q', '-S', '-m', 'signed by the old tool']);
  for (const [k, v] of [
    ['gpg.program', evil],
    ['log.showSignature', 'true'],
    ['core.fsmonitor', evil],
    ['core.pager', evil],
    ['diff.external', evil],
  ]) {
    git(repo, ['config', k, v]);
  }
  return { repo, marker };
}

const importedCount = (deviceId: number) =>
  t.services.db.prepare("SELECT count(*) FROM backups WHERE device_id = ? AND trigger = 'import'").pluck().get(deviceId) as number;

before(async () => {
  t = await startTestAppliance();
  dataArgs = ['--data-dir', t.services.dataDir];
  scratch = tempDir('confvault-hostile-');
  const { db, secrets } = t.services;
  seedDevice(db, {
    name: 'hostile-sw',
    port: 22,
    credential_id: seedCredential(db, secrets, { name: 'h', username: 'u' }),
    template_id: seedBuiltinTemplate(db, 'cisco-ios'),
  });
});
after(async () => {
  await t.close();
  rmSync(scratch, { recursive: true, force: true });
});

test('the fixture is hostile: plain git log runs its gpg.program', () => {
  const { repo, marker } = hostileRepo('control');
  // The invocation of the import before this change.
  git(repo, ['-c', 'safe.directory=*', '-C', repo, 'log', '--reverse', '--format=%x00%H %ct', '--name-only', '--no-renames', '--diff-filter=AM', 'HEAD']);
  assert.ok(existsSync(marker), 'git with the repository config ran the program (so the next test means something)');
});

test('import-git reads a hostile repository without running any of its programs, and audits the import', () => {
  const { repo, marker } = hostileRepo('own');
  const deviceId = t.services.db.prepare("SELECT id FROM devices WHERE name = 'hostile-sw'").pluck().get() as number;
  const r = runCli(['backup', 'import-git', '--repo', repo, '--layout', 'oxidized', ...dataArgs], { env: { GIT_PAGER: marker, GIT_EXTERNAL_DIFF: marker } });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^imported\t1$/m);
  assert.equal(existsSync(marker), false, `a program of the repository ran: ${existsSync(marker) ? readdirSync(path.dirname(marker)) : ''}`);
  assert.equal(importedCount(deviceId), 1);
  const row = t.services.db.prepare("SELECT door, target, details FROM audit_log WHERE action = 'backup.import_git' ORDER BY id DESC LIMIT 1").get() as {
    door: string;
    target: string;
    details: string;
  };
  assert.equal(row.door, 'cli');
  assert.match(row.target, /own\/repo$/);
  assert.equal(JSON.parse(row.details).imported, 1);
});

test(
  'a repository owned by another user is refused unless --trust-owner is given; trusted, it still runs nothing',
  { skip: process.getuid?.() !== 0 && 'needs root to give the fixture another owner' },
  () => {
    const { repo, marker } = hostileRepo('foreign');
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, path.dirname(repo)]);
    chownSync(path.dirname(marker), NOBODY, NOBODY);
    const before = t.services.db.prepare("SELECT count(*) FROM backups WHERE trigger = 'import'").pluck().get() as number;
    const refused = runCli(['backup', 'import-git', '--repo', repo, '--layout', 'oxidized', ...dataArgs]);
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /owned by another user.*--trust-owner/s);
    assert.equal(t.services.db.prepare("SELECT count(*) FROM backups WHERE trigger = 'import'").pluck().get(), before, 'nothing imported');

    const trusted = runCli(['backup', 'import-git', '--repo', repo, '--layout', 'oxidized', '--trust-owner', ...dataArgs]);
    assert.equal(trusted.status, 0, trusted.stderr);
    assert.match(trusted.stdout, /^skipped\t1$/m, 'the same history was imported from the first repository');
    assert.equal(existsSync(marker), false);
  },
);

test('--trust-owner is documented in --help', () => {
  const help = runCli(['backup', '--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /import-git --repo DIR --layout oxidized\|rancid \[--trust-owner\]/);
  assert.match(help.stdout, /owned by another\s+user is refused unless --trust-owner/);
});
