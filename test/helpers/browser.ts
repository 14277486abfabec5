// For browser and executable tests: Debian's chromium (installed under a lock when missing and root), and dist/confvault (rebuilt under a lock when stale).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const EXE = path.join(REPO_ROOT, 'dist/confvault');

/** Returns a reason to skip, or null when the browser is there; the lock keeps parallel files from running apt at once. */
export function ensureChromium(): string | null {
  if (existsSync(CHROMIUM)) return null;
  if (process.getuid?.() !== 0) {
    if (!process.env.CI) return `${CHROMIUM} is missing and installing it (apt-get install chromium) needs root; set CI=1 to make this a failure`;
    throw new Error(`${CHROMIUM} is missing and this CI run is not root, so it cannot be installed`);
  }
  const script = `test -x ${CHROMIUM} || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y chromium; }`;
  const r = spawnSync('flock', ['-w', '1800', path.join(tmpdir(), 'confvault-chromium-install.lock'), 'sh', '-c', script], {
    encoding: 'utf8',
    timeout: 1_800_000,
  });
  if (r.status !== 0 || !existsSync(CHROMIUM)) throw new Error(`installing chromium failed (${r.status ?? r.signal}):\n${r.stderr}\n${r.stdout.slice(-2000)}`);
  return null;
}

function newestMtime(p: string): number {
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...readdirSync(p).map((f) => newestMtime(path.join(p, f))));
}

/** Build unless dist/confvault is newer than every input, under a lock shared by parallel test files. */
export function ensureBuilt(): void {
  const inputs = ['src', 'schema', 'build/build.mjs', 'package.json'].map((p) => path.join(REPO_ROOT, p)).filter(existsSync);
  if (existsSync(EXE) && statSync(EXE).mtimeMs > Math.max(...inputs.map(newestMtime))) return;
  const r = spawnSync('flock', ['-w', '600', path.join(tmpdir(), 'confvault-build.lock'), process.execPath, path.join(REPO_ROOT, 'build/build.mjs')], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 600_000,
  });
  assert.equal(r.status, 0, `npm run build failed:\n${r.stdout}\n${r.stderr}`);
}
