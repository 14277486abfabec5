// Settings: defaults < file < CONFVAULT_* < flags, each level proven; a bad setting stops start-up with one line naming it.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/config';
import { runCliAsync, spawnServe, tempDir } from '../helpers/appliance';

const root = tempDir('confvault-config-');
after(() => rmSync(root, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = path.join(root, name);
  writeFileSync(p, text);
  return p;
}

test('each CONFVAULT_* variable overrides the file, which overrides the default', () => {
  const conf = file(
    'levels.toml',
    `[server]
listen = "10.0.0.1:1001"
tls_cert = "/file/cert.pem"
tls_key = "/file/key.pem"
timezone = "Europe/Berlin"
trusted_proxies = ["10.9.9.9"]
[storage]
data_dir = "/file/data"
[backup]
schedule = "0 3 * * *"
concurrency = 4
[log]
level = "warn"
`,
  );
  const env = {
    CONFVAULT_LISTEN: '10.0.0.2:1002',
    CONFVAULT_TLS_CERT: '/env/cert.pem',
    CONFVAULT_TLS_KEY: '/env/key.pem',
    CONFVAULT_TIMEZONE: 'America/New_York',
    CONFVAULT_TRUSTED_PROXIES: '10.1.1.1, 10.2.2.2',
    CONFVAULT_DATA_DIR: '/env/data',
    CONFVAULT_BACKUP_SCHEDULE: '0 4 * * *',
    CONFVAULT_BACKUP_CONCURRENCY: '8',
    CONFVAULT_LOG_LEVEL: 'debug',
  };
  const defaults = loadConfig({}, {});
  const fromFile = loadConfig({ config: conf }, {});
  const fromEnv = loadConfig({ config: conf }, env);

  assert.equal(defaults.server.listen, '127.0.0.1:8080');
  assert.equal(fromFile.server.listen, '10.0.0.1:1001');
  assert.equal(fromEnv.server.listen, '10.0.0.2:1002');

  assert.deepEqual([defaults.server.tls_cert, fromFile.server.tls_cert, fromEnv.server.tls_cert], ['', '/file/cert.pem', '/env/cert.pem']);
  assert.deepEqual([defaults.server.tls_key, fromFile.server.tls_key, fromEnv.server.tls_key], ['', '/file/key.pem', '/env/key.pem']);
  assert.deepEqual([defaults.server.timezone, fromFile.server.timezone, fromEnv.server.timezone], ['UTC', 'Europe/Berlin', 'America/New_York']);
  assert.deepEqual(defaults.server.trusted_proxies, []);
  assert.deepEqual(fromFile.server.trusted_proxies, ['10.9.9.9']);
  assert.deepEqual(fromEnv.server.trusted_proxies, ['10.1.1.1', '10.2.2.2']);
  assert.deepEqual([defaults.storage.data_dir, fromFile.storage.data_dir, fromEnv.storage.data_dir], [path.resolve('./data'), '/file/data', '/env/data']);
  assert.deepEqual([defaults.backup.schedule, fromFile.backup.schedule, fromEnv.backup.schedule], ['0 2 * * *', '0 3 * * *', '0 4 * * *']);
  assert.deepEqual([defaults.backup.concurrency, fromFile.backup.concurrency, fromEnv.backup.concurrency], [16, 4, 8]);
  assert.deepEqual([defaults.log.level, fromFile.log.level, fromEnv.log.level], ['info', 'warn', 'debug']);

  // Flags beat the environment.
  const fromFlags = loadConfig({ config: conf, dataDir: '/flag/data', listen: '10.0.0.3:1003' }, env);
  assert.equal(fromFlags.storage.data_dir, '/flag/data');
  assert.equal(fromFlags.server.listen, '10.0.0.3:1003');
  // Settings no level touches keep their defaults.
  assert.equal(fromFlags.server.max_body_bytes, 1024 * 1024);
  // An empty variable counts as unset.
  assert.equal(loadConfig({ config: conf }, { CONFVAULT_LISTEN: '' }).server.listen, '10.0.0.1:1001');
});

test('--config beats CONFVAULT_CONFIG; the resolved settings are frozen', () => {
  const a = file('a.toml', '[log]\nlevel = "warn"\n');
  const b = file('b.toml', '[log]\nlevel = "error"\n');
  assert.equal(loadConfig({}, { CONFVAULT_CONFIG: a }).log.level, 'warn');
  assert.equal(loadConfig({ config: b }, { CONFVAULT_CONFIG: a }).log.level, 'error');
  const cfg = loadConfig({}, {});
  assert.throws(() => {
    (cfg.server as { listen: string }).listen = '0.0.0.0:1';
  }, TypeError);
});

test('loadConfig errors are one line naming the key and, when not from the file, where it was set', () => {
  const cases: [string, Record<string, string>, { listen?: string }, RegExp][] = [
    ['[server]\nlisen = "x"\n', {}, {}, /server\.lisen: unknown key/],
    ['[srever]\n', {}, {}, /srever: unknown key/],
    ['[backup]\nconcurrency = 0\n', {}, {}, /backup\.concurrency/],
    ['[backup]\nconcurrency = "ten"\n', {}, {}, /backup\.concurrency/],
    ['[server]\ntimezone = "Mars/Olympus"\n', {}, {}, /server\.timezone/],
    ['[server]\nmax_body_bytes = 10\n', {}, {}, /server\.max_body_bytes/],
    ['[log]\nlevel = "loud"\n', {}, {}, /log\.level/],
    ['[server]\ntls_key = "/k.pem"\n', {}, {}, /server\.tls_cert and server\.tls_key/],
    ['server = 5\n', { CONFVAULT_LISTEN: '127.0.0.1:1' }, {}, /^invalid configuration: server: /],
    ['', { CONFVAULT_LISTEN: 'nope' }, {}, /server\.listen: .*\(set by CONFVAULT_LISTEN\)/],
    ['', { CONFVAULT_BACKUP_CONCURRENCY: 'many' }, {}, /backup\.concurrency: .*"many".*CONFVAULT_BACKUP_CONCURRENCY/],
    ['', {}, { listen: '127.0.0.1:70000' }, /server\.listen: port must be 0-65535 \(set by --listen\)/],
    ['[server\n', {}, {}, /invalid TOML \(line 1, column \d+\)/],
  ];
  for (const [text, env, flags, expected] of cases) {
    const conf = file('bad.toml', text);
    assert.throws(
      () => loadConfig({ config: conf, ...flags }, env),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError, `${text}: ${String(err)}`);
        assert.match(err.message, expected);
        assert.doesNotMatch(err.message, /\n/);
        return true;
      },
    );
  }
});

