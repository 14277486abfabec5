// Smoke tests of the device lab itself, over real SSH and Telnet: logins, seeded configs, the helpers other tests use, rekey.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import ssh2 from 'ssh2';
import { TelnetFilter } from '../../src/engine/transports/telnet';
import {
  LAB_DEVICES,
  LAB_KEY_ENC_PATH,
  LAB_KEY_PASSPHRASE,
  LAB_KEY_PATH,
  acquireLabLock,
  ensureLab,
  labAvailable,
  rekey,
  showRunningConfig,
  vtysh,
  type LabDevice,
} from './lab';

// ssh2 is CommonJS and Node's ESM loader does not see its "utils" export: take both from the default export.
const { Client, utils } = ssh2;

const availability = labAvailable();
// Outside CI a machine without root or namespaces skips; in CI the lab must come up or everything fails.
const skip = !availability.ok && !process.env.CI ? availability.reason : false;

// Other lab test files must not run at the same time: this one rekeys r1 and changes r2's config.
let releaseLab: (() => void) | undefined;
before(
  async () => {
    if (skip) return;
    releaseLab = await acquireLabLock();
    await ensureLab();
  },
  { timeout: 30 * 60_000 },
); // waits for other lab test files, and a first lab start installs packages
after(() => releaseLab?.());

const r1 = LAB_DEVICES.r1;
const r2 = LAB_DEVICES.r2;
const srv1 = LAB_DEVICES.srv1;

test('password login on every device runs its CLI over an exec channel', { skip }, async () => {
  const cases: Array<{ device: LabDevice; command: string; expect: RegExp[] }> = [
    { device: r1, command: 'show version', expect: [/^FRRouting 8\.\d+\.\d+ \(r1-lab\)/m] },
    { device: r2, command: 'show version', expect: [/^FRRouting 8\.\d+\.\d+ \(r2-lab\)/m] },
    { device: LAB_DEVICES.bird1, command: 'show status', expect: [/^BIRD 2\.0\.\d+ ready\.$/m, /Daemon is up and running/] },
    { device: srv1, command: 'hostname; id -un', expect: [/^srv1-lab\nlinuxops\n$/] },
  ];
  assert.deepEqual(cases.map((c) => c.device.name).sort(), Object.keys(LAB_DEVICES).sort(), 'every lab device is covered');
  for (const { device, command, expect } of cases) {
    const r = await sshExec({ port: device.ssh_port, username: device.username, password: device.password }, command);
    assert.equal(r.code, 0, `${device.name}: ${command} exit code; output: ${r.stdout}${r.stderr}`);
    for (const re of expect) assert.match(r.stdout, re, `${device.name}: ${command}`);
    assert.match(r.banner, new RegExp(`\\*\\*\\* ${device.hostname} - confvault device lab`), `${device.name}: pre-login banner`);
  }
});

test('r1 serves its seeded config over SSH, byte for byte what showRunningConfig() returns', { skip }, async () => {
  const r = await sshExec({ port: r1.ssh_port, username: r1.username, password: r1.password }, 'show running-config');
  assert.equal(r.code, 0);
  for (const line of [
    'hostname r1-lab',
    'ip route 198.51.100.0/24 Null0',
    'interface eth1',
    ' description p2p to r2-lab eth1',
    'router bgp 65001',
    ' neighbor 10.201.1.2 remote-as 65002',
    ' neighbor 10.201.1.2 password LabBgpSecret1',
    ' neighbor 10.201.0.13 description bird1-lab route server',
    '  neighbor 10.201.1.2 route-map RM-R2-OUT out',
    'ip prefix-list PL-BOGONS seq 5 deny 0.0.0.0/8 le 32',
    'route-map RM-BIRD-IN permit 10',
    'end',
  ]) {
    assert.ok(r.stdout.split('\n').includes(line), `running-config has the line ${JSON.stringify(line)}`);
  }
  // FRR shows a second hostname line when the machine's name differs (the reason for per-device UTS namespaces)
  assert.equal(r.stdout.match(/^hostname /gm)?.length, 1, 'exactly one hostname line');
  assert.doesNotMatch(r.stdout, /\r/, 'no CR without a PTY');
  assert.equal(r.stdout, await showRunningConfig('r1'));
});

