// The docs page in headless Chromium: it renders the operations and every request it makes goes to the appliance (works on a LAN without internet).
// Heavy scenario: runs in npm run test:lab (test/run.sh), beside the device lab; CI runs it after npm test.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { REPO_ROOT, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { CHROMIUM, CHROMIUM_ARGS, ensureChromium } from '../helpers/browser';

const ARTIFACT = path.join(REPO_ROOT, 'test/.artifacts/docs.png');

/** Every request a page makes, also those Playwright's page events leave out (the favicon), through the DevTools network domain. */
async function watchNetwork(page: Page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  const w = { requested: [] as string[], failed: [] as string[], problems: [] as string[], headers: new Map<string, Record<string, string>>() };
  const pending = new Map<string, string>();
  let lastActivity = performance.now();
  cdp.on('Network.requestWillBeSent', (e: { requestId: string; request: { url: string; headers: Record<string, string> } }) => {
    w.requested.push(e.request.url);
    w.headers.set(e.request.url, e.request.headers);
    pending.set(e.requestId, e.request.url);
    lastActivity = performance.now();
  });
  cdp.on('Network.loadingFinished', (e: { requestId: string }) => {
    pending.delete(e.requestId);
    lastActivity = performance.now();
  });
  cdp.on('Network.loadingFailed', (e: { requestId: string; errorText: string; blockedReason?: string }) => {
    pending.delete(e.requestId);
    w.failed.push(`${e.errorText} ${e.blockedReason ?? ''}`);
  });
  page.on('request', (r) => w.requested.push(r.url()));
  page.on('requestfailed', (r) => w.failed.push(`${r.url()} ${r.failure()?.errorText}`));
  page.on('pageerror', (e) => w.problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) w.problems.push(`console ${m.type()}: ${m.text()}`);
  });
  return {
    ...w,
    /** Quiet for 2 s with nothing in flight: late calls (telemetry, fonts, an agent) would have started by then. */
    async settle(): Promise<void> {
      const deadline = performance.now() + 30_000;
      while (pending.size > 0 || performance.now() - lastActivity < 2_000) {
        assert.ok(performance.now() < deadline, `requests still in flight: ${[...pending.values()].join(', ')}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    /** Network URLs (not data:, blob:, about:) whose origin is not `origin`. */
    foreign(origin: string): string[] {
      return w.requested.filter((u) => !/^(data|blob|about):/.test(u)).filter((u) => new URL(u).origin !== origin);
    },
  };
}

describe('docs page in headless Chromium', () => {
  let t: TestAppliance | undefined;
  let browser: Browser | undefined;
  let skip: string | null = null;
  // One page loads the reference (some 28,000 elements, seconds of CPU) for every test; the first test loads it and
  // checks the load, the others work on it as a reader would, without a reload.
  let page: Page;
  let net: Awaited<ReturnType<typeof watchNetwork>>;
  /** The shared page, on the reference (loaded here if the first test did not get that far). */
  async function docsPage(): Promise<Page> {
    if (!page.url().includes('/api/v1/docs')) await page.goto(`${t!.url}/api/v1/docs`);
    return page;
  }

  before(async () => {
    skip = ensureChromium();
    if (skip) return;
    t = await startTestAppliance();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    net = await watchNetwork(page);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('renders the operations using only the appliance’s own origin', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const origin = new URL(t!.url).origin;
    const response = await page.goto(`${t!.url}/api/v1/docs`);
    assert.equal(response?.status(), 200);
    // The reference has fetched /api/v1/openapi.json and rendered the operations of every area.
    await page.getByText('Backup content').first().waitFor({ timeout: 60_000 });
    for (const summary of ['Device backup history', 'System statistics', 'List devices']) {
      await page.getByText(summary).first().waitFor({ timeout: 30_000 });
    }
    // The authentication panel offers the X-API-Key header.
    await page.getByText('X-API-Key').first().waitFor({ timeout: 30_000 });
    await net.settle();
    mkdirSync(path.dirname(ARTIFACT), { recursive: true });
    await page.screenshot({ path: ARTIFACT, animations: 'disabled' });

    assert.deepEqual(net.foreign(origin), [], 'requests to other hosts');
    assert.ok(
      net.requested.some((u) => u.startsWith(`${origin}/api/v1/docs/scalar.js`)),
      'bundle from the appliance',
    );
    assert.ok(
      net.requested.some((u) => u === `${origin}/api/v1/openapi.json`),
      'document from the appliance',
    );
    assert.deepEqual(net.failed, [], 'failed requests');
    assert.deepEqual(net.problems, [], 'errors and CSP violations in the page');
    ctx.diagnostic(`${new Set(net.requested).size} distinct URLs, all on ${origin}; screenshot ${path.relative(REPO_ROOT, ARTIFACT)}`);

    // The page itself holds no credentials: a call from it without a key is refused.
    const status = await page.evaluate(async () => (await fetch('/api/v1/stats')).status);
    assert.equal(status, 401);
  });

  test('a response offered in two media types has its menu beside the response, not inside its button, and the menu works', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const page = await docsPage();
    const section = page.locator('section[id="api-1/tag/diff/GET/diff"]');
    const menu = section.getByRole('button', { name: /content type/i }).first();
    await menu.waitFor({ timeout: 60_000 });
    await page.waitForFunction(() => !document.querySelector('button button'), undefined, { timeout: 10_000 });
    // The disclosure button of the response the menu belongs to: its sibling in the same list item.
    const response = menu.locator('xpath=ancestor::li[1]/button[contains(@class, "parameter-item-trigger")]');
    assert.match(await response.innerText(), /200/);
    assert.equal(await response.locator('button').count(), 0, 'no control inside the response’s disclosure button');
    await menu.click();
    await page.getByRole('option', { name: 'text/x-diff' }).click();
    await menu.filter({ hasText: 'text/x-diff' }).waitFor({ timeout: 5_000 });
    assert.equal(await response.getAttribute('aria-expanded'), 'false', 'choosing a media type does not open the response');
    await response.click();
    await response.and(page.locator('[aria-expanded="true"]')).waitFor({ timeout: 5_000 }); // the response still opens
  });

  test('"Test Request" calls the appliance directly (no proxy) with the X-API-Key typed in, and does not keep it', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const origin = new URL(t!.url).origin;
    const key = await t!.keyFor({ permissions: ['dashboard.view'] });
    const page = await docsPage();
    // What this test's request brings, after the load and the first test's deliberate 401
    const net = await watchNetwork(page);
    await page.getByText('System statistics').first().waitFor({ timeout: 60_000 });
    // The statistics operation's own button: with every group open, the page has one per operation.
    const open = page.locator('section[id="api-1/tag/statistics/GET/stats"]').getByRole('button', { name: /test request/i });
    await open.scrollIntoViewIfNeeded();
    await open.click();
    const dialog = page.getByRole('dialog');
    // The header's name is a code editor named by its own label ("Name"): typing meant for "Value" must not land there.
    const name = dialog.getByRole('textbox', { name: 'Name', exact: true });
    await dialog.getByLabel('Value').first().fill(key);
    assert.equal((await name.innerText()).trim(), 'X-API-Key');
    await dialog.getByRole('button', { name: /^send/i }).first().click();
    await dialog.getByText('"total_devices"').first().waitFor({ timeout: 30_000 });
    await net.settle();

    assert.deepEqual(net.foreign(origin), [], 'requests to other hosts (a request proxy would show here)');
    assert.equal(net.headers.get(`${origin}/api/v1/stats`)?.['x-api-key'], key, 'the key travels in the X-API-Key header');
    assert.ok(!net.requested.some((u) => u.includes(key)), 'never in a URL');
    assert.deepEqual(net.failed, []);
    assert.deepEqual(net.problems, []);
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie);
    assert.ok(!stored.includes(key), 'the key is not persisted in the browser');
  });
});
