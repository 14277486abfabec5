// The git mirror over SSH against a real git server (git-receive-pack behind an ssh2 server on 127.0.0.1), read back with plain git.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { applyMirrorSetting, mirrorStatus, syncGitMirror } from '../../src/features/gitmirror/gitmirror.service';
import { parseSshUrl, pinnedFingerprint } from '../../src/features/gitmirror/gitmirror.ssh';
import { loadConfig } from '../../src/config/config';
import { git } from '../helpers/git';
import { GitSshServer, sshKeyPair } from './git-ssh-server';
import { MirrorFixture, remote, SECRET } from './mirror-fixture';

const PASSPHRASE = 'pass phrase 7';

describe('git mirror over SSH', () => {
  const f = new MirrorFixture();
  const key = sshKeyPair();
  const lockedKey = sshKeyPair(PASSPHRASE);
  let server: GitSshServer;
  let keyFile: string;
  let lockedKeyFile: string;
  let passphraseFile: string;

  /** An SSH remote on the test server, its host key pinned by the ssh-keyscan line unless told otherwise. */
  const sshRemote = (repo: string, fields: Partial<Parameters<typeof remote>[0]> = {}) =>
    remote({ url: server.url(repo), ssh_key_file: keyFile, known_host: server.keyscanLine(), ...fields });
  const lastError = async (c: ReturnType<typeof f.ctx>) => (await mirrorStatus(c)).remotes[0];

  before(async () => {
    await f.start();
    applyMirrorSetting(f.db, f.ctx([]).config);
    keyFile = path.join(f.root, 'id_ed25519');
    lockedKeyFile = path.join(f.root, 'id_locked');
    passphraseFile = path.join(f.root, 'passphrase');
    writeFileSync(keyFile, key.private, { mode: 0o600 });
    writeFileSync(lockedKeyFile, lockedKey.private, { mode: 0o600 });
    writeFileSync(passphraseFile, `${PASSPHRASE}\n`, { mode: 0o600 });
    server = await new GitSshServer(f.root, [key.public, lockedKey.public]).start();
  });

  after(async () => {
    await server.stop();
    await f.t.close();
  });

  test('each version lands as one commit, in order, readable with git log; the key stays out of the status', async () => {
    const repo = f.bare('ssh-first.git');
    const c = f.ctx([sshRemote(repo)]);
    const dev = f.newDevice(null);
    const ids = [f.store(dev, 'snmp-server location rack1').id, f.store(dev, 'snmp-server location rack2').id];
    await syncGitMirror(c);
    const file = `edge${f.seq}`;
    assert.deepEqual(f.log(repo, '%at %s|%(trailers:key=Backup-Id,valueonly,separator=)'), [
      `${(f.clock - 3_600_000) / 1000} ${file}: import backup|${ids[0]}`,
      `${f.clock / 1000} ${file}: import backup|${ids[1]}`,
    ]);
    const shown = git(path.join(f.root, repo), ['show', `main:${file}`]);
    assert.match(shown, /snmp-server location rack2/);
    assert.ok(!shown.includes(SECRET), 'redacted as stored');
    const status = await mirrorStatus(c);
    assert.equal(status.remotes[0].last_error, null);
    assert.equal(status.remotes[0].pushed_commit, status.head);
    assert.equal(git(path.join(f.root, repo), ['rev-parse', 'main']).trim(), status.head);
    assert.ok(!JSON.stringify(status).includes(key.private.split('\n')[1]), 'no key material in the status');
    assert.ok(server.commands.includes(`git-receive-pack '/${repo}'`));
  });

  test('a passphrase-protected key, the host pinned by its SHA256 fingerprint', async () => {
    const repo = f.bare('ssh-locked.git');
    const fingerprint = pinnedFingerprint(server.keyscanLine());
    const c = f.ctx([sshRemote(repo, { ssh_key_file: lockedKeyFile, ssh_key_passphrase_file: passphraseFile, known_host: fingerprint })]);
    const id = f.store(f.newDevice(null), 'ntp server 10.9.9.9').id;
    await syncGitMirror(c);
    assert.equal((await lastError(c)).last_error, null);
    assert.match(git(path.join(f.root, repo), ['log', '-1', '--format=%B', 'main']), new RegExp(`Backup-Id: ${id}`));
  });

  test('a host key other than the pinned one: nothing is pushed, and the status says why', async () => {
    const repo = f.bare('ssh-wrong-host.git');
    const other = new GitSshServer(f.root, [key.public]);
    await other.start();
    const wrongPin = other.keyscanLine();
    await other.stop();
    const c = f.ctx([sshRemote(repo, { known_host: wrongPin })]);
    f.store(f.newDevice(null), 'logging host 10.3.3.3');
    const before = server.commands.length;
    await syncGitMirror(c);
    const r = await lastError(c);
    assert.match(r.last_error ?? '', /host key of 127\.0\.0\.1:\d+ is SHA256:\S+, not the pinned known_host/);
    assert.equal(r.pushed_commit, null);
    assert.equal(server.commands.length, before, 'no command ran on the server');
    assert.throws(() => git(path.join(f.root, repo), ['rev-parse', '--verify', '-q', 'main']), 'the remote is still empty');
  });

  test('a remote that was down gets every version, in order, nothing duplicated', async () => {
    const repo = f.bare('ssh-down.git');
    const c = f.ctx([sshRemote(repo)]);
    const dev = f.newDevice(null);
    const ids = [f.store(dev, 'ntp server 10.0.0.1').id];
    await syncGitMirror(c);
    await server.stop();
    for (let i = 2; i <= 4; i++) ids.push(f.store(dev, `ntp server 10.0.0.${i}`).id);
    await syncGitMirror(c);
    const down = await lastError(c);
    assert.equal(down.attempts, 1);
    assert.match(down.last_error ?? '', /ECONNREFUSED/);
    await server.start();
    ids.push(f.store(dev, 'ntp server 10.0.0.5').id);
    await syncGitMirror(c);
    assert.equal((await lastError(c)).attempts, 1, 'no retry before the backoff');
    await syncGitMirror(c, Date.now() + 10 * 60_000);
    const trailers = f.log(repo, '%(trailers:key=Backup-Id,valueonly)').filter((l) => l !== '');
    assert.deepEqual(
      trailers.filter((id) => ids.includes(id)),
      ids,
      'every version once, in the order stored',
    );
    assert.equal(new Set(trailers).size, trailers.length, 'no version twice');
    assert.equal((await lastError(c)).last_error, null);
  });

  test('a connection lost in the middle of a push is a failure like any other, and the next try delivers', async () => {
    const repo = f.bare('ssh-cut.git');
    const c = f.ctx([sshRemote(repo)]);
    const id = f.store(f.newDevice(null), 'ntp server 10.7.7.7').id;
    server.cutNextPush = true;
    await syncGitMirror(c);
    const cut = await lastError(c);
    assert.equal(cut.attempts, 1);
    assert.notEqual(cut.last_error, null);
    assert.equal(cut.pushed_commit, null);
    await syncGitMirror(c, Date.now() + 10 * 60_000);
    assert.equal((await lastError(c)).last_error, null);
    assert.match(git(path.join(f.root, repo), ['log', '-1', '--format=%B', 'main']), new RegExp(`Backup-Id: ${id}`));
  });

  test('a rejected push (the remote moved on) is reported and never forced', async () => {
    const repo = f.bare('ssh-rejected.git');
    const foreign = f.moveOn(repo);
    const c = f.ctx([sshRemote(repo)]);
    f.store(f.newDevice(null), 'logging host 10.1.1.1');
    await syncGitMirror(c);
    const r = await lastError(c);
    assert.equal(r.rejected, 1);
    assert.match(r.last_error ?? '', /rejected .*never force-pushed/);
    assert.equal(git(path.join(f.root, repo), ['rev-parse', 'main']).trim(), foreign, 'the remote branch is untouched');
  });

  test('a key the server does not know is refused, with a reason', async () => {
    const repo = f.bare('ssh-unknown-key.git');
    const strangerFile = path.join(f.root, 'id_stranger');
    writeFileSync(strangerFile, sshKeyPair().private, { mode: 0o600 });
    const c = f.ctx([sshRemote(repo, { ssh_key_file: strangerFile })]);
    f.store(f.newDevice(null), 'logging host 10.4.4.4');
    await syncGitMirror(c);
    assert.match((await lastError(c)).last_error ?? '', /refused the key of ssh_key_file for user git/);
  });

  test('the outbound policy applies to SSH remotes too', async () => {
    const repo = f.bare('ssh-refused.git');
    const c = f.ctx([sshRemote(repo)], { allowed: ['127.0.0.1:443'] });
    f.store(f.newDevice(null), 'logging host 10.2.2.2');
    const before = server.commands.length;
    await syncGitMirror(c);
    assert.match((await lastError(c)).last_error ?? '', /not in allowed_destinations/);
    assert.equal(server.commands.length, before);
  });

  test('remote URLs: ssh:// and scp-like; an SSH remote needs a key and a pinned host key unless told otherwise', () => {
    assert.deepEqual(parseSshUrl('ssh://git@git.example.net:2222/netops/configs.git'), {
      user: 'git',
      host: 'git.example.net',
      port: 2222,
      path: '/netops/configs.git',
    });
    assert.deepEqual(parseSshUrl('forgejo@git.example.net:netops/configs.git'), {
      user: 'forgejo',
      host: 'git.example.net',
      port: 22,
      path: 'netops/configs.git',
    });
    const file = path.join(f.root, 'ssh.conf');
    const load = (lines: string) => {
      writeFileSync(file, `[[git_mirror.remote]]\n${lines}\n`);
      return loadConfig({ config: file }, {});
    };
    const url = 'url = "ssh://git@git.example.net/a.git"';
    assert.throws(() => load(`${url}\nssh_key_file = "/k"`), /known_host/);
    assert.throws(() => load(`${url}\nknown_host = "SHA256:${'A'.repeat(43)}"`), /ssh_key_file/);
    assert.throws(() => load(`${url}\nssh_key_file = "/k"\nknown_host = "not a key"`), /known_host/);
    assert.equal(load(`${url}\nssh_key_file = "/k"\naccept_any_host_key = true`).git_mirror.remote[0].accept_any_host_key, true);
    assert.equal(load(`url = "git@git.example.net:a.git"\nssh_key_file = "/k"\nknown_host = "${server.keyscanLine()}"`).git_mirror.remote.length, 1);
  });
});
