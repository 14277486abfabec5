// The edges of HTTP: 405 with Allow, Node-level refusals in the error shape, time limits, UTF-8 bodies, query booleans.
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openAppliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { createApiKey } from '../../src/features/apikeys/apikeys.service';
import { ensureFirstAdmin } from '../../src/features/users/users.service';
import { spawnServe, startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { expectErrorResponse } from '../helpers/api';

let t: TestAppliance;
let key: string;

before(async () => {
  t = await startTestAppliance();
  key = await t.keyFor({ permissions: 'all' });
});
after(async () => {
  await t?.close();
});

interface ErrorBody {
  error: { code: string; message: string; request_id: string; details: Record<string, unknown> };
}

/** A raw HTTP exchange over one socket: what is written, then everything read until the server closes. */
function raw(url: string, chunks: (string | Buffer)[], gapMs = 0): Promise<{ text: string; ms: number }> {
  const { hostname, port } = new URL(url);
  const began = Date.now();
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(port), hostname);
    let text = '';
    sock.setEncoding('utf8').on('data', (d: string) => (text += d));
    sock.on('error', reject);
    sock.on('close', () => resolve({ text, ms: Date.now() - began }));
    const send = async () => {
      for (const c of chunks) {
        if (sock.destroyed || sock.writableEnded) break;
        sock.write(c);
        if (gapMs) await sleep(gapMs);
      }
    };
    sock.on('connect', () => void send());
    setTimeout(() => sock.destroy(new Error(`no close after 20 s; got: ${text.slice(0, 200)}`)), 20_000).unref();
  });
}

function parseRaw(text: string): { status: number; headers: Record<string, string>; body: ErrorBody } {
  const [head, body] = text.split('\r\n\r\n');
  const lines = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
  return { status: Number(lines[0].split(' ')[1]), headers, body: JSON.parse(body) as ErrorBody };
}

test('a known API path asked with the wrong method is 405 METHOD_NOT_ALLOWED with Allow, before body, key or parameter checks', async () => {
  let res = await t.api('/api/v1/devices', { method: 'PUT', key, body: 'not json', headers: { 'Content-Type': 'text/plain' } });
  const body = await expectErrorResponse(res, 405, 'METHOD_NOT_ALLOWED');
  assert.equal(res.headers.get('allow'), 'GET, HEAD, POST');
  assert.deepEqual(body.error.details.allow, ['GET', 'HEAD', 'POST']);

  // A static path beside a parameter route: not a DELETE of a device called "unreachable".
  res = await t.api('/api/v1/devices/unreachable', { method: 'DELETE', key });
  await expectErrorResponse(res, 405, 'METHOD_NOT_ALLOWED');
  assert.equal(res.headers.get('allow'), 'GET, HEAD');

  res = await t.api('/api/v1/devices/1', { method: 'PATCH', key, json: { name: 'x' } });
  await expectErrorResponse(res, 405, 'METHOD_NOT_ALLOWED');
  assert.equal(res.headers.get('allow'), 'DELETE, GET, HEAD, PUT');

  // fetch() refuses to send TRACE: Node's client does.
  const trace = await new Promise<{ status: number; allow: string | undefined; body: string }>((resolve, reject) => {
    const req = http.request(`${t.url}/api/v1/groups`, { method: 'TRACE', headers: { 'X-API-Key': key } }, (r) => {
      let b = '';
      r.setEncoding('utf8').on('data', (d: string) => (b += d));
      r.on('end', () => resolve({ status: r.statusCode ?? 0, allow: r.headers.allow, body: b }));
    });
    req.on('error', reject);
    req.end();
  });
  assert.equal(trace.status, 405);
  assert.equal(trace.allow, 'GET, HEAD, POST');
  assert.equal((JSON.parse(trace.body) as ErrorBody).error.code, 'METHOD_NOT_ALLOWED');

  // An unknown path stays a 404.
  await expectErrorResponse(await t.api('/api/v1/nothing-here', { method: 'DELETE', key }), 404, 'ROUTE_NOT_FOUND');
  await expectErrorResponse(await t.api('/api/v1/nothing-here', { key }), 404, 'ROUTE_NOT_FOUND');
});

test('the web interface internal /api/ routes answer a wrong method with 405 too', async () => {
  let res = await t.api('/api/devices/1/backups');
  await expectErrorResponse(res, 405, 'METHOD_NOT_ALLOWED');
  assert.equal(res.headers.get('allow'), 'POST');
  res = await t.api('/api/backup-jobs/abc', { method: 'DELETE' });
  await expectErrorResponse(res, 405, 'METHOD_NOT_ALLOWED');
  assert.equal(res.headers.get('allow'), 'GET, HEAD');
});

