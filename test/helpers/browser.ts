// For browser and executable tests: Debian's chromium (installed under a lock when missing and root), dist/confvault (rebuilt under a lock when stale), a showcase seed, its pages, axe-core.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { finishBackupSync, startBackup } from '../../src/features/backups/backup-record.service';
import { recordReachability } from '../../src/features/backups/backup-engine.service';
import { importBackup } from '../../src/features/backups/import.service';
import { createCredential } from '../../src/features/credentials/credentials.service';
import { createGroup } from '../../src/features/groups/groups.service';
import { createRule } from '../../src/features/compliance/compliance-rule-admin.service';
import { createEnrolToken, enrolCollector } from '../../src/features/collectors/collectors.service';
import { generateCollectorKeys } from '../../src/lib/collector-protocol';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { startTestAppliance, type TestAppliance } from './appliance';
import { createTestDevice, seedBuiltinTemplate } from './seed';

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
/** Shared with test/lab/lab.sh (APT_LOCK), which installs the lab's and the directory tests' packages. */
const APT_LOCK = '/tmp/confvault-apt.lock';

/** Returns a reason to skip, or null when the browser is there; the lock keeps parallel files from running apt at once. */
export function ensureChromium(): string | null {
  if (existsSync(CHROMIUM)) return null;
  if (process.getuid?.() !== 0) {
    if (!process.env.CI) return `${CHROMIUM} is missing and installing it (apt-get install chromium) needs root; set CI=1 to make this a failure`;
    throw new Error(`${CHROMIUM} is missing and this CI run is not root, so it cannot be installed`);
  }
  const script = `test -x ${CHROMIUM} || { apt-get -o DPkg::Lock::Timeout=600 update && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y chromium; }`;
  // The lock test/lab/lab.sh takes for its packages (slapd for the directory tests): one apt-get at a time.
  const r = spawnSync('flock', ['-w', '1800', APT_LOCK, 'sh', '-c', script], {
    encoding: 'utf8',
    timeout: 1_800_000,
  });
  if (r.status !== 0 || !existsSync(CHROMIUM)) throw new Error(`installing chromium failed (${r.status ?? r.signal}):\n${r.stderr}\n${r.stdout.slice(-2000)}`);
  return null;
}

/**
 * Build unless dist/confvault is newer than every input (test/helpers/ensure-built.mjs), under a lock shared by parallel
 * test files: the check runs under the lock, so a file that waited for another's build does not build again while the
 * other runs the executable.
 */
export function ensureBuilt(): void {
  const script = path.join(REPO_ROOT, 'test/helpers/ensure-built.mjs');
  const r = spawnSync('flock', ['-w', '600', path.join(tmpdir(), 'confvault-build.lock'), process.execPath, script], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 600_000,
  });
  assert.equal(r.status, 0, `npm run build failed:\n${r.stdout}\n${r.stderr}`);
}

/** axe-core's script, injected into pages by the accessibility test (the context bypasses the page's CSP to allow it). */
export const AXE_SCRIPT = path.join(REPO_ROOT, 'node_modules/axe-core/axe.min.js');

/** What the showcase seed made, for building the URLs of every page. */
export interface Showcase {
  groups: { core: number; edge: number };
  credential: number;
  template: number;
  devices: { core: number; edge: number };
  backups: { first: string; second: string };
  user: string;
  role: string;
}

const CONFIG_V1 = `hostname core-rtr-1
interface eth0
 description uplink to 2001:db8:100::1/64
 ip address 192.0.2.1/24
router bgp 64512
 neighbor 198.51.100.7 remote-as 64513
`;

/**
 * A small appliance worth looking at: two groups (one with a description), a credential, two devices (one unreachable,
 * one with a failed backup), two versions of a configuration that differ, a user with a role of its own and an API key.
 */
export async function seedShowcase(t: TestAppliance): Promise<Showcase> {
  const { db, secrets, snapshots } = t.services;
  const core = createGroup(db, SYSTEM_ACTOR, { name: 'Core', parent_id: null, description: 'Core routers, Berlin', schedule: null }).id;
  const edge = createGroup(db, SYSTEM_ACTOR, { name: 'Edge', parent_id: core, description: '', schedule: '0 3 * * *' }).id;
  const credential = createCredential(db, SYSTEM_ACTOR, secrets, { name: 'netops', username: 'backup', password: 'lab-password-1' }).id;
  const template = seedBuiltinTemplate(db, 'frr');
  const coreDev = createTestDevice(db, { credential_id: credential, template_id: template }, 'core-rtr-1', { group_id: core, hostname: '192.0.2.1' }).id;
  const edgeDev = createTestDevice(db, { credential_id: credential, template_id: template }, 'edge-sw-12', { group_id: edge, hostname: '192.0.2.12' }).id;
  const now = Date.now();
  const first = importBackup(db, SYSTEM_ACTOR, snapshots, coreDev, CONFIG_V1, now - 26 * 3600_000).id;
  const second = importBackup(db, SYSTEM_ACTOR, snapshots, coreDev, CONFIG_V1.replace('64513', '64514') + 'ip route 203.0.113.0/24 Null0\n', now - 3600_000).id;
  const failed = startBackup(db, edgeDev, template, 'manual', now - 1800_000);
  finishBackupSync(db, snapshots, failed, { ok: false, failure: 'AUTH_FAILED', message: 'Permission denied (publickey,password)' }, now - 1790_000);
  recordReachability(db, edgeDev, 'unreachable', 'connect ETIMEDOUT 192.0.2.12:22', now - 600_000);
  await t.keyFor({ permissions: ['devices.view', 'backups.view', 'dashboard.view'], groups: [core], username: 'viewer1' });
  // A compliance rule the newer version fails (a static route to Null0), so the compliance pages have something to show.
  createRule(db, snapshots, SYSTEM_ACTOR, {
    id: 'no-null-routes',
    title: 'No static routes to Null0',
    description: '',
    severity: 'medium',
    applies_to: { templates: [], groups: [] },
    remediation: 'Remove the route.',
    check: { kind: 'must_not_exist', line: '^ip route .* Null0$' },
  });
  // A remote site's collector (zone branch-7; no device is in that zone, so the device pages stay as they are); one token waits.
  const keys = generateCollectorKeys();
  const { token } = createEnrolToken(db, SYSTEM_ACTOR, 'branch-7');
  enrolCollector(db, { token, name: 'branch-7-a', signing_key: keys.signing_public, sealing_key: keys.sealing_public, version: '0.1.0' });
  createEnrolToken(db, SYSTEM_ACTOR, 'branch-8');
  return {
    groups: { core, edge },
    credential,
    template,
    devices: { core: coreDev, edge: edgeDev },
    backups: { first, second },
    user: 'viewer1',
    role: 'role_viewer1',
  };
}

