// The device import in headless Chromium (issue #14): upload 500 devices with 3 bad rows, read the preview, create the valid rows.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chromium, type Browser } from 'playwright-core';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { CHROMIUM, CHROMIUM_ARGS, ensureChromium } from '../helpers/browser';
import { inventory500 } from '../helpers/inventory';
import { seedCredential, seedGroup } from '../helpers/seed';

describe('device import in headless Chromium', () => {
  let t: TestAppliance | undefined;
  let browser: Browser | undefined;
  let skip: string | null = null;

  before(async () => {
    skip = ensureChromium();
    if (skip) return;
    t = await startTestAppliance();
    seedCredential(t.services.db, t.appliance.secrets, { name: 'web-cred', username: 'u', password: 'p' });
    seedGroup(t.services.db, 'site-a');
    seedGroup(t.services.db, 'site-b');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('CSV import of 500 devices with 3 bad rows: preview, all or nothing refused, valid rows created', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const db = t!.services.db;
    const page = await browser!.newPage();
    await page.goto(`${t!.url}/login`);
    await page.fill('input[name=username]', 'admin');
    await page.fill('input[name=password]', 'admin-password-1');
    await Promise.all([page.waitForURL((u) => !u.pathname.startsWith('/login')), page.click('button[type=submit]')]);

    await page.goto(`${t!.url}/devices`);
    await Promise.all([page.waitForURL(/\/devices\/import$/), page.click('a[href="/devices/import"]')]);
    await page.setInputFiles('input[name=file]', { name: 'inventory.csv', mimeType: 'text/csv', buffer: Buffer.from(inventory500()) });
    await Promise.all([page.waitForURL(/\/devices\/import\/preview$/), page.click('#import-form button[type=submit]')]);
    assert.match((await page.textContent('#import-summary')) ?? '', /500 row\(s\): 497 valid, 3 with errors/);
    const errors = await page.$$eval('#import-errors tbody tr', (trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td'), (td) => td.textContent ?? '')));
    assert.deepEqual(
      errors.map((e) => [e[0], e[2]]),
      [
        ['101', 'hostname'],
        ['251', 'group'],
        ['402', 'name'],
      ],
    );
    assert.equal(await page.isChecked('input[name=mode][value=valid]'), true, 'with bad rows the valid rows are the default');

    // All or nothing, through the browser's own posting of the carried text: refused, nothing written.
    await page.check('input[name=mode][value=all]');
    await Promise.all([page.waitForURL(/\/devices\/import$/), page.click('#import-apply button[type=submit]')]);
    assert.match((await page.textContent('.flash.error')) ?? '', /Nothing was written: 3 row\(s\) have errors/);
    assert.equal(db.prepare('SELECT count(*) FROM devices').pluck().get(), 0);

    await page.check('input[name=mode][value=valid]');
    await Promise.all([page.waitForURL(/\/devices(\?.*)?$/), page.click('#import-apply button[type=submit]')]);
    assert.match((await page.textContent('.flash')) ?? '', /497 device\(s\) imported\. 3 row\(s\) with errors were left out\./);
    assert.equal(db.prepare('SELECT count(*) FROM devices').pluck().get(), 497);
    assert.equal(db.prepare("SELECT description FROM devices WHERE name = 'web-500'").pluck().get(), 'rack 500');
    await page.close();
  });
});