test('requests Node refuses itself (431, missing Host, malformed) carry X-Request-ID and the error body', async () => {
  const huge = await raw(t.url, [`GET /api/v1/devices HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`]);
  let r = parseRaw(huge.text);
  assert.equal(r.status, 431);
  assert.equal(r.body.error.code, 'HEADERS_TOO_LARGE');
  assert.equal(r.body.error.request_id, r.headers['x-request-id']);
  assert.match(r.headers['x-request-id'], /^[0-9a-f-]{36}$/);

  r = parseRaw((await raw(t.url, ['GET /api/v1/devices HTTP/1.1\r\n\r\n'])).text);
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, 'BAD_REQUEST');
  assert.match(r.body.error.message, /Host/);
  assert.equal(r.body.error.request_id, r.headers['x-request-id']);

  r = parseRaw((await raw(t.url, ['GET /\x01 nonsense\r\n\r\n'])).text);
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, 'BAD_REQUEST');
  assert.equal(r.body.error.request_id, r.headers['x-request-id']);
});

test('JSON bodies must be valid UTF-8 text: invalid bytes, lone surrogates and NUL are 422 and store nothing', async () => {
  const before = ((await (await t.api('/api/v1/groups', { key })).json()) as { pagination: { total: number } }).pagination.total;
  const post = (body: Buffer | string) =>
    t.api('/api/v1/groups', {
      method: 'POST',
      key,
      body: typeof body === 'string' ? body : new Uint8Array(body),
      headers: { 'Content-Type': 'application/json' },
    });

  let body = await expectErrorResponse(
    await post(Buffer.concat([Buffer.from('{"name":"bad'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')])),
    422,
    'VALIDATION_ERROR',
  );
  assert.deepEqual(body.error.details.errors, [{ field: 'body', message: 'not valid UTF-8' }]);
  // An overlong encoding of "/" is invalid UTF-8 as well.
  await expectErrorResponse(await post(Buffer.concat([Buffer.from('{"name":"x'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')])), 422, 'VALIDATION_ERROR');

  body = await expectErrorResponse(await post('{"name":"half \\ud800 a pair"}'), 422, 'VALIDATION_ERROR');
  assert.equal((body.error.details.errors as { field: string }[])[0].field, 'name');
  body = await expectErrorResponse(await post('{"name":"nul\\u0000inside"}'), 422, 'VALIDATION_ERROR');
  assert.deepEqual(body.error.details.errors, [{ field: 'name', message: 'must not contain NUL characters' }]);

  const after = ((await (await t.api('/api/v1/groups', { key })).json()) as { pagination: { total: number } }).pagination.total;
  assert.equal(after, before);
  // Proper UTF-8, surrogate pairs included, is stored as sent.
  const ok = await post(JSON.stringify({ name: 'Zürich 🛰' }));
  assert.equal(ok.status, 201);
  assert.equal(((await ok.json()) as { name: string }).name, 'Zürich 🛰');
});

test('boolean query parameters accept true/false/1/0 in any case; anything else is 422', async () => {
  for (const v of ['true', 'True', 'TRUE', '1', 'false', 'False', '0']) {
    const res = await t.api(`/api/v1/devices?enabled=${v}`, { key });
    assert.equal(res.status, 200, v);
  }
  for (const v of ['yes', '2', 'on']) {
    await expectErrorResponse(await t.api(`/api/v1/devices?enabled=${v}`, { key }), 422, 'VALIDATION_ERROR');
  }
  assert.equal((await t.api('/api/v1/templates?builtin=TRUE', { key })).status, 200);
});

test('time limits: slow headers and a trickled body get 408 in the error shape and the connection closes', async () => {
  const root = tempDir('confvault-edges-');
  const dataDir = path.join(root, 'data');
  const a = openAppliance({}, loadConfig({ dataDir }, {}));
  await ensureFirstAdmin(a.db, 'admin-password-1');
  const k = createApiKey(a.db, SYSTEM_ACTOR, { username: 'admin' }).key;
  a.close();
  const conf = path.join(root, 'appliance.conf');
  writeFileSync(conf, '[server]\nlisten = "127.0.0.1:0"\nheader_timeout = 1\nrequest_timeout = 2\n[log]\nlevel = "info"\n');
  const s = await spawnServe(['--config', conf, '--data-dir', dataDir], { CONFVAULT_LOG_LEVEL: '' });
  try {
    // Headers one line a second, never finished.
    const slow = await raw(s.url, ['GET /api/v1/groups HTTP/1.1\r\n', 'Host: x\r\n', 'X-A: 1\r\n', 'X-B: 1\r\n', 'X-C: 1\r\n', 'X-D: 1\r\n'], 1000);
    let r = parseRaw(slow.text);
    assert.equal(r.status, 408);
    assert.equal(r.body.error.code, 'REQUEST_TIMEOUT');
    assert.equal(r.body.error.request_id, r.headers['x-request-id']);
    assert.ok(slow.ms < 4000, `closed after ${slow.ms} ms`);

    // A body of 40 bytes trickled at one byte every 500 ms would take 20 s.
    const head = `POST /api/v1/groups HTTP/1.1\r\nHost: x\r\nX-API-Key: ${k}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n`;
    const trickle = await raw(s.url, [head, ...'{"name":"trickled-group-name-of-40-byte"}'.split('')], 500);
    r = parseRaw(trickle.text);
    assert.equal(r.status, 408);
    assert.equal(r.body.error.code, 'REQUEST_TIMEOUT');
    assert.ok(trickle.ms < 5000, `closed after ${trickle.ms} ms`);
  } finally {
    await s.stop();
    rmSync(root, { recursive: true, force: true });
  }
});