/** Every page of the application an administrator can open, with the data of the showcase seed. */
export function applicationPages(s: Showcase): string[] {
  const d = s.devices.core;
  return [
    '/',
    '/devices',
    '/devices/new',
    `/devices/${d}`,
    `/devices/${s.devices.edge}`,
    `/devices/${d}/edit`,
    `/devices/${d}/delete`,
    '/devices?retired=1',
    `/devices/${d}/backups/${s.backups.second}`,
    `/devices/${d}/diff?a=${s.backups.first}&b=${s.backups.second}`,
    `/devices/${d}/diff?a=${s.backups.first}&b=${s.backups.second}&view=unified`,
    '/search?q=neighbor',
    '/groups',
    '/credentials',
    '/credentials/new',
    `/credentials/${s.credential}/edit`,
    '/templates',
    `/templates/${s.template}`,
    '/templates/new',
    '/users',
    '/users/new',
    `/users/${s.user}/edit`,
    '/roles',
    '/roles/new',
    `/roles/${s.role}/edit`,
    '/api-keys',
    '/collectors',
    '/audit',
    '/settings/notifications',
    '/compliance',
    '/compliance/report',
    '/compliance/rules',
    '/compliance/rules/new',
    '/compliance/rules/no-null-routes',
    '/compliance/rules/no-null-routes/edit',
    `/devices/${d}/compliance`,
    '/account',
    '/account/password',
  ];
}

/** Log in through the form as a person would. */
export async function loginInBrowser(page: Page, base: string, user: string, password: string): Promise<void> {
  await page.goto(`${base}/login`);
  await page.getByLabel('Username').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL((u) => !u.pathname.startsWith('/login'));
}

/** One page per width, each in a context of its own (a phone's height under 600 px wide), logged in as the test appliance's admin; dialogs accepted. */
export async function adminPagesAtWidths(
  browser: Browser,
  base: string,
  widths: readonly number[],
  opts: { bypassCSP?: boolean } = {},
): Promise<Map<number, Page>> {
  const pages = new Map<number, Page>();
  for (const width of widths) {
    const ctx = await browser.newContext({ viewport: { width, height: width > 600 ? 900 : 844 }, bypassCSP: opts.bypassCSP });
    const page = await ctx.newPage();
    page.on('dialog', (d) => void d.accept());
    await loginInBrowser(page, base, 'admin', 'admin-password-1');
    pages.set(width, page);
  }
  return pages;
}

/** A test appliance with the showcase seed, and Chromium on it as the admin at each width: what page-by-page browser tests share. */
export async function showcaseInBrowser(
  widths: readonly number[],
  opts: { bypassCSP?: boolean } = {},
): Promise<{ t: TestAppliance; seed: Showcase; browser: Browser; pages: Map<number, Page> }> {
  const t = await startTestAppliance();
  const seed = await seedShowcase(t);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  return { t, seed, browser, pages: await adminPagesAtWidths(browser, t.url, widths, opts) };
}

export interface AxeFinding {
  id: string;
  impact: string;
  help: string;
  nodes: string[];
}

/** Run axe-core on the loaded page; the serious and critical violations, each with the selectors of its first elements. */
export async function seriousViolations(page: Page): Promise<AxeFinding[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE_SCRIPT });
  return page.evaluate(async () => {
    type Result = { violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] };
    const axe = (window as unknown as { axe: { run(ctx: Document, opts: object): Promise<Result> } }).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({ id: v.id, impact: v.impact ?? '', help: v.help, nodes: v.nodes.slice(0, 5).map((n) => n.target.map(String).join(' ')) }));
  });
}

export interface ServedExecutable {
  proc: ChildProcess;
  url: string;
  /** The first administrator's password, as serve prints it on a new data directory ('' when it printed none). */
  password: string;
  /** What serve wrote on standard error so far (it keeps growing). */
  stderr(): string;
  /** SIGTERM, and wait for the exit. */
  stop(): Promise<void>;
}

/** `dist/confvault serve` on a data directory under `dir`, on a free loopback port; resolves once it prints its URL. */
export async function serveExecutable(dir: string, env: NodeJS.ProcessEnv): Promise<ServedExecutable> {
  const proc = spawn(EXE, ['serve', '--data-dir', path.join(dir, 'data'), '--listen', '127.0.0.1:0'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
    proc.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${stderr}`)));
  });
  return {
    proc,
    url,
    password: /shown only now\):\s*\n\s+(\S+)/.exec(stderr)?.[1] ?? '',
    stderr: () => stderr,
    async stop() {
      if (proc.exitCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