test('key login works on every device with the plain key, and on srv1 with the passphrase key', { skip }, async () => {
  const plain = readFileSync(LAB_KEY_PATH);
  for (const device of Object.values(LAB_DEVICES)) {
    const command = { frr: 'show version', bird: 'show status', linux: 'id -un' }[device.template];
    const r = await sshExec({ port: device.ssh_port, username: device.username, privateKey: plain }, command);
    assert.equal(r.code, 0, `${device.name}: ${r.stdout}${r.stderr}`);
  }
  // the passphrase costs ~0.25 s per use (bcrypt KDF in JavaScript), so once is enough here
  const encrypted = { privateKey: readFileSync(LAB_KEY_ENC_PATH), passphrase: LAB_KEY_PASSPHRASE };
  const r = await sshExec({ port: srv1.ssh_port, username: srv1.username, ...encrypted }, 'cat /etc/network/interfaces');
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^iface eth0 inet static\n {4}address 10\.201\.0\.14\/24$/m, 'srv1 has its seeded interfaces file');
});

test('the passphrase key cannot be used without its passphrase', { skip }, () => {
  const encrypted = readFileSync(LAB_KEY_ENC_PATH);
  assert.ok(utils.parseKey(encrypted) instanceof Error, 'no passphrase');
  assert.ok(utils.parseKey(encrypted, 'wrong') instanceof Error, 'wrong passphrase');
  assert.ok(!(utils.parseKey(encrypted, LAB_KEY_PASSPHRASE) instanceof Error), 'right passphrase');
});

test('a wrong password is refused without the usual PAM delay', { skip }, async () => {
  // stock PAM waits 2 s ±25 % per attempt (password, then keyboard-interactive): at least 3 s here
  const started = performance.now();
  await assert.rejects(
    sshExec({ port: r1.ssh_port, username: r1.username, password: 'not-the-password', tryKeyboard: true }, 'show version'),
    /All configured authentication methods failed/,
  );
  const elapsed = Math.round(performance.now() - started);
  assert.ok(elapsed < 2500, `refused after ${elapsed} ms`);
});

