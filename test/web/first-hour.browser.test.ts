// The first hour of a new appliance in headless Chromium against dist/confvault and the SSH simulator (issue #25): sign in,
// add devices (form and CSV), back up, retire one, bulk-move ten to another group, read history; axe on every page at 1280 and 390 px.
// Heavy scenario: runs in npm run test:lab (test/run.sh), beside the device lab; CI runs it after npm test.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, REPO_ROOT, ensureBuilt, ensureChromium, seriousViolations, serveExecutable, type ServedExecutable } from '../helpers/browser';
import { loadTranscript, startSimulator, type RunningSimulator } from '../sim/simulator';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));
const SIM_LOGIN = { username: 'r1', password: 'first-hour-pw-1' };
// The form's device is added with `template: auto` (detection logs in and reads the FRRouting banner); the CSV names
// the platform (the web import detects `auto` rows too: test/web/devices-import-detect.test.ts).
const PLATFORM = 'frr';
const BRANCHES = Array.from({ length: 11 }, (_, i) => `branch-${String(i + 1).padStart(2, '0')}`);

describe('the first hour (Chromium, dist/confvault, simulator)', () => {
  let skip: string | null = null;
  let dir = '';
  let served: ServedExecutable | undefined;
  let sim: RunningSimulator | undefined;
  let url = '';
  let password = '';
  let browser: Browser | undefined;
  const problems: string[] = [];
  const axeFindings: string[] = [];

  before(async () => {
    skip = ensureChromium();
    if (skip) return;
    ensureBuilt();
    sim = await startSimulator({ devices: [{ name: 'r1', transcript: frr, ...SIM_LOGIN }] });
    dir = mkdtempSync(path.join(tmpdir(), 'confvault-first-hour-'));
    served = await serveExecutable(dir, { PATH: '/usr/bin:/bin', HOME: dir, CONFVAULT_LOG_LEVEL: 'info' });
    url = served.url;
    password = served.password;
    assert.ok(password, `serve printed the first admin password:\n${served.stderr()}`);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });

  after(async () => {
    await browser?.close();
    await served?.stop();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A context at this width; axe is injected, so the page's CSP is bypassed (nothing else changes). */
  async function newContext(width: number, storageState?: Awaited<ReturnType<BrowserContext['storageState']>>): Promise<Page> {
    const ctx = await browser!.newContext({ viewport: { width, height: 900 }, bypassCSP: true, storageState });
    const page = await ctx.newPage();
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of 422/.test(m.text())) problems.push(`console: ${m.text()}`);
    });
    page.on('dialog', (d) => void d.accept());
    return page;
  }

  /** axe over the page as it is now; findings collected (with the width and path) and asserted at the end. */
  async function axe(page: Page, width: number): Promise<void> {
    for (const v of await seriousViolations(page))
      axeFindings.push(`${width} px ${new URL(page.url()).pathname}: ${v.impact} ${v.id} at ${v.nodes.join(' | ')}`);
  }

  test('sign in, add devices, back up, retire one, move ten, read history; every page passes axe at both widths', { timeout: 180_000 }, async (ctx) => {
    if (skip) return ctx.skip(skip);
    const page = await newContext(1280);
    // Each page is checked once per width (the phone revisits these).
    const visited = new Set<string>();
    const go = async (p: string) => {
      await page.goto(url + p);
      if (visited.has(p)) return;
      visited.add(p);
      await axe(page, 1280);
    };

    // Sign in with the printed password; the change is forced.
    await page.goto(`${url}/login`);
    await axe(page, 1280);
    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/account\/password$/);
    await axe(page, 1280);
    await page.getByLabel('Current password').fill(password);
    await page.getByLabel('New password (at least 10 characters)').fill('first-hour-admin-1');
    await page.getByLabel('New password again').fill('first-hour-admin-1');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.waitForURL(`${url}/`);
    await axe(page, 1280);

    // Two groups and the login of the (simulated) devices.
    for (const name of ['Branches', 'Core']) {
      await go('/groups');
      await page.locator('form[action="/groups"] input[name="name"]').fill(name);
      await page.getByRole('button', { name: 'Create group' }).click();
      await page.getByText(`Group ${name} created.`).waitFor();
    }
    await go('/credentials/new');
    await page.locator('input[name="name"]').fill('sim-login');
    await page.locator('input[name="username"]').fill(SIM_LOGIN.username);
    await page.locator('input[name="password"]').fill(SIM_LOGIN.password);
    await page.getByRole('button', { name: 'Create credential' }).click();
    await page.getByText('Credential sim-login created.').waitFor();

    // One device by the form, eleven by a CSV.
    await go('/devices/new');
    await page.locator('input[name="name"]').fill('core-01');
    await page.locator('input[name="hostname"]').fill(sim!.host);
    await page.locator('input[name="port"]').fill(String(sim!.port));
    await page.locator('select[name="group_id"]').selectOption({ label: 'Core' });
    await page.locator('select[name="credential_id"]').selectOption({ label: 'sim-login' });
    await page.locator('select[name="template_id"]').selectOption({ value: 'auto' });
    await page.getByRole('button', { name: 'Create device' }).click();
    await page.waitForURL(/\/devices\/\d+$/);
    assert.equal((await page.locator('dt:text-is("Platform") + dd').textContent())?.trim(), PLATFORM, 'detection picked the platform');
    await axe(page, 1280);
    const coreId = Number(/\/devices\/(\d+)$/.exec(page.url())![1]);

    const csv = ['name,hostname,port,group,credential,template', ...BRANCHES.map((n) => `${n},${sim!.host},${sim!.port},Branches,sim-login,${PLATFORM}`)].join(
      '\n',
    );
    await go('/devices/import');
    await page.setInputFiles('input[name=file]', { name: 'branches.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await Promise.all([page.waitForURL(/\/devices\/import\/preview$/), page.click('#import-form button[type=submit]')]);
    await axe(page, 1280);
    assert.match((await page.textContent('#import-summary')) ?? '', /11 row\(s\): 11 valid/);
    await Promise.all([page.waitForURL(/\/devices(\?.*)?$/), page.click('#import-apply button[type=submit]')]);
    assert.match((await page.textContent('.flash')) ?? '', /11 device\(s\) imported/);

    // Back up everything; the job page follows it.
    await go('/devices');
    await page.getByRole('button', { name: 'Back up all' }).click();
    await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
    await page.locator('#job-state', { hasText: /^finished$/ }).waitFor({ timeout: 60_000 });
    visited.add(new URL(page.url()).pathname);
    await axe(page, 1280);

    // Retire one branch: it leaves the list of devices in service and keeps its history.
    await page.goto(`${url}/devices?q=branch-11`);
    await page.getByRole('link', { name: 'branch-11', exact: true }).click();
    await page.waitForURL(/\/devices\/\d+$/);
    const retiredPath = new URL(page.url()).pathname;
    await page.getByRole('button', { name: 'Retire', exact: true }).click();
    await page.locator('#retired-note').waitFor();
    visited.add(retiredPath);
    await axe(page, 1280);
    assert.equal(await page.locator('#history tbody tr').count(), 1, 'its version is kept');
    await go('/devices');
    assert.match((await page.textContent('#tab-active')) ?? '', /In service \(11\)/);
    assert.match((await page.textContent('#tab-retired')) ?? '', /Retired \(1\)/);
    await go('/devices?retired=1');
    await page.getByRole('link', { name: 'branch-11', exact: true }).waitFor();

    // Bulk: the ten branches in service move to Core, previewed first.
    await page.goto(`${url}/devices?q=branch-`);
    await page.locator('input[data-select-all="device_id"]').check();
    assert.equal(await page.locator('input[name="device_id"]:checked').count(), 10);
    await page.getByRole('button', { name: 'Edit selected…' }).click();
    await page.waitForURL(/\/devices\/bulk$/);
    await axe(page, 1280);
    await page.getByLabel('Move to group').selectOption({ label: 'Core' });
    await page.getByRole('button', { name: 'Preview changes' }).click();
    await page.locator('#bulk-items').waitFor();
    await axe(page, 1280);
    assert.equal(await page.locator('#bulk-items li', { hasText: 'Group: Branches → Core' }).count(), 10);
    await page.getByRole('button', { name: 'Apply to 10 device(s)' }).click();
    await page.locator('#bulk-summary', { hasText: '10 device(s) changed' }).waitFor();
    await axe(page, 1280);

    // History: the core device's version, and the audit trail naming what changed.
    await go(`/devices/${coreId}`);
    await page.locator('#history a', { hasText: 'View' }).first().click();
    await page.waitForURL(/\/backups\/[0-9a-f-]+$/);
    visited.add(new URL(page.url()).pathname);
    await axe(page, 1280);
    assert.match((await page.textContent('#config-text')) ?? '', /hostname/);
    await go('/audit?action=device.update');
    assert.match((await page.textContent('#audit')) ?? '', /group: Branches → Core/);
    await go('/');
    assert.equal(await page.locator('#stat-retired .value').textContent(), '1');

    // The same pages on a phone.
    const phone = await newContext(390, await page.context().storageState());
    for (const p of visited) {
      const res = await phone.goto(url + p);
      assert.equal(res?.status(), 200, p);
      await axe(phone, 390);
    }
    await phone.goto(`${url}/devices?q=branch-`);
    await phone.locator('input[data-select-all="device_id"]').check();
    await phone.getByRole('button', { name: 'Edit selected…' }).click();
    await phone.getByLabel('Enabled').selectOption({ label: 'disable' });
    await phone.getByRole('button', { name: 'Preview changes' }).click();
    await phone.locator('#bulk-items').waitFor();
    await axe(phone, 390);

    assert.deepEqual(axeFindings, [], `axe:\n${axeFindings.join('\n')}`);
    assert.deepEqual(problems, []);
  });
});
