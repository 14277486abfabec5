// In headless Chromium (issue #25): checkboxes drawn next to their words, the configuration viewer single-spaced and copied as it is, one sign per changed diff line.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { createChannel, destinationPolicy } from '../../src/features/notifications/notifications.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import type { TestAppliance } from '../helpers/appliance';
import { ensureChromium, type Showcase, showcaseInBrowser } from '../helpers/browser';

const WIDTHS = [1280, 390] as const;

interface CheckboxBox {
  name: string;
  box: { x: number; y: number; width: number; height: number };
  words: { x: number; y: number; width: number; height: number } | null;
}

/** Every checkbox inside a label on the page: its own box and the box of the first line of its label's words (inline code: no named helpers in the page). */
function checkboxBoxes(page: Page): Promise<CheckboxBox[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll<HTMLInputElement>('label input[type="checkbox"]')).map((input) => {
      const label = input.closest('label')!;
      const text = Array.from(label.childNodes).find((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim() !== '');
      const range = document.createRange();
      if (text) range.selectNodeContents(text);
      const first = text ? Array.from(range.getClientRects()).find((r) => r.width > 0) : undefined;
      const b = input.getBoundingClientRect();
      return {
        name: input.name,
        box: { x: b.x, y: b.y, width: b.width, height: b.height },
        words: first ? { x: first.x, y: first.y, width: first.width, height: first.height } : null,
      };
    }),
  );
}

describe('rough edges of the web interface (Chromium)', () => {
  let skip: string | null = null;
  let t: TestAppliance;
  let seed: Showcase;
  let browser: Browser | undefined;
  let pages = new Map<number, Page>();

  before(async () => {
    skip = ensureChromium();
    if (skip) return;
    ({ t, seed, browser, pages } = await showcaseInBrowser(WIDTHS));
    const policy = destinationPolicy(t.appliance.config);
    await createChannel(t.services.db, SYSTEM_ACTOR, t.services.secrets, policy, { name: 'ops-hook', type: 'webhook', url: 'http://192.0.2.1/hook' });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  for (const width of WIDTHS) {
    test(`at ${width} px each checkbox sits right before its own words (rule events and channels, import options, device filters)`, async (ctx) => {
      if (skip) return ctx.skip(skip);
      const page = pages.get(width)!;
      const problems: string[] = [];
      for (const p of ['/settings/notifications', '/devices/import', '/devices']) {
        await page.goto(t.url + p);
        const boxes = await checkboxBoxes(page);
        assert.ok(boxes.length > 0, `${p} has checkboxes in labels`);
        for (const { name, box, words } of boxes) {
          if (!words) continue; // a box labelled by aria-label only (row selection)
          const gap = words.x - (box.x + box.width);
          const middle = box.y + box.height / 2;
          if (box.width > 40) problems.push(`${p} ${name}: the box is ${Math.round(box.width)} px wide`);
          if (gap < 0 || gap > 16) problems.push(`${p} ${name}: ${Math.round(gap)} px between the box and its words`);
          if (middle < words.y - 4 || middle > words.y + words.height + 4) problems.push(`${p} ${name}: the box is not on the first line of its words`);
        }
      }
      assert.deepEqual(problems, []);
    });
  }

  test('the configuration viewer is single-spaced and its rendered text is the configuration, one line break per line', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const page = pages.get(1280)!;
    await page.goto(`${t.url}/devices/${seed.devices.core}/backups/${seed.backups.second}`);
    const config = await (await page.request.get(`${t.url}/devices/${seed.devices.core}/backups/${seed.backups.second}/download`)).text();
    const seen = await page.evaluate(() => {
      const pre = document.getElementById('config-text')!;
      const lines = Array.from(pre.querySelectorAll('.line')).map((l) => l.getBoundingClientRect());
      return { inner: pre.innerText, text: pre.textContent, step: lines[1].top - lines[0].top, height: lines[0].height };
    });
    assert.equal(seen.text, config, 'the text content is the configuration');
    assert.equal(seen.inner, config, 'the rendered text (what a hand selection copies) is the configuration');
    assert.ok(seen.step < seen.height * 1.5, `one line apart: ${seen.step} px between lines ${seen.height} px high`);
  });

  test('a changed line of the side-by-side diff shows one sign, not "+ +"', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const page = pages.get(1280)!;
    await page.goto(`${t.url}/devices/${seed.devices.core}/diff?a=${seed.backups.first}&b=${seed.backups.second}`);
    // What is drawn in front of a changed line: the cell's generated content and its sign.
    const shown = await page.evaluate(() =>
      ['add', 'del'].map((kind) => {
        const td = document.querySelector(`#diff td.code.${kind}`)!;
        const before = getComputedStyle(td, '::before').content;
        return (/^["']/.test(before) ? before.slice(1, -1) : '') + (td.querySelector('.sign')?.textContent ?? '');
      }),
    );
    assert.deepEqual(shown, ['+ ', '− ']);
  });

  test('the Add channel form shows only the fields of the chosen type', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const page = pages.get(1280)!;
    await page.goto(`${t.url}/settings/notifications`);
    const shown = () => Promise.all(['smtp_host', 'url', 'secret'].map((n) => page.locator(`#add-channel [name="${n}"]`).isVisible()));
    await page.locator('#channel-type').selectOption('webhook');
    assert.deepEqual(await shown(), [false, true, true], 'webhook: URL and secret, no SMTP');
    await page.locator('#channel-type').selectOption('email');
    assert.deepEqual(await shown(), [true, false, true], 'e-mail: SMTP and secret, no URL');
    await page.locator('#channel-type').selectOption('slack');
    assert.deepEqual(await shown(), [false, true, false], 'Slack: the URL only');
  });
});
