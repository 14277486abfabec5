// The HTTP core of a served appliance: X-Request-ID, the error body, key only in the header, JSON access logs, graceful stop.
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
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { spawnServe, tempDir } from '../helpers/appliance';
import { expectErrorResponse } from '../helpers/api';

const root = tempDir('confvault-http-');
const dataDir = path.join(root, 'data');
const MAX_BODY = 2048;
let server: Awaited<ReturnType<typeof spawnServe>>;
let key: string;
/** A second key of admin's, to be leaked in a URL (and so revoked). */
let leaked: string;

before(async () => {
  const a = openAppliance({}, loadConfig({ dataDir }, {}));
  await ensureFirstAdmin(a.db, 'admin-password-1');
  key = createApiKey(a.db, SYSTEM_ACTOR, { username: 'admin' }).key;
  leaked = createApiKey(a.db, SYSTEM_ACTOR, { username: 'admin', name: 'leaked' }).key;
  a.close();
  const conf = path.join(root, 'appliance.conf');
  writeFileSync(conf, `[server]\nlisten = "127.0.0.1:0"\nmax_body_bytes = ${MAX_BODY}\n[log]\nlevel = "info"\n`);
  server = await spawnServe(
    ['--config', conf, '--data-dir', dataDir],
    { CONFVAULT_LOG_LEVEL: '' },
    {
      imports: [path.join(import.meta.dirname, 'probe-route.ts')],
    },
  );
});

