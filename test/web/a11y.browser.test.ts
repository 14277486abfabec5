// Accessibility and phone width in headless Chromium: axe-core over every application page at 1280 and 390 px, the skip link, the collapsed menu, tables and diffs on a phone.
// Heavy scenario: runs in npm run test:lab (test/run.sh), beside the device lab; CI runs it after npm test.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import type { TestAppliance } from '../helpers/appliance';
import { applicationPages, type AxeFinding, ensureChromium, seriousViolations, type Showcase, showcaseInBrowser } from '../helpers/browser';

const WIDTHS = [1280, 390] as const;

describe('accessibility and phone width (Chromium, axe-core)', () => {
  let skip: string | null = null;
  let t: TestAppliance;
  let seed: Showcase;
  let browser: Browser | undefined;
  let pages = new Map<number, Page>();

  before(async () => {
    skip = ensureChromium();
    if (skip) return;
    // axe is injected as a script of its own: the appliance's CSP would (rightly) refuse it.
    ({ t, seed, browser, pages } = await showcaseInBrowser(WIDTHS, { bypassCSP: true }));
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  for (const width of WIDTHS) {
    test(`every application page at ${width} px has no serious or critical axe violation`, { timeout: 300_000 }, async (ctx) => {
      if (skip) return ctx.skip(skip);
      const page = pages.get(width)!;
      const found: string[] = [];
      for (const p of applicationPages(seed)) {
        const res = await page.goto(t.url + p);
        assert.equal(res?.status(), 200, `${p} answers`);
        for (const v of await seriousViolations(page)) found.push(`${p}: ${v.impact} ${v.id} (${v.help}) at ${v.nodes.join(' | ')}`);
      }
      assert.deepEqual(found, [], `axe at ${width} px:\n${found.join('\n')}`);
    });
  }

  // The bundled API reference (src/app/docs.ts, docs-a11y.ts): its theme, its mended ARIA and the link to the plain document.
  // It has some 28,000 elements: drawing it costs about 15 s of CPU, axe over it about 20 s. So it is drawn once,
  // checked at 1280 px, then narrowed to 390 px as a window is (the reference follows the width, and docs-a11y.ts
  // mends again on resize: 2 s instead of drawing it again) and checked again, every rule over the whole page.
  const OPERATIONS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'].map((m) => `section[id^="api-1/tag/"][id*="/${m}/"]`);
  test(
    'the API docs page at 1280 and 390 px has no serious or critical axe violation, and links the raw OpenAPI document',
    { timeout: 300_000 },
    async (ctx) => {
      if (skip) return ctx.skip(skip);
      const page = pages.get(1280)!;
      const res = await page.goto(`${t.url}/api/v1/docs`);
      assert.equal(res?.status(), 200);
      assert.equal(await page.getAttribute('html', 'lang'), 'en');
      assert.equal(await page.getByRole('link', { name: /OpenAPI document \(JSON\)/ }).getAttribute('href'), '/api/v1/openapi.json');
      await page.getByText('Backup content').first().waitFor({ timeout: 60_000 });
      // The reference draws its operations a few at a time: axe must see every one (the last are the newest).
      const operations = await page.evaluate(async () => {
        const doc = (await (await fetch('/api/v1/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> };
        return Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).filter((m) => /^(get|put|post|delete|patch)$/.test(m)).length, 0);
      });
      await page.waitForFunction(([selector, n]) => document.querySelectorAll(selector).length >= n, [OPERATIONS.join(', '), operations] as const, {
        timeout: 60_000,
      });
      // The mending script runs on the next frame after the reference draws (and after each resize).
      const mended = () =>
        page.waitForFunction(() => document.querySelectorAll('button[aria-selected]:not([role])').length === 0, undefined, { timeout: 10_000 });
      const report = (width: number, found: AxeFinding[]) =>
        assert.deepEqual(
          found,
          [],
          `axe on /api/v1/docs at ${width} px:\n${found.map((v) => `${v.impact} ${v.id} (${v.help}) at ${v.nodes.join(' | ')}`).join('\n')}`,
        );
      await mended();
      report(1280, await seriousViolations(page));
      try {
        await page.setViewportSize({ width: 390, height: 844 });
        await page.waitForFunction(() => window.innerWidth === 390, undefined, { timeout: 10_000 });
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        await mended();
        report(390, await seriousViolations(page));
      } finally {
        await page.setViewportSize({ width: 1280, height: 900 });
      }
    },
  );

  test('the first Tab reaches a skip link that moves focus to the content', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const page = pages.get(1280)!;
    await page.goto(`${t.url}/devices`);
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), 'Skip to content');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    const inMain = await page.evaluate(() => !!document.activeElement?.closest('main'));
    assert.ok(inMain, 'after the skip link, the next Tab lands inside the page content');
  });

  test('at 390 px the menu is collapsed behind one button and opens without script', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const page = pages.get(390)!;
    await page.goto(`${t.url}/devices`);
    const header = await page.locator('header.top').boundingBox();
    assert.ok(header && header.height <= 64, `the header is one line high (${header?.height} px)`);
    assert.equal(await page.getByRole('link', { name: 'Audit log' }).isVisible(), false, 'menu entries are hidden until asked for');
    await page.locator('.menu > summary').click();
    assert.ok(await page.getByRole('link', { name: 'Audit log' }).isVisible(), 'the menu opens');
    // Without script: the toggle is a <details>, so it works the same with JavaScript off.
    assert.equal(await page.locator('details.menu').count(), 1);
  });

  test('at 390 px the device list keeps name and status on screen, and the page does not scroll sideways', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const page = pages.get(390)!;
    for (const p of ['/devices', '/', '/groups', '/audit', '/users', '/api-keys', '/credentials', '/collectors']) {
      await page.goto(t.url + p);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), `no sideways scrolling at 390 px on ${p}`);
    }
    await page.goto(`${t.url}/devices`);
    for (const text of ['core-rtr-1', 'edge-sw-12']) {
      const box = await page.getByRole('link', { name: text, exact: true }).boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `${text} is on screen`);
    }
    const status = page.locator('.badge.unreachable').first();
    const sb = await status.boundingBox();
    assert.ok(sb && sb.x >= 0 && sb.x + sb.width <= 390, 'the unreachable badge is on screen');
  });

  test('the dashboard’s charts have their numbers in a table too', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const page = pages.get(390)!;
    await page.goto(`${t.url}/`);
    const tables = page.locator('table.chart-data');
    assert.equal(await tables.count(), 2);
    await page.getByText('Backup outcomes as a table').click();
    assert.ok(await tables.first().isVisible());
    assert.ok((await tables.first().locator('tbody tr').count()) >= 30);
  });

  test('below 768 px the diff reads in one column (unified) by default; at 1280 px side by side', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const columns = async (page: Page) => {
      await page.goto(`${t.url}/devices/${seed.devices.core}/diff?a=${seed.backups.first}&b=${seed.backups.second}`);
      const xs = await page
        .locator('#diff td.code')
        .evaluateAll((els) => els.filter((e) => (e as HTMLElement).offsetParent !== null).map((e) => Math.round(e.getBoundingClientRect().x)));
      return { xs: new Set(xs), fits: await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1) };
    };
    const phone = await columns(pages.get(390)!);
    assert.equal(phone.xs.size, 1, 'one column of code at 390 px');
    assert.ok(phone.fits, 'no sideways scrolling');
    const removed = pages.get(390)!.locator('#diff td.del', { hasText: 'remote-as 64513' });
    const added = pages.get(390)!.locator('#diff td.add', { hasText: 'remote-as 64514' });
    assert.ok((await removed.boundingBox())!.y < (await added.boundingBox())!.y, 'the removed line, then the line that replaced it');
    assert.equal((await columns(pages.get(1280)!)).xs.size, 2, 'two columns at 1280 px');
  });

  test('diff changes are marked by sign as well as colour', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const page = pages.get(1280)!;
    await page.goto(`${t.url}/devices/${seed.devices.core}/diff?a=${seed.backups.first}&b=${seed.backups.second}&view=split`);
    const mark = await page.locator('#diff td.add .sign').first().textContent();
    assert.match(mark ?? '', /\+/);
    const del = await page.locator('#diff td.del .sign').first().textContent();
    assert.match(del ?? '', /−|-/);
  });
});