test('the CLI finds its data dir by flag > environment > file, and the file by --config or CONFVAULT_CONFIG', async () => {
  const dirs = { file: path.join(root, 'd-file'), env: path.join(root, 'd-env'), flag: path.join(root, 'd-flag'), other: path.join(root, 'd-other') };
  const conf = file('dirs.toml', `[storage]\ndata_dir = "${dirs.file}"\n`);
  const other = file('other.toml', `[storage]\ndata_dir = "${dirs.other}"\n`);
  const [viaEnvFile, withEnv, withFlag] = await Promise.all([
    runCliAsync(['init'], { env: { CONFVAULT_CONFIG: conf } }),
    runCliAsync(['init', '--config', conf], { env: { CONFVAULT_DATA_DIR: dirs.env } }),
    runCliAsync(['init', '--config', conf, '--data-dir', dirs.flag], { env: { CONFVAULT_DATA_DIR: dirs.env } }),
  ]);
  const configFlagWins = await runCliAsync(['user', 'list', '--config', conf], { env: { CONFVAULT_CONFIG: other } });
  for (const r of [viaEnvFile, withEnv, withFlag, configFlagWins]) assert.equal(r.status, 0, r.stderr);
  assert.match(viaEnvFile.stderr, new RegExp(`initialised in ${dirs.file}`));
  assert.match(withEnv.stderr, new RegExp(`initialised in ${dirs.env}`));
  assert.match(withFlag.stderr, new RegExp(`initialised in ${dirs.flag}`));
  for (const d of [dirs.file, dirs.env, dirs.flag]) assert.ok(existsSync(path.join(d, 'confvault.db')), d);
  // `user list --config conf` read the file's data dir (its admin), not CONFVAULT_CONFIG's.
  assert.match(configFlagWins.stdout, /\tadmin\t/);
  assert.equal(existsSync(dirs.other), false);
});

