// Test harness: a real appliance (temporary data dir, migrated SQLite file, HTTP on a loopback port) and helpers around it.
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openAppliance, type Appliance } from '../../src/app/bootstrap';
import { createLogger } from '../../src/app/logger';
import { loadConfig } from '../../src/config/config';
import { createApiKey } from '../../src/features/apikeys/apikeys.service';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser, ensureFirstAdmin } from '../../src/features/users/users.service';
import { createApp } from '../../src/http/app';
import type { AppServices } from '../../src/http/context';
import { startServer, type RunningServer } from '../../src/http/server';
import type { Permission } from '../../src/identity/permissions';
import { repoRoot } from '../../src/runtime/assets';

export const REPO_ROOT = repoRoot();

export function tempDir(prefix = 'confvault-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

export interface TestAppliance {
  dir: string;
  appliance: Appliance;
  services: AppServices;
  server: RunningServer;
  url: string;
  /** Create a user with exactly these permissions (a fresh role) and scope, and return an API key for it. */
  keyFor(opts: { permissions: Permission[] | 'all'; groups?: number[] | null; timezone?: string | null; username?: string }): Promise<string>;
  /** fetch relative to the server with an optional API key. */
  api(pathname: string, init?: RequestInit & { key?: string; json?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

let userSeq = 0;

export async function startTestAppliance(overrides: Record<string, string> = {}): Promise<TestAppliance> {
  const dir = tempDir();
  const config = loadConfig({ dataDir: path.join(dir, 'data'), listen: '127.0.0.1:0' }, { CONFVAULT_LOG_LEVEL: 'silent', ...overrides });
  const appliance = openAppliance({}, config);
  await ensureFirstAdmin(appliance.db, 'admin-password-1');
  const services: AppServices = {
    db: appliance.db,
    config,
    log: createLogger(config.log.level),
    secrets: appliance.secrets,
    dataDir: appliance.dataDir,
    snapshots: appliance.snapshots,
  };
  const server = await startServer(createApp(services), config);
  const url = server.url;
  return {
    dir,
    appliance,
    services,
    server,
    url,
    async keyFor({ permissions, groups = null, timezone = null, username }) {
      const name = username ?? `user${++userSeq}_${process.pid}`;
      let role = 'administrator';
      if (permissions !== 'all') {
        role = `role_${name}`;
        createRole(appliance.db, { name: role, permissions });
      }
      await createUser(appliance.db, { username: name, password: 'test-password-123', role, groups, timezone });
      return createApiKey(appliance.db, { username: name }).key;
    },
    api(pathname, init = {}) {
      const headers = new Headers(init.headers);
      if (init.key) headers.set('X-API-Key', init.key);
      let body = init.body;
      if (init.json !== undefined) {
        headers.set('Content-Type', 'application/json');
        body = JSON.stringify(init.json);
      }
      return fetch(url + pathname, { ...init, headers, body });
    },
    async close() {
      await server.close();
      appliance.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The CLI as a child process, exactly as an operator runs it (through tsx in development). */
export function runCli(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'src/main.ts'), ...args], {
    cwd: opts.cwd ?? REPO_ROOT,
    input: opts.input ?? '',
    env: { ...process.env, CONFVAULT_LOG_LEVEL: 'silent', ...opts.env },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

/** Start `confvault serve` as a child process; resolves once /healthz answers. */
export async function spawnServe(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'src/main.ts'), 'serve', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${stderr}\n${stdout}`)), 30_000);
    child.stdout.on('data', () => {
      const m = /"url":"(https?:\/\/[^"]+)"/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${stderr}\n${stdout}`));
    });
  });
  return {
    child,
    url,
    output: () => ({ stdout, stderr }),
    stop: () =>
      new Promise<number | null>((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
}
