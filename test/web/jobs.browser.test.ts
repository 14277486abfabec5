// In headless Chromium against simulated devices: bulk backup of a group from the device list, the Jobs page following it live, a selection, cancel.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { createUser } from '../../src/features/users/users.service';
import { startSimulator, loadTranscript, type RunningSimulator } from '../sim/simulator';
import { CHROMIUM, CHROMIUM_ARGS, ensureChromium } from '../helpers/browser';
import { REPO_ROOT, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));

let skip: string | null = null;
let t: TestAppliance;
let sim: RunningSimulator;
let browser: Browser | undefined;
let group = 0;
const problems: string[] = [];

before(async () => {
  skip = ensureChromium();
  if (skip) return;
  t = await startTestAppliance({ CONFVAULT_BACKUP_CONCURRENCY: '1' });
  sim = await startSimulator({
    devices: ['br-stall', 'br1', 'br2'].map((name) => ({
      name,
      transcript: frr,
      username: name,
      password: 'pw-browser-1',
      failure: name === 'br-stall' ? ('stall_mid_output' as const) : undefined,
    })),
  });
  const { db, secrets } = t.services;
  const tpl = seedBuiltinTemplate(db, 'frr');
  group = seedGroup(db, 'Lab');
  const other = seedGroup(db, 'Slow');
  for (const name of ['br-stall', 'br1', 'br2']) {
    seedDevice(db, {
      name,
      port: sim.port,
      credential_id: seedCredential(db, secrets, { name: `bc-${name}`, username: name, password: 'pw-browser-1' }),
      template_id: tpl,
      group_id: name === 'br-stall' ? other : group,
    });
  }
  await createUser(db, SYSTEM_ACTOR, { username: 'operator', password: 'operator-password-1', role: 'administrator', groups: null, timezone: null });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await sim?.close();
  await t?.close();
});

async function newPage(): Promise<Page> {
  const page = await (await browser!.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('dialog', (d) => void d.accept());
  await page.goto(`${t.url}/login`);
  await page.getByLabel('Username').fill('operator');
  await page.getByLabel('Password').fill('operator-password-1');
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(`${t.url}/`);
  return page;
}

test('bulk backup of a group from the device list, followed on the Jobs page without reloading; a selection; cancel', { timeout: 120_000 }, async (ctx) => {
  if (skip) return ctx.skip(skip);
  const page = await newPage();

  // The device list filtered on the group: "Back up this group".
  await page.goto(`${t.url}/devices`);
  await page.locator('select[name="group_id"]').selectOption({ label: 'Lab' });
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL(new RegExp(`group_id=${group}`));
  await page.getByRole('button', { name: 'Back up this group' }).click();
  await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
  await page.getByText('Backup of group Lab started: 2 device(s).').waitFor();
  // The page refreshes its live part by itself until the job ends.
  await page.locator('#job-state', { hasText: 'finished' }).waitFor({ timeout: 30_000 });
  assert.equal(await page.locator('#job-items .item-result', { hasText: 'first version stored' }).count(), 2);
  assert.equal(await page.locator('.progress-count').textContent(), '2/2');

  // The Jobs page lists it with who started it.
  await page.getByRole('link', { name: 'Jobs', exact: true }).first().click();
  await page.waitForURL(`${t.url}/jobs`);
  const row = page.locator('#jobs tbody tr', { hasText: 'group Lab' });
  await row.waitFor();
  assert.match((await row.textContent()) ?? '', /finished.*2\/2.*operator \(web\)/s);

  // Ticked devices: "Back up selected"; unchanged configurations say "no change".
  await page.goto(`${t.url}/devices`);
  await page.getByLabel('Select br1').check();
  await page.getByLabel('Select br2').check();
  await page.getByRole('button', { name: 'Back up selected' }).click();
  await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
  await page.locator('#job-state', { hasText: 'finished' }).waitFor({ timeout: 30_000 });
  assert.equal(await page.locator('#job-items .item-result', { hasText: 'no change' }).count(), 2);

  // A device that stalls: the job page shows it running, Cancel stops it.
  await page.goto(`${t.url}/devices`);
  await page.getByLabel('Select br-stall').check();
  await page.getByRole('button', { name: 'Back up selected' }).click();
  await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
  await page.locator('#job-items .item-state', { hasText: 'running' }).waitFor({ timeout: 30_000 });
  await page.getByRole('button', { name: 'Cancel' }).click();
  await page.locator('#job-state', { hasText: 'cancelled' }).waitFor({ timeout: 15_000 });
  await page.locator('#job-items .item-state', { hasText: 'cancelled' }).waitFor();

  assert.deepEqual(problems, [], 'no script errors or CSP violations');
});
