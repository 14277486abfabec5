// Device lab for tests: the lab's devices and logins, bringing the lab up once (test/lab/lab.sh), and acting inside its devices.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type LabTemplate = 'frr' | 'bird' | 'linux';
export type LabDeviceName = 'r1' | 'r2' | 'bird1' | 'srv1';
export type FrrDeviceName = 'r1' | 'r2';

export interface LabDevice {
  name: LabDeviceName;
  host: string;
  ssh_port: number;
  telnet_port: number | null;
  username: string;
  password: string;
  template: LabTemplate;
  /** The device's hostname: FRR prompts are `<hostname># `, telnet asks `<hostname> login: `. */
  hostname: string;
}

/** State directory of the lab; `lab.sh down` removes it. */
export const LAB_DIR = '/tmp/confvault-lab';
export const LAB_KEY_PATH = `${LAB_DIR}/keys/lab_ed25519`;
/** A second key, authorised everywhere too, encrypted with LAB_KEY_PASSPHRASE. */
export const LAB_KEY_ENC_PATH = `${LAB_DIR}/keys/lab_ed25519_enc`;
export const LAB_KEY_PASSPHRASE = 'labpass';

// Must match the DEVICES table of lab.sh (lab.test.ts logs into every one of these).
export const LAB_DEVICES: Readonly<Record<LabDeviceName, Readonly<LabDevice>>> = Object.freeze({
  r1: device({ name: 'r1', ssh_port: 2422, telnet_port: 2522, username: 'netops', password: 'netops123', template: 'frr', hostname: 'r1-lab' }),
  r2: device({ name: 'r2', ssh_port: 2423, telnet_port: 2523, username: 'netops', password: 'netops123', template: 'frr', hostname: 'r2-lab' }),
  bird1: device({ name: 'bird1', ssh_port: 2424, telnet_port: null, username: 'birdops', password: 'birdops123', template: 'bird', hostname: 'bird1-lab' }),
  srv1: device({ name: 'srv1', ssh_port: 2425, telnet_port: null, username: 'linuxops', password: 'linuxops123', template: 'linux', hostname: 'srv1-lab' }),
});

function device(d: Omit<LabDevice, 'host'>): Readonly<LabDevice> {
  return Object.freeze({ ...d, host: '127.0.0.1' });
}

const LAB_SCRIPT = fileURLToPath(new URL('./lab.sh', import.meta.url));
// A cold start installs Debian packages first; a warm one takes a few seconds.
const UP_TIMEOUT_MS = 15 * 60_000;
const COMMAND_TIMEOUT_MS = 60_000;
// Commands run inside a device get a fixed environment: a caller's VTYSH_PAGER or locale must not change output.
const DEVICE_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' };

let availability: { ok: boolean; reason?: string } | undefined;

/** Whether this machine can run the lab at all: Linux, root, and namespaces that can be created. */
export function labAvailable(): { ok: boolean; reason?: string } {
  availability ??= checkAvailability();
  return availability;
}

function checkAvailability(): { ok: boolean; reason?: string } {
  if (process.platform !== 'linux') return { ok: false, reason: 'the device lab needs Linux' };
  if (process.getuid?.() !== 0) return { ok: false, reason: 'the device lab needs root (network namespaces, mounts)' };
  const unshare = probe('unshare', ['--net', '--mount', '--uts', '--pid', '--fork', 'true']);
  if (unshare) return { ok: false, reason: `the device lab cannot create namespaces: ${unshare}` };
  // lab.sh installs iproute2 itself when apt-get is there to do it
  const ip = probe('ip', ['-V']);
  if (ip && probe('apt-get', ['--version'])) return { ok: false, reason: `the device lab needs iproute2: ${ip}` };
  return { ok: true };
}

/** Runs a command; returns why it failed, or null when it exited 0. */
function probe(cmd: string, args: string[]): string | null {
  const r = spawnSync(cmd, args, { stdio: 'ignore', timeout: 10_000 });
  if (r.error || r.status !== 0) return `\`${cmd} ${args.join(' ')}\` failed (${r.error?.message ?? `exit ${r.status}`})`;
  return null;
}

/** Held by one test file at a time (see acquireLabLock); not lab.sh's own lock, which guards only start and stop. */
export const LAB_TEST_LOCK = '/tmp/confvault-lab-tests.lock';
let locksHeld = 0;

/**
 * Waits for exclusive use of the lab across processes (test files run two at a time, and some rekey a device
 * or change its config) and resolves with the function that gives it back. Call it in `before` and release
 * in `after`. The lock is held by a child `flock` whose stdin is a pipe from this process: releasing closes
 * the pipe, and so does this process dying, so a crashed or killed test file never leaves the lab locked.
 */
export async function acquireLabLock(opts: { timeoutMs?: number } = {}): Promise<() => void> {
  const timeoutMs = opts.timeoutMs ?? UP_TIMEOUT_MS + 5 * 60_000;
  // `read` returns at EOF: when we close its stdin, or when this process exits for any reason.
  const child = spawn('flock', ['--exclusive', LAB_TEST_LOCK, 'sh', '-c', 'echo locked; read _ignored'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  try {
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(
        () => reject(new Error(`no exclusive use of the device lab within ${timeoutMs / 1000} s; last taken by ${lockHolder()}`)),
        timeoutMs,
      );
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        if (out.includes('locked\n')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(new Error(`cannot take the lab lock with flock(1): ${err.message}`));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`flock ${LAB_TEST_LOCK} ended before taking the lock (${signal ?? `exit ${code}`}): ${stderr.trim()}`));
      });
    });
  } catch (err) {
    // still waiting in flock(1), which has not started the holder yet: stopping it gives up the wait
    child.kill('SIGTERM');
    throw err;
  }
  // For the message of whoever waits next; writing the file does not touch the lock on it.
  writeFileSync(LAB_TEST_LOCK, `pid ${process.pid} (${process.argv.slice(1).join(' ')})\n`);
  // A file that forgets to release can still exit, and exiting releases the lock.
  child.unref();
  for (const s of [child.stdin, child.stdout, child.stderr] as unknown as { unref?: () => void }[]) s.unref?.();
  locksHeld++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    locksHeld--;
    child.stdin.destroy();
  };
}

