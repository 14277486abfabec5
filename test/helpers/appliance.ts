// Test harness: a real appliance (temporary data dir, migrated SQLite file, HTTP on a loopback port) and helpers around it.
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DB_FILE_NAME, ensureDataDir, openAppliance, type Appliance } from '../../src/app/bootstrap';
import { migrate } from '../../src/db/migrate';
import { openDatabase } from '../../src/db/open';
import { syncBuiltinTemplates } from '../../src/features/templates/templates.service';
import { createLogger } from '../../src/lib/logger';
import { loadConfig } from '../../src/config/config';
import { createApiKey } from '../../src/features/apikeys/apikeys.service';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser, ensureFirstAdmin } from '../../src/features/users/users.service';
import { createApp } from '../../src/app/app';
import { buildServices } from '../../src/app/services';
import { startServer, type RunningServer } from '../../src/app/server';
import type { Permission } from '../../src/identity/permissions';
import { repoRoot } from '../../src/runtime/assets';

export const REPO_ROOT = repoRoot();

/** tsx's loader by absolute URL: a bare `--import tsx` resolves from the child's cwd and fails outside the repo. */
export const TSX_LOADER = pathToFileURL(path.join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const MAIN = path.join(REPO_ROOT, 'src/main.ts');

/**
 * How a test starts the CLI: node's arguments before the command's own. `test/run.sh` bundles src/main.ts once
 * before the suite (build/cli-bundle.mjs) and names the bundle in TEST_CLI_BUNDLE: a child then needs about a third
 * of the CPU time tsx's loader costs. A test file run on its own starts src/main.ts through tsx.
 */
export function cliArgv(): string[] {
  const bundle = process.env.TEST_CLI_BUNDLE;
  return bundle ? [bundle] : ['--import', TSX_LOADER, MAIN];
}

export function tempDir(prefix = 'confvault-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

export interface TestAppliance {
  dir: string;
  appliance: Appliance;
  /** The shared services, with the process's runner and job executor (a test may put a faster one in: `jobs`). */
  services: ReturnType<typeof buildServices>;
  server: RunningServer;
  url: string;
  /** Create a user with exactly these permissions (a fresh role) and scope, and return an API key for it. */
  keyFor(opts: { permissions: Permission[] | 'all'; groups?: number[] | null; timezone?: string | null; username?: string }): Promise<string>;
  /** fetch relative to the server with an optional API key. */
  api(pathname: string, init?: RequestInit & { key?: string; json?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

let userSeq = 0;

/** The first administrator's password in every test appliance. */
const ADMIN_PASSWORD = 'admin-password-1';

/**
 * A data dir as a fresh appliance's start leaves it, but for the master key: the database migrated, the built-in
 * templates synced, the first administrator created. Made through the same functions openAppliance runs; each test
 * appliance starts as a copy, which skips the migrations, the parse of the built-in library and an argon2 hash (some
 * 0.3 s of CPU for a file's first appliance, 0.06 s for each one after). Each copy still makes its own master key on
 * opening, as a new appliance does. test/run.sh makes one for the whole suite and names it in TEST_DATA_TEMPLATE; a
 * file run alone makes its own, once.
 */
export async function makeDataTemplate(dataDir: string): Promise<string> {
  ensureDataDir(dataDir);
  const file = path.join(dataDir, DB_FILE_NAME);
  const db = openDatabase(file);
  try {
    migrate(db, file);
    syncBuiltinTemplates(db);
    await ensureFirstAdmin(db, ADMIN_PASSWORD);
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  return dataDir;
}

let ownTemplate: Promise<string> | undefined;

function dataTemplate(): Promise<string> {
  const shared = process.env.TEST_DATA_TEMPLATE;
  if (shared && existsSync(shared)) return Promise.resolve(shared);
  if (!ownTemplate) {
    const dir = tempDir('confvault-template-');
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    ownTemplate = makeDataTemplate(path.join(dir, 'data'));
  }
  return ownTemplate;
}

/** `opts.dataDir`: a data dir of the test's own (a small file system, say) instead of one in the temporary folder. */
export async function startTestAppliance(
  overrides: Record<string, string> = {},
  /** Where the JSON log goes (stdout otherwise): a test that reads the log lines. */
  opts: { log?: NodeJS.WritableStream; dataDir?: string } = {},
): Promise<TestAppliance> {
  const dir = tempDir();
  const dataDir = opts.dataDir ?? path.join(dir, 'data');
  cpSync(await dataTemplate(), dataDir, { recursive: true });
  const config = loadConfig({ dataDir, listen: '127.0.0.1:0' }, { CONFVAULT_LOG_LEVEL: 'silent', ...overrides });
  const appliance = openAppliance({}, config);
  const services = buildServices({
    db: appliance.db,
    config,
    log: opts.log ? createLogger(config.log.level, opts.log) : createLogger(config.log.level),
    secrets: appliance.secrets,
    dataDir: appliance.dataDir,
    snapshots: appliance.snapshots,
  });
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
        createRole(appliance.db, SYSTEM_ACTOR, { name: role, permissions });
      }
      await createUser(appliance.db, SYSTEM_ACTOR, { username: name, password: 'test-password-123', role, groups, timezone });
      return createApiKey(appliance.db, SYSTEM_ACTOR, { username: name }).key;
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

/** The CLI as a child process, exactly as an operator runs it (from the suite's bundle, or through tsx: cliArgv). */
export function runCli(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [...cliArgv(), ...args], {
    cwd: opts.cwd ?? REPO_ROOT,
    input: opts.input ?? '',
    env: { ...process.env, CONFVAULT_LOG_LEVEL: 'silent', ...opts.env },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

export interface CliResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** runCli without blocking the event loop, so that several commands (or an in-process server) run at once. */
export function runCliAsync(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [...cliArgv(), ...args], {
    cwd: opts.cwd ?? REPO_ROOT,
    env: { ...process.env, CONFVAULT_LOG_LEVEL: 'silent', ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  // A command that exits before reading its input (a usage error) must not fail the test with EPIPE.
  child.stdin.on('error', () => {});
  child.stdin.end(opts.input ?? '');
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

/**
 * Start `confvault serve` as a child process; resolves once it logs its URL.
 * `opts.imports` are extra modules loaded first (`--import`), `opts.cwd` its working directory, `opts.nodeArgs` flags
 * for Node.js itself (--cpu-prof, --heapsnapshot-signal).
 */
export async function spawnServe(args: string[], env: NodeJS.ProcessEnv = {}, opts: { imports?: string[]; cwd?: string; nodeArgs?: string[] } = {}) {
  const imports = (opts.imports ?? []).flatMap((m) => ['--import', path.isAbsolute(m) ? pathToFileURL(m).href : m]);
  // Extra modules are TypeScript that import src/ themselves: they need tsx and the same module instances.
  const argv = imports.length ? ['--import', TSX_LOADER, ...imports, MAIN] : cliArgv();
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...argv, 'serve', ...args], {
    cwd: opts.cwd ?? REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start:\n${stderr}\n${stdout}`));
    }, 30_000);
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
