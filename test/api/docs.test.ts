// The docs page and its bundle over HTTP: no key needed, nothing loaded from elsewhere, strict CSP, cacheable bundle, no access granted.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { docsContentSecurityPolicy } from '../../src/app/docs';
import { REPO_ROOT, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import type { Json } from '../helpers/api';

const BUNDLE = readFileSync(path.join(REPO_ROOT, 'node_modules/@scalar/api-reference/dist/browser/standalone.js'));

/** The configuration object the page passes to Scalar.createApiReference. */
function pageConfig(html: string): Json {
  const m = /Scalar\.createApiReference\('#app', (\{[\s\S]*\})\)\s*<\/script>/.exec(html);
  assert.ok(m, 'start-up script present');
  return JSON.parse(m[1]);
}

describe('GET /api/v1/docs', () => {
  let t: TestAppliance;
  let res: Response;
  let html: string;

  before(async () => {
    t = await startTestAppliance();
    res = await t.api('/api/v1/docs');
    html = await res.text();
  });
  after(() => t.close());

  test('is served without a key as HTML, with a strict Content-Security-Policy', () => {
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.equal(csp, docsContentSecurityPolicy(html));
    const directives = Object.fromEntries(csp.split(/;\s*/).map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
    assert.deepEqual(directives['default-src'], ["'none'"]);
    assert.deepEqual(directives['connect-src'], ["'self'"]);
    assert.deepEqual(directives['frame-ancestors'], ["'none'"]);
    assert.equal(directives['script-src'][0], "'self'");
    assert.ok(
      directives['script-src'].slice(1).every((s: string) => /^'sha256-[A-Za-z0-9+/]+=*'$/.test(s)),
      'inline script only by hash',
    );
    for (const [name, sources] of Object.entries<string[]>(directives)) {
      assert.ok(!sources.some((s) => /^(https?:|\*|'unsafe-eval')/.test(s)), `${name}: ${sources.join(' ')}`);
    }
    assert.ok(!directives['script-src'].includes("'unsafe-inline'"));
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
  });

  test('loads everything from the appliance: its own bundle, its own document, no fonts, agent, proxy, toolbar or telemetry', () => {
    const scripts = [...html.matchAll(/<script[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]);
    assert.equal(scripts.length, 2);
    assert.match(scripts[0], /^\/api\/v1\/docs\/scalar\.js\?v=[\w-]+$/);
    assert.equal(scripts[1], '/api/v1/docs/a11y.js', 'the ARIA mending script (src/app/docs-a11y.ts), from the appliance too');
    assert.ok(!/<link\b/i.test(html), 'no stylesheet or font links');
    const urls = [...html.matchAll(/https?:\/\/[^\s"')]+/g)].map((m) => m[0]);
    assert.deepEqual(urls, [], 'no absolute URLs');
    const config = pageConfig(html);
    assert.equal(config.url, '/api/v1/openapi.json');
    assert.equal(config.withDefaultFonts, false);
    assert.deepEqual(config.agent, { disabled: true });
    assert.equal(config.telemetry, false);
    assert.equal(config.hideClientButton, true);
    assert.equal(config.showDeveloperTools, 'never');
    assert.equal(config.proxyUrl, '');
    assert.equal(config.persistAuth, false);
    assert.equal(config.favicon, '/api/v1/docs/favicon.svg');
    assert.equal(config.authentication.preferredSecurityScheme, 'ApiKeyAuth');
  });

  test('the page icon is served by the appliance', async () => {
    const icon = await t.api('/api/v1/docs/favicon.svg');
    assert.equal(icon.status, 200);
    assert.equal(icon.headers.get('content-type'), 'image/svg+xml');
    assert.match(await icon.text(), /^<svg /);
  });

  test('/api/v1/docs/ serves the same page', async () => {
    const slash = await t.api('/api/v1/docs/');
    assert.equal(slash.status, 200);
    assert.equal(await slash.text(), html);
  });

  test('the bundle: the installed standalone build, cached for a year under a content version, ETag, 304, gzip', async () => {
    const version = /scalar\.js\?v=([\w-]+)/.exec(html)![1];
    const plain = await t.api(`/api/v1/docs/scalar.js?v=${version}`, { headers: { 'Accept-Encoding': 'identity' } });
    assert.equal(plain.status, 200);
    assert.match(plain.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.equal(plain.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(plain.headers.get('content-encoding'), null);
    assert.ok(Buffer.from(await plain.arrayBuffer()).equals(BUNDLE), 'byte-identical to the installed bundle');
    const etag = plain.headers.get('etag')!;
    assert.equal(etag.slice(1, 1 + version.length), version, 'the page links the version it serves');
    const cached = await t.api('/api/v1/docs/scalar.js', { headers: { 'Accept-Encoding': 'identity', 'If-None-Match': etag } });
    assert.equal(cached.status, 304);
    assert.equal((await cached.arrayBuffer()).byteLength, 0);

    const gz = await t.api('/api/v1/docs/scalar.js', { headers: { 'Accept-Encoding': 'gzip' } });
    assert.equal(gz.headers.get('content-encoding'), 'gzip');
    assert.notEqual(gz.headers.get('etag'), etag, 'each encoding has its own ETag');
    assert.match(gz.headers.get('vary') ?? '', /Accept-Encoding/);
    assert.ok(Buffer.from(await gz.arrayBuffer()).equals(BUNDLE), 'fetch decodes it back to the same bytes');
  });

  test('opening the docs grants no access: no cookie, and the API still wants a key', async () => {
    assert.equal(res.headers.get('set-cookie'), null);
    const stats = await t.api('/api/v1/stats', { headers: { Referer: `${t.url}/api/v1/docs` } });
    assert.equal(stats.status, 401);
    assert.equal((await stats.json()).error.code, 'UNAUTHORIZED');
  });

  test('other paths under /api/v1/docs/ are 404, not a way around authentication', async () => {
    for (const p of ['/api/v1/docs/stats', '/api/v1/docs/../stats', '/api/v1/docs/openapi.json']) {
      const r = await t.api(p);
      assert.ok(r.status === 404 || (r.status === 401 && p.includes('..')), `${p} -> ${r.status}`);
    }
  });
});