test('serve listens where the flag says, else the environment, else the file', async () => {
  const conf = file('listen.toml', '[server]\nlisten = "127.0.0.2:0"\n');
  const data = (n: string) => ['--config', conf, '--data-dir', path.join(root, `listen-${n}`)];
  const servers = await Promise.all([
    spawnServe(data('file')),
    spawnServe(data('env'), { CONFVAULT_LISTEN: '127.0.0.3:0' }),
    spawnServe([...data('flag'), '--listen', '127.0.0.1:0'], { CONFVAULT_LISTEN: '127.0.0.3:0' }),
  ]);
  try {
    const [file, env, flag] = servers.map((s) => new URL(s.url));
    assert.equal(file.hostname, '127.0.0.2');
    assert.equal(env.hostname, '127.0.0.3');
    assert.equal(flag.hostname, '127.0.0.1');
    for (const s of servers) assert.equal((await fetch(`${s.url}/healthz`)).status, 200);
  } finally {
    // SIGTERM for two, SIGINT (Ctrl-C) for one: both are a clean stop with exit 0.
    const sigint = servers[2];
    const interrupted = new Promise<number | null>((resolve) => sigint.child.once('exit', resolve));
    sigint.child.kill('SIGINT');
    const codes = await Promise.all([servers[0].stop(), servers[1].stop(), interrupted]);
    assert.deepEqual(codes, [0, 0, 0]);
    assert.match(sigint.output().stdout, /"signal":"SIGINT".*"msg":"shutting down"/);
  }
});

test('a bad setting stops every command with one line on stderr naming it, exit 1, and nothing created', async () => {
  const cases: { name: string; conf?: string; env?: Record<string, string>; args?: string[]; expect: RegExp }[] = [
    { name: 'bad TOML', conf: '[server]\nlisten = "127.0.0.1:80\n', expect: /invalid TOML \(line 2/ },
    { name: 'unknown key', conf: '[server]\nlisen = "127.0.0.1:80"\n', expect: /server\.lisen: unknown key/ },
    { name: 'bad value', conf: '[backup]\nconcurrency = 0\n', expect: /backup\.concurrency/ },
    { name: 'tls cert without key', conf: '[server]\ntls_cert = "/etc/ssl/cert.pem"\n', expect: /server\.tls_cert and server\.tls_key must be set together/ },
    { name: 'bad env value', env: { CONFVAULT_TIMEZONE: 'Mars/Olympus' }, expect: /server\.timezone: .*CONFVAULT_TIMEZONE/ },
    { name: 'bad flag on serve', args: ['serve', '--listen', 'localhost'], expect: /server\.listen: .*--listen/ },
    { name: 'missing config file', args: ['init', '--config', path.join(root, 'nope.toml')], expect: /nope\.toml: cannot read \(ENOENT\)/ },
  ];
  const results = await Promise.all(
    cases.map((c, i) => {
      const dataDir = path.join(root, `never-${i}`);
      const args = [...(c.args ?? ['init']), '--data-dir', dataDir];
      if (c.conf !== undefined) args.push('--config', file(`bad-${i}.toml`, c.conf));
      return runCliAsync(args, { env: c.env }).then((r) => ({ ...r, c, dataDir }));
    }),
  );
  for (const r of results) {
    assert.equal(r.status, 1, `${r.c.name}: ${r.stderr}`);
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, `${r.c.name}: ${r.stderr}`);
    assert.match(lines[0], /^confvault (init|serve): /);
    assert.match(lines[0], r.c.expect, r.c.name);
    assert.equal(r.stdout, '', r.c.name);
    assert.equal(existsSync(r.dataDir), false, `${r.c.name}: data dir was created`);
  }
});

test('server time limits: defaults, a file value, and a header limit longer than the request limit refused', () => {
  const d = loadConfig({}, {});
  assert.deepEqual([d.server.header_timeout, d.server.request_timeout], [10, 30]);
  const set = loadConfig({ config: file('timeouts.toml', '[server]\nheader_timeout = 5\nrequest_timeout = 120\n') }, {});
  assert.deepEqual([set.server.header_timeout, set.server.request_timeout], [5, 120]);
  assert.throws(
    () => loadConfig({ config: file('timeouts-bad.toml', '[server]\nheader_timeout = 60\nrequest_timeout = 30\n') }, {}),
    (e: unknown) => e instanceof ConfigError && /server\.header_timeout must not exceed server\.request_timeout/.test(e.message),
  );
  assert.throws(() => loadConfig({ config: file('timeouts-zero.toml', '[server]\nrequest_timeout = 0\n') }, {}), /server\.request_timeout/);
});

test('trusted_proxies takes addresses and CIDR ranges; anything else stops start-up naming the entry', () => {
  const ok = loadConfig({}, { CONFVAULT_TRUSTED_PROXIES: '10.0.0.1, 192.168.0.0/16,fd00::/64, ::1' });
  assert.deepEqual(ok.server.trusted_proxies, ['10.0.0.1', '192.168.0.0/16', 'fd00::/64', '::1']);
  for (const bad of ['proxy.example', '10.0.0.0/33', 'fd00::/129', '10.0.0.1/8/8', '10.0.0.256']) {
    assert.throws(() => loadConfig({}, { CONFVAULT_TRUSTED_PROXIES: bad }), /server\.trusted_proxies\.0: expected an IP address or a CIDR range/, bad);
  }
});
