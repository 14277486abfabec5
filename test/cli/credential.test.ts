// `confvault credential ...` as an operator runs it: secrets from a file or standard input, never argv, never printed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { getCredential, getDecryptedCredential } from '../../src/features/credentials/credentials.service';
import { runCli, startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedDevice, seedGroup } from '../helpers/seed';

const PASSWORD = 'Pw-from-stdin-7731';
const ENABLE = 'En-from-file-0042';
let t: TestAppliance;
let dataArgs: string[];
let scratch: string;

before(async () => {
  t = await startTestAppliance();
  dataArgs = ['--data-dir', t.services.dataDir];
  scratch = tempDir('confvault-cred-cli-');
});
after(async () => {
  await t.close();
  rmSync(scratch, { recursive: true, force: true });
});

function cli(args: string[], input = '') {
  const r = runCli([...args, ...dataArgs], { input });
  for (const secret of [PASSWORD, ENABLE, 'Rotated-9911']) {
    assert.ok(!r.stdout.includes(secret) && !r.stderr.includes(secret), `a secret was printed by credential ${args.join(' ')}`);
  }
  return r;
}

test('add reads the password from stdin and the enable secret from a file; list and show print neither', () => {
  const site = seedGroup(t.services.db, 'site-cli');
  const enableFile = path.join(scratch, 'enable');
  writeFileSync(enableFile, `${ENABLE}\n`);
  const add = cli(
    ['credential', 'add', 'core-login', '--username', 'backup', '--group', 'site-cli', '--password-stdin', '--enable-secret-file', enableFile],
    `${PASSWORD}\n`,
  );
  assert.equal(add.status, 0, add.stderr);
  const id = Number(add.stdout.trim());
  const stored = getDecryptedCredential(t.services.db, t.services.secrets, id)!;
  assert.equal(stored.password, PASSWORD);
  assert.equal(stored.enable_secret, ENABLE, 'the file’s final line break is not part of the secret');
  assert.deepEqual(getCredential(t.services.db, id).group_ids, [site], 'usage scope by group name');

  const list = cli(['credential', 'list']);
  assert.equal(list.status, 0, list.stderr);
  assert.match(list.stdout, new RegExp(`^${id}\\tcore-login\\tbackup\\tpassword,enable\\t${site}\\t0$`, 'm'));
  const show = cli(['credential', 'show', 'core-login', '--json']);
  assert.equal(show.status, 0, show.stderr);
  assert.equal(JSON.parse(show.stdout).has_enable_secret, true);
});

test('a secret on the command line is refused as a usage error, and nothing is created', () => {
  const r = cli(['credential', 'add', 'argv-login', '--password', PASSWORD]);
  assert.equal(r.status, 2);
  assert.equal(cli(['credential', 'show', 'argv-login']).status, 1);
  assert.equal(cli(['credential', 'add', 'two-stdin', '--password-stdin', '--enable-secret-stdin'], 'a\n').status, 2);
});

test('update rotates a secret from stdin and moves the usage scope; the audit trail says only "changed"', () => {
  const r = cli(['credential', 'update', 'core-login', '--password-stdin', '--anywhere'], 'Rotated-9911\n');
  assert.equal(r.status, 0, r.stderr);
  const id = (JSON.parse(cli(['credential', 'show', 'core-login', '--json']).stdout) as { id: number }).id;
  assert.equal(getDecryptedCredential(t.services.db, t.services.secrets, id)!.password, 'Rotated-9911');
  assert.equal(getCredential(t.services.db, id).group_ids, null);
  const audit = t.services.db.prepare("SELECT door, changes FROM audit_log WHERE action = 'credential.update' ORDER BY id DESC LIMIT 1").get() as {
    door: string;
    changes: string;
  };
  assert.equal(audit.door, 'cli');
  assert.equal(JSON.parse(audit.changes).password, 'changed');
  assert.ok(!audit.changes.includes('Rotated-9911'));
});

test('remove refuses a credential in use and deletes one that is not', () => {
  const id = Number(cli(['credential', 'add', 'spare', '--password-stdin'], 'x-spare-1\n').stdout.trim());
  const used = Number(cli(['credential', 'add', 'used', '--password-stdin'], 'x-used-1\n').stdout.trim());
  seedDevice(t.services.db, { name: 'uses-it', port: 22, credential_id: used, template_id: seedBuiltinTemplate(t.services.db, 'cisco-ios') });
  const refused = cli(['credential', 'remove', 'used']);
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /used by 1 device/);
  assert.equal(cli(['credential', 'remove', String(id)]).status, 0);
  assert.equal(cli(['credential', 'show', 'spare']).status, 1);
});

test('--help documents the secret options and says secrets never go on the command line', () => {
  const help = runCli(['credential', '--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /--password-file FILE \| --password-stdin/);
  assert.match(help.stdout, /never given on the command line/);
  assert.match(runCli(['--help']).stdout, /^ {2}credential /m);
});