after(async () => {
  if (server?.child.exitCode === null) await server.stop();
  rmSync(root, { recursive: true, force: true });
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const api = (p: string, init: RequestInit = {}) => fetch(server.url + p, init);
const withKey = (extra: Record<string, string> = {}) => ({ 'X-API-Key': key, ...extra });

test('X-Request-ID: a well-formed one is echoed, a bad one replaced by a UUID, one is always set', async () => {
  const plain = await api('/healthz');
  assert.equal(plain.status, 200);
  assert.match(plain.headers.get('x-request-id')!, UUID);

  const mine = 'job-42.step:7_a';
  const echoed = await api('/healthz', { headers: { 'X-Request-ID': mine } });
  assert.equal(echoed.headers.get('x-request-id'), mine);
  const echoedError = await api('/api/v1/nothing', { headers: withKey({ 'X-Request-ID': mine }) });
  assert.equal((await expectErrorResponse(echoedError, 404, 'ROUTE_NOT_FOUND')).error.request_id, mine);

  for (const bad of ['x'.repeat(300), 'has spaces in it', 'semi;colon', 'line<script>']) {
    const res = await api('/api/v1/nothing', { headers: { 'X-Request-ID': bad } });
    const id = res.headers.get('x-request-id')!;
    assert.match(id, UUID, bad);
    assert.equal((await expectErrorResponse(res, 401, 'UNAUTHORIZED')).error.request_id, id);
  }
  // HEAD is answered from the GET response; the id must survive that copy.
  const head = await api('/healthz', { method: 'HEAD', headers: { 'X-Request-ID': mine } });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get('x-request-id'), mine);
  const other = await api('/no-such-page');
  assert.equal(other.status, 404);
  assert.match(other.headers.get('x-request-id')!, UUID);
});

test('/api/v1 authenticates only by X-API-Key: no key, a wrong key, a cookie or a bearer token get 401', async () => {
  await expectErrorResponse(await api('/api/v1/nothing'), 401, 'UNAUTHORIZED');
  await expectErrorResponse(await api('/api/v1/nothing', { headers: { 'X-API-Key': 'cv_wrong' } }), 401, 'UNAUTHORIZED');
  await expectErrorResponse(await api('/api/v1/nothing', { headers: { 'X-API-Key': `cv_${'A'.repeat(43)}` } }), 401, 'UNAUTHORIZED');
  await expectErrorResponse(await api('/api/v1/nothing', { headers: { Cookie: `session=abc123; api_key=${key}` } }), 401, 'UNAUTHORIZED');
  await expectErrorResponse(await api('/api/v1/nothing', { headers: { Authorization: `Bearer ${key}` } }), 401, 'UNAUTHORIZED');
  // The same request with the header is authenticated (a 404: no such endpoint).
  await expectErrorResponse(await api('/api/v1/nothing', { headers: withKey() }), 404, 'ROUTE_NOT_FOUND');
});

test('error bodies for 404, 422 (malformed JSON), 413 (too large, with and without Content-Length) and 415', async () => {
  await expectErrorResponse(await api('/api/v1/nothing', { headers: withKey() }), 404, 'ROUTE_NOT_FOUND');

  const malformed = await api('/api/v1/nothing', { method: 'POST', headers: withKey({ 'Content-Type': 'application/json' }), body: '{"name": ' });
  const body = await expectErrorResponse(malformed, 422, 'VALIDATION_ERROR');
  assert.deepEqual(body.error.details.errors, [{ field: 'body', message: 'malformed JSON' }]);
  const malformedPut = await api('/api/v1/devices/1', { method: 'PUT', headers: withKey({ 'Content-Type': 'application/json' }), body: 'not json' });
  await expectErrorResponse(malformedPut, 422, 'VALIDATION_ERROR');

  const big = JSON.stringify({ text: 'x'.repeat(MAX_BODY) });
  await expectErrorResponse(
    await api('/api/v1/nothing', { method: 'POST', headers: withKey({ 'Content-Type': 'application/json' }), body: big }),
    413,
    'PAYLOAD_TOO_LARGE',
  );
  // Streamed (chunked, no Content-Length): counted as it arrives.
  const stream = new ReadableStream({
    start(c) {
      for (let i = 0; i < 8; i++) c.enqueue(new TextEncoder().encode('x'.repeat(512)));
      c.close();
    },
  });
  const chunked = await api('/api/v1/nothing', {
    method: 'POST',
    headers: withKey({ 'Content-Type': 'application/json' }),
    body: stream,
    duplex: 'half',
  } as RequestInit);
  await expectErrorResponse(chunked, 413, 'PAYLOAD_TOO_LARGE');
  // A client still sending when the 413 goes out can read it: the connection closes lingering (FIN, the rest of the
  // body read and discarded), not with a reset that makes its next write fail (EPIPE) and may lose the answer.
  const { port } = new URL(server.url);
  const socket = net.connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
  const chunk = (n: number) => `${(512).toString(16)}\r\n${'x'.repeat(512)}\r\n`.repeat(n);
  socket.write(
    `POST /api/v1/nothing HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\n` + `Transfer-Encoding: chunked\r\n\r\n${chunk(5)}`,
  );
  let answer = '';
  const errors: string[] = [];
  socket.on('error', (err: NodeJS.ErrnoException) => errors.push(err.code ?? err.message));
  socket.on('data', (d) => (answer += d.toString()));
  const closed = new Promise((resolve) => socket.on('close', resolve));
  while (!answer.includes('PAYLOAD_TOO_LARGE') && errors.length === 0) await sleep(10);
  // The adapter alone drains for 500 ms, then resets: the last write comes 900 ms after the answer.
  for (let i = 0; i < 3 && errors.length === 0; i++) {
    await sleep(300);
    socket.write(chunk(1));
  }
  socket.end('0\r\n\r\n');
  await closed;
  assert.deepEqual(errors, []);
  assert.match(answer, /^HTTP\/1\.1 413 [^]*\r\nconnection: close\r\n/i);

  await expectErrorResponse(
    await api('/api/v1/nothing', { method: 'POST', headers: withKey({ 'Content-Type': 'text/plain' }), body: 'hello' }),
    415,
    'UNSUPPORTED_MEDIA_TYPE',
  );
});

test('an unexpected failure is a bare 500 INTERNAL_ERROR to the client and logged with its cause and request id', async () => {
  const res = await api('/api/v1/test-probe/fail', { headers: withKey() });
  const body = await expectErrorResponse(res, 500, 'INTERNAL_ERROR');
  assert.equal(body.error.message, 'Internal server error');
  assert.doesNotMatch(JSON.stringify(body), /secret|hunter2|path\.ts/);
  await sleep(100);
  const entry = server
    .output()
    .stdout.trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { level: string; request_id?: string; err?: { message?: string } })
    .find((e) => e.level === 'error' && e.request_id === body.error.request_id);
  assert.ok(entry, 'no error log line with the request id');
  assert.match(entry.err?.message ?? '', /internal detail/);
});