function lockHolder(): string {
  try {
    return readFileSync(LAB_TEST_LOCK, 'utf8').trim() || 'unknown';
  } catch {
    return 'unknown';
  }
}

let ensuring: Promise<void> | undefined;

/**
 * Brings the lab up unless it is already up and healthy. Safe to call from many test files at once:
 * lab.sh takes a lock, checks every SSH port for a banner and FRR's vtysh for an answer, and only
 * starts the lab (installing packages the first time) when that check fails.
 */
export function ensureLab(): Promise<void> {
  ensuring ??= runLabScript(['ensure'], UP_TIMEOUT_MS).finally(() => {
    ensuring = undefined;
  });
  return ensuring;
}

/** New SSH host keys for the device, its sshd restarted. Every later connection sees the new key. */
export function rekey(device: LabDeviceName): Promise<void> {
  return runLabScript(['rekey', labDevice(device).name], COMMAND_TIMEOUT_MS);
}

/** Stops the whole lab and removes its state, once no other test file holds the lab lock. */
export function stopLab(): Promise<void> {
  // lab.sh down waits for the tests lock: not for the one this process holds
  return runLabScript(['down'], COMMAND_TIMEOUT_MS, locksHeld > 0 ? { CONFVAULT_LAB_TESTS_LOCK_HELD: '1' } : {});
}

/**
 * Runs vtysh commands as root inside an FRR device, like an operator at the console, e.g.
 * `vtysh('r1', 'configure terminal', 'ip route 100.64.99.0/24 Null0')`. Resolves with vtysh's output;
 * rejects when vtysh exits non-zero (an unknown or refused command).
 */
export async function vtysh(device: FrrDeviceName, ...commands: string[]): Promise<string> {
  if (labDevice(device).template !== 'frr') throw new Error(`vtysh: ${device} is not an FRR device`);
  if (commands.length === 0) throw new Error('vtysh: no command given');
  return runInDevice(device, ['vtysh', ...commands.flatMap((c) => ['-c', c])]);
}

/** What `show running-config` prints on the device right now (LF line endings, as without a PTY). */
export function showRunningConfig(device: FrrDeviceName): Promise<string> {
  return vtysh(device, 'show running-config');
}

/** Runs a program as root inside a lab device (its namespaces, its /etc), e.g. `onDevice('srv1', 'cat', '/etc/hosts')`; resolves with stdout. */
export function onDevice(device: LabDeviceName, ...argv: string[]): Promise<string> {
  if (argv.length === 0) throw new Error('onDevice: no command given');
  return runInDevice(labDevice(device).name, argv);
}

function labDevice(name: string): Readonly<LabDevice> {
  const d = (LAB_DEVICES as Record<string, Readonly<LabDevice> | undefined>)[name];
  if (!d) throw new Error(`unknown lab device ${JSON.stringify(name)}; known: ${Object.keys(LAB_DEVICES).join(', ')}`);
  return d;
}

/** The host pid of the device's PID 1 (lab.sh's device-init), whose namespaces nsenter joins. */
function anchorPid(device: LabDeviceName): string {
  try {
    const pid = readFileSync(join(LAB_DIR, 'dev', device, 'anchor.pid'), 'utf8').trim();
    // a stale pid file must not send us into some unrelated process's namespaces
    if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`${LAB_DIR}/bin/device-init`)) return pid;
  } catch {
    // no pid file or no such process: not running
  }
  throw new Error(`lab device ${device} is not running (call ensureLab() first)`);
}

function runInDevice(device: LabDeviceName, argv: string[]): Promise<string> {
  const args = ['-t', anchorPid(device), '-n', '-m', '-u', '-p', '--', ...argv];
  return new Promise((resolve, reject) => {
    execFile('nsenter', args, { env: DEVICE_ENV, timeout: COMMAND_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        const out = `${stdout}${stderr}`.trim();
        reject(new Error(`${argv.join(' ')} on ${device} failed: ${err.message.split('\n')[0]}${out ? `\n${out}` : ''}`));
      } else {
        resolve(stdout);
      }
    });
  });
}

/** Runs lab.sh with its output in a temporary log file (daemons it starts must not hold a pipe of ours). */
async function runLabScript(args: string[], timeoutMs: number, env: Record<string, string> = {}): Promise<void> {
  const available = labAvailable();
  if (!available.ok) throw new Error(`device lab cannot run here: ${available.reason}`);
  const dir = mkdtempSync(join(tmpdir(), 'confvault-lab-run-'));
  const logPath = join(dir, 'lab.log');
  const fd = openSync(logPath, 'w');
  try {
    const outcome = await new Promise<string>((resolve, reject) => {
      const child = spawn('bash', [LAB_SCRIPT, ...args], { stdio: ['ignore', fd, fd], env: { ...process.env, ...env } });
      const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        resolve(code === 0 ? 'ok' : signal ? `killed by ${signal}${signal === 'SIGTERM' ? ` after ${timeoutMs} ms` : ''}` : `exit ${code}`);
      });
    });
    if (outcome !== 'ok') {
      throw new Error(`test/lab/lab.sh ${args.join(' ')} failed (${outcome}); last lines of its output:\n${tail(logPath, 40)}`);
    }
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
}

function tail(path: string, lines: number): string {
  return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}
