// The shipped single executable (dist/confvault, rebuilt when stale) run alone in an empty folder: version, init, serve, API key, search, a device backup on worker threads, a collector's backup, SIGTERM.
// Heavy scenario: runs in npm run test:lab (test/run.sh), beside the device lab; CI runs it after npm test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt } from '../helpers/browser';
import { WebClient } from '../web/web-client';
import { loadTranscript, startSimulator } from '../sim/simulator';

// Not the shared helpers: they load the whole app into this process, which this test never uses.
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

const EXE = path.join(REPO_ROOT, 'dist/confvault');
const VERSION = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).version as string;
const RUNTIME = JSON.parse(readFileSync(path.join(REPO_ROOT, 'build/runtime.json'), 'utf8')).version as string;

test('dist/confvault runs alone: version, init, serve, API key from the CLI, a collector, SIGTERM, db backup and restore', { timeout: 600_000 }, async () => {
  ensureBuilt();
  const dir = mkdtempSync(path.join(tmpdir(), 'confvault-exe-'));
  const exe = path.join(dir, 'confvault');
  copyFileSync(EXE, exe); // alone: no node_modules next to it or above it
  // A clean environment, as under systemd: no NODE_OPTIONS, NODE_PATH or npm variables.
  const env = { PATH: '/usr/bin:/bin', HOME: dir, CONFVAULT_LOG_LEVEL: 'info' };
  const run = (args: string[]) => spawnSync(exe, args, { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
  const data = path.join(dir, 'data');
  let child: ReturnType<typeof spawn> | undefined;
  const transcript = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/cisco-ios.json'));
  const sim = await startSimulator({ devices: [{ name: 'core-sw1', transcript }] });
  try {
    const v = run(['--version']);
    assert.equal(v.status, 0, v.stderr);
    assert.equal(v.stdout.trim(), `confvault ${VERSION} (Node.js v${RUNTIME})`, 'the executable embeds the pinned runtime');
    // `serve` is listed from the CLI bundle, and its own help comes from the shipped whole program (src/exe-main.ts).
    const help = run(['--help']);
    assert.match(help.stdout, /^ {2}serve +Run the appliance: API, web interface and backup schedule$/m);
    const serveHelp = run(['serve', '--help']);
    assert.equal(serveHelp.status, 0, serveHelp.stderr);
    assert.match(serveHelp.stdout, /^Usage: confvault serve \[--listen HOST:PORT\]/);

    const init = run(['init', '--data-dir', data]);
    assert.equal(init.status, 0, init.stderr);
    assert.ok(init.stdout.trim().length >= 12, 'init prints the admin password');
    assert.equal(statSync(data).mode & 0o777, 0o700);
    assert.ok(existsSync(path.join(data, 'confvault.db')));
    assert.equal(statSync(path.join(data, 'master.key')).mode & 0o777, 0o600);

    const t0 = performance.now();
    const proc = spawn(exe, ['serve', '--data-dir', data, '--listen', '127.0.0.1:0'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let stdout = '';
    let stderr = '';
    proc.stderr.on('data', (d) => (stderr += d));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not start:\n${stderr}`)), 30_000);
      proc.stdout.on('data', (d) => {
        stdout += d;
        const m = /"url":"(http:\/\/[^"]+)"/.exec(stdout);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`serve exited with ${code}:\n${stderr}\n${stdout}`));
      });
    });
    const health = await fetch(`${url}/healthz`);
    const firstAnswerMs = performance.now() - t0;
    assert.equal(health.status, 200);
    console.log(`dist/confvault: spawn to first /healthz answer ${firstAnswerMs.toFixed(0)} ms`);

    // A key made by the executable's own CLI while the server holds the database open.
    const created = run(['apikey', 'create', 'admin', '--data-dir', data]);
    assert.equal(created.status, 0, created.stderr);
    const key = created.stdout.trim().split('\n').pop() ?? '';
    assert.match(key, /^cv_/);
    assert.equal((await fetch(`${url}/api/v1/exe-auth-check`)).status, 401);
    const authed = await fetch(`${url}/api/v1/exe-auth-check`, { headers: { 'X-API-Key': key } });
    assert.notEqual(authed.status, 401, 'the key from the CLI authenticates against the running server');

    // Search runs on a worker thread whose code is an asset of the executable (no script file to load).
    const adminPassword = init.stdout.trim().split('\n').pop() ?? '';
    const web = new WebClient(url);
    assert.equal((await web.login('admin', adminPassword)).status, 303, 'admin logs in to the web interface');
    const form = await web.get('/account/password');
    const csrf = /<meta name="csrf-token" content="([^"]+)"/.exec(form.html)?.[1] ?? /name="_csrf" value="([^"]+)"/.exec(form.html)?.[1];
    const changed = await web.post('/account/password', { current: adminPassword, password: 'exe-test-password-1', confirm: 'exe-test-password-1' }, { csrf });
    assert.equal(changed.res.status, 303, 'the forced first password change');
    const search = await web.get('/search?q=(.%7C.)*zzz%24&mode=regex');
    assert.equal(search.res.status, 200, search.html.slice(0, 500));
    assert.match(search.html, /device\(s\) with matches among 0 searched/);

    // A device backup: its post-processing runs on a capture worker thread, also an asset of the executable.
    const created2 = await fetch(`${url}/api/v1/credentials`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'sim', username: transcript.username, password: transcript.password, enable_secret: transcript.enable?.password }),
    });
    assert.equal(created2.status, 201, await created2.text());
    /** `confvault device add` of a Cisco IOS device on the simulator, with the credential made above. */
    const addDevice = (name: string) =>
      run([
        'device',
        'add',
        '--name',
        name,
        '--hostname',
        '127.0.0.1',
        '--port',
        String(sim.port),
        '--credential',
        'sim',
        '--template',
        'cisco-ios',
        '--data-dir',
        data,
      ]);
    const added = addDevice('core-sw1');
    assert.equal(added.status, 0, added.stderr);

    // A collector run by the executable: its sessions run on the event loop, with ssh2's crypto binding extracted from
    // the executable into the site's data dir (on the central, the session threads are handed the central's copy).
    const site = path.join(dir, 'site');
    const token = run(['collector', 'token', 'create', '--zone', 'lab', '--data-dir', data]);
    assert.equal(token.status, 0, token.stderr);
    const enrol = spawnSync(exe, ['collector', 'enrol', '--central', url, '--name', 'lab-1', '--data-dir', site], {
      cwd: dir,
      env,
      encoding: 'utf8',
      input: `${token.stdout.trim().split('\n').pop()}\n`,
      timeout: 60_000,
    });
    assert.equal(enrol.status, 0, enrol.stderr);
    const zoned = addDevice('lab-sw1');
    assert.equal(zoned.status, 0, zoned.stderr);
    assert.equal(run(['collector', 'zone', '--device', 'lab-sw1', '--zone', 'lab', '--data-dir', data]).status, 0);
    const queued = run(['backup', 'run', '--device', zoned.stdout.trim(), '--data-dir', data]);
    assert.match(queued.stdout + queued.stderr, /Queued for the collector of its zone/);
    const collector = spawn(exe, ['collector', 'run', '--data-dir', site], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let collectorOut = '';
    collector.stdout.on('data', (d) => (collectorOut += d));
    collector.stderr.on('data', (d) => (collectorOut += d));
    try {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const page = await fetch(`${url}/api/v1/devices/${zoned.stdout.trim()}/backups`, { headers: { 'X-API-Key': key } });
        const items = ((await page.json()) as { items: { success: boolean; finished_at: string | null }[] }).items;
        if (items.some((b) => b.success)) break;
        // The central opens the record before it writes the snapshot file: until it closes it, finished_at is null.
        assert.ok(!items.some((b) => b.finished_at !== null && !b.success), `the collector's backup failed: ${JSON.stringify(items)}\n${collectorOut}`);
        assert.ok(Date.now() < deadline, `no backup stored through the collector within 60 s:\n${collectorOut}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      collector.kill('SIGTERM');
      await new Promise((r) => collector.once('exit', r));
    }
    const extracted = readdirSync(path.join(site, '.native'), { recursive: true }).map(String);
    assert.ok(
      extracted.some((f) => f.endsWith('sshcrypto.node')),
      `the binding extracted at the site: ${extracted.join(', ')}`,
    );

    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    proc.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([exited, new Promise<string>((r) => (timer = setTimeout(() => r('timeout after 10 s'), 10_000)))]);
    clearTimeout(timer); // a pending timer would keep the test process alive
    assert.equal(code, 0, `exit after SIGTERM: ${code}\n${stderr}`);
    child = undefined;

    // Not spawnSync: the simulator in this process must answer while the backup runs.
    const backedUp = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const p = spawn(exe, ['backup', 'run', '--device', added.stdout.trim(), '--data-dir', data], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      p.stdout.on('data', (d) => (out += d));
      p.stderr.on('data', (d) => (out += d));
      p.once('exit', (code) => resolve({ code, out }));
    });
    assert.equal(backedUp.code, 0, backedUp.out);
    assert.match(backedUp.out, /1 device\(s\): 1 ok/);

    // The commands that open SQLite before the appliance does (the serve lock, db restore) find the addon too.
    const copy = path.join(dir, 'copy.db');
    const backup = run(['db', 'backup', '--data-dir', data, copy]);
    assert.equal(backup.status, 0, backup.stderr);
    const restore = run(['db', 'restore', '--data-dir', data, copy]);
    assert.equal(restore.status, 0, restore.stderr);
    assert.match(restore.stdout + restore.stderr, /restored .*copy\.db/);
  } finally {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