test('a key on record in the query string is refused with 401 even beside a valid header, and revoked; other values pass; never logged', async () => {
  // Values that only look like keys are ordinary data: a device named cv_lab1, a token, a made-up key.
  for (const query of ['?q=cv_lab1', '?token=x', '?apikey=abc', `?x=cv_${'B'.repeat(43)}`]) {
    await expectErrorResponse(await api(`/api/v1/nothing${query}`, { headers: withKey() }), 404, 'ROUTE_NOT_FOUND');
  }
  const ids: string[] = [];
  for (const query of [`?api_key=${leaked}`, `?x=${leaked}`, `?page=1&X-API-Key=${encodeURIComponent(leaked)}`]) {
    const body = await expectErrorResponse(await api(`/api/v1/nothing${query}`, { headers: withKey() }), 401, 'UNAUTHORIZED');
    assert.match(body.error.message, /X-API-Key header/);
    ids.push(body.error.request_id);
  }
  // The leaked key was revoked at its first appearance; the header's key still works.
  await expectErrorResponse(await api('/api/v1/nothing', { headers: { 'X-API-Key': leaked } }), 401, 'UNAUTHORIZED');
  await expectErrorResponse(await api('/api/v1/nothing', { headers: withKey() }), 404, 'ROUTE_NOT_FOUND');

  await sleep(100);
  const log = server.output().stdout;
  assert.ok(!log.includes(leaked.slice(3)), 'the key appears in the log');
  assert.ok(!log.includes(key.slice(3)), 'the key appears in the log');
  assert.ok(!log.includes('B'.repeat(43)));
  assert.doesNotMatch(log, /api_key|token=|\?x=|cv_lab1/);
  const lines = log
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  for (const id of ids) {
    const entry = lines.find((l) => l.request_id === id);
    assert.ok(entry, `no log line for ${id}`);
    assert.equal(entry.path, '/api/v1/nothing');
    assert.equal(entry.status, 401);
  }
});

test('the access log is one JSON object per line with request_id, method, path, status and duration_ms', async () => {
  await api('/healthz?probe=1', { headers: { 'X-Request-ID': 'log-check-1' } });
  await sleep(100);
  const lines = server.output().stdout.trimEnd().split('\n');
  const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  const requests = entries.filter((e) => e.msg === 'request');
  assert.ok(requests.length >= 10);
  for (const e of requests) {
    assert.equal(typeof e.request_id, 'string');
    assert.match(e.method as string, /^[A-Z]+$/);
    assert.match(e.path as string, /^\/[^?]*$/);
    assert.equal(typeof e.status, 'number');
    assert.equal(typeof e.duration_ms, 'number');
    assert.equal(typeof e.time, 'string');
  }
  const mine = requests.find((e) => e.request_id === 'log-check-1');
  assert.deepEqual([mine?.method, mine?.path, mine?.status], ['GET', '/healthz', 200]);
});

test('SIGTERM lets an in-flight request finish, then the process closes and exits 0', async () => {
  const { port } = new URL(server.url);
  const payload = '{"name":"slow client"}';
  const res = new Promise<{ status: number; body: string; connection?: string }>((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/v1/nothing',
      // A keep-alive agent, as most clients use: the answer must still let the server go.
      agent: new http.Agent({ keepAlive: true }),
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json', 'Content-Length': String(payload.length) },
    });
    req.on('response', (r) => {
      let body = '';
      r.on('data', (d) => (body += d));
      r.on('end', () => resolve({ status: r.statusCode!, body, connection: r.headers.connection }));
    });
    req.on('error', reject);
    req.write(payload.slice(0, 5));
    // The rest of the body arrives after the signal.
    void sleep(800).then(() => req.end(payload.slice(5)));
  });
  await sleep(300);
  const exited = new Promise<number | null>((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await sleep(200);
  assert.equal(server.child.exitCode, null, 'the server must wait for the request in flight');
  const answer = await res;
  assert.equal(answer.status, 404, answer.body);
  assert.equal(JSON.parse(answer.body).error.code, 'ROUTE_NOT_FOUND');
  assert.equal(answer.connection, 'close');
  const code = await Promise.race([exited, sleep(5000, 'still running', { ref: false })]);
  assert.equal(code, 0);
  const log = server.output().stdout;
  assert.match(log, /"msg":"shutting down"/);
  assert.match(log, /"msg":"stopped"/);
  // New connections are refused once stopped.
  await assert.rejects(fetch(`${server.url}/healthz`));
});
