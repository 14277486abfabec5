// Compressed pages, CSS and script (and a 304 for the weak ETag a compressed file carries), the public API's JSON left as it was, the docs page's way back.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { request } from 'node:http';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { WebClient } from './web-client';

/** A raw GET (fetch decodes bodies and hides their size): status, headers and the bytes as they came over the wire. */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('compressed responses', () => {
  let t: TestAppliance;
  let admin: WebClient;
  let key = '';
  before(async () => {
    t = await startTestAppliance();
    admin = new WebClient(t.url);
    assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
    key = await t.keyFor({ permissions: 'all' });
  });
  after(() => t.close());

  const cookie = () => [...admin.cookies].map(([k, v]) => `${k}=${v}`).join('; ');

  test('a page goes gzipped to a browser that accepts it, as it was to one that does not', async () => {
    const gz = await rawGet(`${t.url}/groups`, { Cookie: cookie(), 'Accept-Encoding': 'gzip, deflate, br' });
    assert.equal(gz.status, 200);
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.match(String(gz.headers.vary), /Accept-Encoding/i);
    const html = gunzipSync(gz.body).toString('utf8');
    assert.match(html, /^<!DOCTYPE html>/);
    assert.ok(gz.body.length < html.length / 2, `${gz.body.length} bytes on the wire for ${html.length}`);
    const plain = await rawGet(`${t.url}/groups`, { Cookie: cookie() });
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.match(plain.body.toString('utf8'), /^<!DOCTYPE html>/);
  });

  test('CSS and script go gzipped, and the weak ETag they then carry still gets a 304', async () => {
    const page = (await admin.get('/groups')).html;
    for (const asset of [/href="(\/static\/app\.css[^"]*)"/, /src="(\/static\/app\.js[^"]*)"/]) {
      const href = asset.exec(page)![1].replace(/&amp;/g, '&');
      const r = await rawGet(t.url + href, { 'Accept-Encoding': 'gzip' });
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-encoding'], 'gzip', href);
      const etag = String(r.headers.etag);
      assert.match(etag, /^W\//);
      const again = await rawGet(t.url + href, { 'Accept-Encoding': 'gzip', 'If-None-Match': etag });
      assert.equal(again.status, 304, href);
    }
  });

  test('the public API’s JSON is sent as before (not compressed)', async () => {
    const r = await rawGet(`${t.url}/api/v1/devices?limit=100`, { 'X-API-Key': key, 'Accept-Encoding': 'gzip' });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-encoding'], undefined);
    assert.ok(JSON.parse(r.body.toString('utf8')));
  });

  test('the API docs page goes compressed and links back to the application', async () => {
    const r = await rawGet(`${t.url}/api/v1/docs`, { 'Accept-Encoding': 'gzip' });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-encoding'], 'gzip');
    const html = gunzipSync(r.body).toString('utf8');
    // First in the body: the way back to the application and the raw OpenAPI document, and nothing else.
    assert.match(
      html,
      /<body[^>]*>\s*<nav aria-label="Application"[^>]*><a href="\/"[^>]*>← Back to confvault<\/a><a href="\/api\/v1\/openapi\.json"[^>]*>OpenAPI document \(JSON\)[^<]*<\/a><\/nav>/,
    );
  });
});
