// The git mirror against a real git server (git http-backend on 127.0.0.1): versions stored through the service land as commits, read back with plain git.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { readBackupText } from '../../src/features/backups/backups.service';
import { getBackupRow } from '../../src/features/backups/backups.store';
import {
  applyMirrorSetting,
  backfill,
  mirrorDir,
  mirrorStatus,
  startGitMirror,
  syncGitMirror,
  type MirrorContext,
} from '../../src/features/gitmirror/gitmirror.service';
import { loadConfig } from '../../src/config/config';
import { createApplianceMetrics } from '../../src/features/metrics/metrics.service';
import { runCliAsync, tempDir } from '../helpers/appliance';
import { seedGroup } from '../helpers/seed';
import { git } from '../helpers/git';
import { GitHttpServer } from './git-http-server';
import { MirrorFixture, remote, SECRET } from './mirror-fixture';

const TOKEN = 'tok-3f9a';
const HOUR = 3_600_000;

describe('git mirror', () => {
  const f = new MirrorFixture();
  let server: GitHttpServer;

  const db = () => f.db;
  /** A context whose remotes are the given bare repositories on the test server. */
  const ctx = (repos: string[], opts: { allowed?: string[]; enabled?: boolean; dataDir?: string } = {}): MirrorContext =>
    f.ctx(
      repos.map((r) => remote({ url: server.url(r), token_file: path.join(f.root, 'token') })),
      opts,
    );
  const bare = (name: string) => f.bare(name);
  const newDevice = (group: number | null) => f.newDevice(group);
  const store = (device: number, text: string) => f.store(device, text);
  const log = (repo: string, fmt: string) => f.log(repo, fmt);

  before(async () => {
    await f.start();
    writeFileSync(path.join(f.root, 'token'), `${TOKEN}\n`);
    server = await new GitHttpServer(f.root, TOKEN).start();
  });

  after(async () => {
    await server.stop();
    await f.t.close();
  });

  test('each stored version lands as one commit at its backup time, at <group path>/<device>, redacted as stored', async () => {
    const repo = bare('first.git');
    const c = ctx([repo]);
    applyMirrorSetting(db(), c.config);
    const site = seedGroup(db(), 'site-a');
    const dev = newDevice(seedGroup(db(), 'core', site));
    const v1 = store(dev, 'snmp-server location rack1');
    const v2 = store(dev, 'snmp-server location rack2');
    await syncGitMirror(c);
    const file = `site-a/core/edge${f.seq}`;
    assert.deepEqual(log(repo, '%at %an %s'), [
      `${(f.clock - HOUR) / 1000} confvault ${file}: import backup`,
      `${f.clock / 1000} confvault ${file}: import backup`,
    ]);
    const shown = git(path.join(f.root, repo), ['show', `main:${file}`]);
    assert.equal(shown, readBackupText(f.t.appliance.snapshots, null, getBackupRow(db(), v2.id)!));
    assert.ok(!shown.includes(SECRET), 'the stored (redacted) text, never the secret');
    assert.match(git(path.join(f.root, repo), ['log', '-1', '--format=%B', 'main~1']), new RegExp(`Backup-Id: ${v1.id}`));
    const status = await mirrorStatus(c);
    assert.equal(status.pending, 0);
    assert.equal(status.remotes[0].pushed_commit, status.head);
  });

  test("serve's mirror round puts a stored version into the remote within seconds", async () => {
    const repo = bare('live.git');
    const c = ctx([repo]);
    const base = c.config;
    const mirror = startGitMirror({ ...c, config: { ...base, git_mirror: { ...base.git_mirror, interval: 1 } } });
    try {
      const v = store(newDevice(null), 'snmp-server contact noc');
      const since = Date.now();
      let landed = false;
      // Bounded: 100 looks, 100 ms apart.
      for (let i = 0; i < 100 && !landed; i++) {
        await new Promise((r) => setTimeout(r, 100));
        landed = git(path.join(f.root, repo), ['log', '--format=%B', '--all']).includes(`Backup-Id: ${v.id}`);
      }
      assert.ok(landed, 'the version reached the remote');
      assert.ok(Date.now() - since < 10_000);
    } finally {
      await mirror.stop();
    }
  });

  test('a remote that was down gets every version, in order, nothing duplicated', async () => {
    const repo = bare('down.git');
    const c = ctx([repo]);
    applyMirrorSetting(db(), c.config);
    const dev = newDevice(null);
    const ids = [store(dev, 'ntp server 10.0.0.1').id];
    await syncGitMirror(c);
    await server.stop();
    for (let i = 2; i <= 4; i++) ids.push(store(dev, `ntp server 10.0.0.${i}`).id);
    await syncGitMirror(c);
    const down = (await mirrorStatus(c)).remotes[0];
    assert.equal(down.attempts, 1);
    assert.match(down.last_error ?? '', /ECONNREFUSED/);
    await server.start();
    ids.push(store(dev, 'ntp server 10.0.0.5').id);
    // Not yet due: the backoff holds the retry back; past it, everything goes.
    await syncGitMirror(c);
    assert.equal((await mirrorStatus(c)).remotes[0].attempts, 1, 'no retry before the backoff');
    await syncGitMirror(c, Date.now() + 10 * 60_000);
    const bodies = log(repo, '%(trailers:key=Backup-Id,valueonly)').filter((l) => l !== '');
    const mine = bodies.filter((id) => ids.includes(id));
    assert.deepEqual(mine, ids, 'every version of the device once, in the order stored');
    assert.equal(new Set(bodies).size, bodies.length, 'no version twice');
    const up = (await mirrorStatus(c)).remotes[0];
    assert.equal(up.last_error, null);
  });

  test('a rejected push (the remote moved on) is reported and never forced', async () => {
    const repo = bare('rejected.git');
    const c = ctx([repo]);
    const dir = path.join(f.root, repo);
    const foreign = f.moveOn(repo);
    store(newDevice(null), 'logging host 10.1.1.1');
    await syncGitMirror(c);
    const r = (await mirrorStatus(c)).remotes[0];
    assert.equal(r.rejected, 1);
    assert.equal(r.rejected_total, 1);
    assert.match(r.last_error ?? '', /rejected .*never force-pushed/);
    assert.equal(git(dir, ['rev-parse', 'main']).trim(), foreign, 'the remote branch is untouched');
    const metrics = createApplianceMetrics({ db: db(), dbFile: f.t.appliance.dbFile, staleAfterHours: 48, queued: () => 0 });
    const text = await metrics.registry.metrics();
    assert.match(text, /^confvault_git_mirror_push_failures\{kind="rejected"\} 1$/m);
    assert.match(text, /^confvault_git_mirror_remotes_rejecting 1$/m);
  });

  test('a remote the outbound policy does not allow is never reached', async () => {
    const repo = bare('refused.git');
    const c = ctx([repo], { allowed: [] });
    store(newDevice(null), 'logging host 10.2.2.2');
    await syncGitMirror(c);
    const r = (await mirrorStatus(c)).remotes[0];
    assert.match(r.last_error ?? '', /not in allowed_destinations/);
    assert.throws(() => git(path.join(f.root, repo), ['rev-parse', '--verify', '-q', 'main']));
  });

  test('backfill writes the history stored before the mirror, once', async () => {
    const dataDir = tempDir('confvault-gitmirror-data-');
    const off = ctx([], { enabled: false, dataDir });
    applyMirrorSetting(db(), off.config);
    const dev = newDevice(null);
    store(dev, 'banner motd one');
    store(dev, 'banner motd two');
    const c = ctx([], { dataDir });
    applyMirrorSetting(db(), c.config);
    assert.equal((await mirrorStatus(c)).pending, 0, 'nothing was queued while the mirror was off');
    await backfill(c);
    const repoDir = mirrorDir(c.config);
    const count = () => Number(git(repoDir, ['rev-list', '--count', 'main']).trim());
    const first = count();
    assert.ok(first >= 2);
    assert.equal(await backfill(c), 0, 'a second backfill commits nothing');
    assert.equal(count(), first);
    assert.match(git(repoDir, ['log', '-1', '--format=%s', 'main']), new RegExp(`edge${f.seq}: import backup`));
  });

  test('confvault git-mirror backfill and status, from the command line', async () => {
    const repo = bare('cli.git');
    const dataDir = f.t.appliance.dataDir;
    const conf = path.join(f.root, 'cli.conf');
    const mirror = path.join(f.root, 'cli-mirror');
    writeFileSync(
      conf,
      `[notifications]\nallowed_destinations = ["127.0.0.1"]\n[git_mirror]\nenabled = true\npath = "${mirror}"\n` +
        `[[git_mirror.remote]]\nurl = "${server.url(repo)}"\ntoken_file = "${path.join(f.root, 'token')}"\n`,
    );
    const env = { CONFVAULT_DATA_DIR: dataDir };
    const fill = await runCliAsync(['git-mirror', 'backfill', '--config', conf], { env });
    assert.equal(fill.status, 0, fill.stderr);
    const written = Number(/^(\d+) version\(s\) written$/m.exec(fill.stdout)?.[1]);
    assert.ok(written > 0, 'a new repository gets the whole stored history');
    assert.equal(
      Number(git(mirror, ['rev-list', '--count', 'main']).trim()),
      Number(git(path.join(f.root, repo), ['rev-list', '--count', 'main']).trim()),
      'pushed',
    );
    const again = await runCliAsync(['git-mirror', 'backfill', '--config', conf], { env });
    assert.match(again.stdout, /^0 version\(s\) written$/m, 'a version already committed is not committed again');
    const status = await runCliAsync(['git-mirror', 'status', '--json', '--config', conf], { env });
    assert.equal(status.status, 0, status.stderr);
    const s = JSON.parse(status.stdout) as { remotes: { url: string; last_error: string | null }[]; pending: number };
    assert.equal(s.remotes[0].url, server.url(repo));
    assert.equal(s.remotes[0].last_error, null);
    assert.equal(s.pending, 0);
  });

  test('a remote URL with a user or token in it, or an SSH URL without a key and a pinned host key, is refused at start', () => {
    for (const url of ['https://u:tok@git.example.net/a.git', 'ssh://git@git.example.net/a.git']) {
      const file = path.join(f.root, 'bad.conf');
      writeFileSync(file, `[[git_mirror.remote]]\nurl = "${url}"\n`);
      assert.throws(() => loadConfig({ config: file }, {}), /git_mirror\.remote\.0\.(url|ssh_key_file)/);
    }
  });
});
