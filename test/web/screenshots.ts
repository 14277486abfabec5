// The screenshots in docs/web.md (desktop 1280 px and phone 390 px) of a showcase appliance, written to docs/screenshots/ (a script, not a test).
// Run: node --import tsx test/web/screenshots.ts [output folder]
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { startTestAppliance } from '../helpers/appliance';
import { CHROMIUM, CHROMIUM_ARGS, REPO_ROOT, ensureChromium, loginInBrowser, seedShowcase } from '../helpers/browser';

async function main(): Promise<void> {
  const skip = ensureChromium();
  if (skip) throw new Error(skip);
  const out = process.argv[2] ?? path.join(REPO_ROOT, 'docs/screenshots');
  mkdirSync(out, { recursive: true });
  const t = await startTestAppliance();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const s = await seedShowcase(t);
    const diff = `/devices/${s.devices.core}/diff?a=${s.backups.first}&b=${s.backups.second}`;
    const shots: { width: number; name: string; path: string; menu?: boolean }[] = [
      { width: 1280, name: 'desktop-dashboard', path: '/' },
      { width: 1280, name: 'desktop-devices', path: '/devices' },
      { width: 1280, name: 'desktop-diff', path: `${diff}&view=split` },
      { width: 390, name: 'phone-dashboard', path: '/' },
      { width: 390, name: 'phone-devices', path: '/devices' },
      { width: 390, name: 'phone-menu', path: '/devices', menu: true },
      { width: 390, name: 'phone-diff', path: diff },
    ];
    for (const width of [1280, 390]) {
      const ctx = await browser.newContext({ viewport: { width, height: width > 600 ? 800 : 844 }, deviceScaleFactor: width > 600 ? 1 : 2 });
      const page = await ctx.newPage();
      await loginInBrowser(page, t.url, 'admin', 'admin-password-1');
      for (const shot of shots.filter((x) => x.width === width)) {
        await page.goto(t.url + shot.path);
        if (shot.menu) await page.locator('details.menu > summary').click();
        const file = path.join(out, `${shot.name}.png`);
        await page.screenshot({ path: file, fullPage: !shot.menu });
        console.log(file);
      }
      await ctx.close();
    }
  } finally {
    await browser.close();
    await t.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
