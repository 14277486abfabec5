// One exit-code table for every command (0 done, 1 failed, 2 usage), one message prefix, one version string.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, runCliAsync, tempDir } from '../helpers/appliance';

const root = tempDir('confvault-exit-');
after(() => rmSync(root, { recursive: true, force: true }));
const data = ['--data-dir', path.join(root, 'data')];

test('a name or id that does not exist exits 1 whatever the noun; the message names it once', async () => {
  const cases: [string[], RegExp][] = [
    [['backup', 'run', '--device', '999'], /^confvault backup: device 999 not found$/],
    [['backup', 'run', '--group', '999'], /^confvault backup: group 999 not found$/],
    [['user', 'passwd', 'nobody', '--password-stdin'], /^confvault user: user "nobody" not found$/],
    [['apikey', 'revoke', '999'], /^confvault apikey: API key 999 not found$/],
  ];
  for (const [args, message] of cases) {
    const r = await runCliAsync([...args, ...data], { input: 'a-new-password-123\n' });
    assert.equal(r.status, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr.trim(), message);
  }
});

test('usage errors exit 2 with one prefix, never "confvault backup: backup run: ..."', async () => {
  const cases: [string[], string][] = [
    [['backup', 'run'], 'confvault backup run: give exactly one of --device ID, --group ID, --all'],
    [['db', 'backup'], 'confvault db backup: missing DEST'],
    [['role', 'add'], 'confvault role add: missing NAME'],
    [['user', 'frob'], 'confvault user: unknown subcommand "frob"'],
  ];
  for (const [args, line] of cases) {
    const r = await runCliAsync([...args, ...data]);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines[0], line);
    assert.equal(lines[1], `Try 'confvault ${args[0]} --help'.`);
  }
  assert.equal((await runCliAsync(['no-such-command'])).status, 2);
});

test('--help documents the exit codes and prints the same version as --version', async () => {
  const help = await runCliAsync(['--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^Exit codes \(every command\):\n {2}0 {2}done\n {2}1 {2}the operation failed or was refused/m);
  assert.match(help.stdout, /^ {2}2 {2}usage error/m);
  const version = await runCliAsync(['--version']);
  assert.equal(version.status, 0);
  const v = /^confvault (\S+) \(Node\.js v\d+\.\d+\.\d+\)$/.exec(version.stdout.trim())?.[1];
  assert.ok(v, version.stdout);
  assert.equal(help.stdout.split('\n')[0], `confvault ${v}: backs up the configuration of network devices.`);
  // From source the version is package.json's with "-dev": a release bump cannot leave the two apart.
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(v, `${pkg.version}-dev`);
  const sub = await runCliAsync(['db', '--help']);
  assert.match(sub.stdout, /^Exit codes: 0 done, 1 operation failed or refused, 2 usage error/m);
});