test('telnet on r1: options negotiated, login, vtysh prompt and show running-config', { skip }, async () => {
  const t = await telnet(r1.telnet_port!);
  try {
    await t.expect(/r1-lab login: $/);
    t.send(`${r1.username}\r\n`);
    await t.expect(/Password: ?$/);
    t.send(`${r1.password}\r\n`);
    const banner = await t.expect(/\nr1-lab# $/);
    assert.match(banner, /Hello, this is FRRouting/);
    t.send('show running-config\r\n');
    const config = await t.expect(/\nend\r?\nr1-lab# $/);
    assert.match(config, /^hostname r1-lab\r?$/m);
    t.send('exit\r\n');
  } finally {
    t.close();
  }
});

test('telnet on r2 answers with its own login prompt', { skip }, async () => {
  const t = await telnet(r2.telnet_port!);
  try {
    await t.expect(/r2-lab login: $/);
  } finally {
    t.close();
  }
});

test('a change made with vtysh() is what the next SSH session sees', { skip }, async () => {
  const route = 'ip route 100.64.99.0/24 Null0 tag 4242';
  const login = { port: r2.ssh_port, username: r2.username, password: r2.password };
  await vtysh('r2', 'configure terminal', route);
  try {
    const after = await sshExec(login, 'show running-config');
    assert.ok(after.stdout.split('\n').includes(route), 'the new static route is in the running-config');
    assert.equal(after.stdout, await showRunningConfig('r2'));
  } finally {
    await vtysh('r2', 'configure terminal', `no ${route}`);
  }
  assert.ok(!(await showRunningConfig('r2')).includes(route), 'the route is gone again');
  await assert.rejects(vtysh('r2', 'no-such-command'), /Unknown command/);
});

test('ensureLab() keeps a healthy lab as it is', { skip }, async () => {
  const login = { port: srv1.ssh_port, username: srv1.username, password: srv1.password };
  const keyBefore = (await sshExec(login, 'true')).hostKey;
  await ensureLab();
  // a restart ("up") would have generated new host keys
  assert.equal((await sshExec(login, 'true')).hostKey, keyBefore);
});

test('rekey(r1) gives r1 a new host key, and logins keep working', { skip }, async () => {
  const login = { port: r1.ssh_port, username: r1.username, password: r1.password };
  const keyBefore = (await sshExec(login, 'show version')).hostKey;
  await rekey('r1');
  const after = await sshExec(login, 'show version');
  assert.equal(after.code, 0);
  assert.match(keyBefore, /^SHA256:[A-Za-z0-9+/]{43}$/);
  assert.notEqual(after.hostKey, keyBefore);
});

// ------------------------------------------------------------------------------------------ helpers

interface Login {
  port: number;
  username: string;
  password?: string;
  privateKey?: Buffer;
  passphrase?: string;
  /** Also try keyboard-interactive, answering every prompt with the password. */
  tryKeyboard?: boolean;
}

interface ExecResult {
  stdout: string;
  stderr: string;
  code: number | null;
  /** "SHA256:<base64>" of the host key the server presented. */
  hostKey: string;
  /** The server's pre-authentication banner. */
  banner: string;
}

/** One SSH connection, one exec request (no PTY), like a backup in exec mode. */
function sshExec(login: Login, command: string): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    let hostKey = '';
    let banner = '';
    client.on('banner', (message) => {
      banner += message;
    });
    client.on('keyboard-interactive', (_name, _instructions, _lang, prompts, finish) => {
      finish(prompts.map(() => login.password ?? ''));
    });
    client.on('error', reject);
    client.on('ready', () => {
      client.exec(command, (err, stream) => {
        if (err) {
          client.end();
          reject(err);
          return;
        }
        let stdout = '';
        let stderr = '';
        stream.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
        stream.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
        stream.on('close', (code: number | null) => {
          client.end();
          resolve({ stdout, stderr, code, hostKey, banner });
        });
      });
    });
    client.connect({
      host: '127.0.0.1',
      ...login,
      readyTimeout: 10_000,
      hostVerifier: (key: Buffer) => {
        hostKey = `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
        return true;
      },
    });
  });
}

/** A bare telnet client with confvault's option policy (echo and suppress-go-ahead accepted), collects the plain text. */
async function telnet(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let text = '';
  let onText: (() => void) | null = null;
  let failure: Error | null = null;
  const filter = new TelnetFilter((reply) => socket.write(reply));
  socket.on('error', (err) => {
    failure = err;
    onText?.();
  });
  socket.on('data', (chunk: Buffer) => {
    const plain = filter.filter(chunk);
    text += plain.toString('utf8');
    onText?.();
  });
  return {
    send: (s: string) => socket.write(s),
    close: () => socket.destroy(),
    /** Resolves with the text received up to and including the first match of `re`, which it consumes. */
    expect: (re: RegExp, timeoutMs = 10_000) =>
      new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => finish(new Error(`telnet: no ${re} within ${timeoutMs} ms; got ${JSON.stringify(text.slice(-300))}`)), timeoutMs);
        const finish = (err: Error | null, value = '') => {
          clearTimeout(timer);
          onText = null;
          if (err) reject(err);
          else resolve(value);
        };
        onText = () => {
          if (failure) return finish(failure);
          const m = re.exec(text);
          if (!m) return;
          const end = m.index + m[0].length;
          const value = text.slice(0, end);
          text = text.slice(end);
          finish(null, value);
        };
        onText();
      }),
  };
}
