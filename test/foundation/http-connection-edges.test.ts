// Connection-level edges over raw sockets: a body refused before it is read, a malformed Host, a broken chunked body.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';

let t: TestAppliance;
let key: string;
const logLines: Record<string, unknown>[] = [];

before(async () => {
  const log = new PassThrough();
  let pending = '';
  log.setEncoding('utf8').on('data', (d: string) => {
    pending += d;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const l of lines) if (l) logLines.push(JSON.parse(l) as Record<string, unknown>);
  });
  t = await startTestAppliance({ CONFVAULT_LOG_LEVEL: 'info' }, { log });
  key = await t.keyFor({ permissions: 'all' });
});
after(async () => {
  await t?.close();
});

/** Writes everything on one socket and reads until the server closes it (or `waitMs` passes): the raw answer. */
function exchange(writes: (string | Buffer)[], waitMs = 3000): Promise<string> {
  const { hostname, port } = new URL(t.url);
  return new Promise((resolve) => {
    const sock = net.connect(Number(port), hostname);
    let text = '';
    sock.setEncoding('latin1').on('data', (d: string) => (text += d));
    // A reset while the client is still writing is an answer too: what was read before it counts.
    sock.on('error', () => undefined);
    sock.on('close', () => resolve(text));
    sock.on('connect', () => {
      for (const w of writes) if (!sock.destroyed) sock.write(w);
    });
    setTimeout(() => sock.destroy(), waitMs).unref();
  });
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The responses of a raw answer, in order (each framed by its Content-Length). */
function responses(text: string): RawResponse[] {
  const out: RawResponse[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) break;
    const lines = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
    const length = Number(headers['content-length'] ?? 0);
    out.push({ status: Number(lines[0].split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

const NEXT = 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n';

for (const [what, headers, status] of [
  ['no key (401)', 'Content-Type: application/json\r\n', 401],
  ['not JSON (415)', `X-API-Key: KEY\r\nContent-Type: text/plain\r\n`, 415],
  ['over the size limit (413)', 'X-API-Key: KEY\r\nContent-Type: application/json\r\n', 413],
] as const) {
  test(`a large body refused before it is read, ${what}, does not break the next request on its connection`, async () => {
    const size = status === 413 ? 1_200_000 : 400_000;
    const head = `POST /api/v1/groups HTTP/1.1\r\nHost: localhost\r\n${headers.replace('KEY', key)}Content-Length: ${size}\r\n\r\n`;
    const answer = responses(await exchange([head, Buffer.alloc(size, 0x61), NEXT]));
    assert.ok(answer.length >= 1, 'the refusal arrives');
    assert.equal(answer[0].status, status);
    const body = JSON.parse(answer[0].body) as { error: { request_id: string } };
    assert.equal(body.error.request_id, answer[0].headers['x-request-id']);
    // Either the server says it closes, or it keeps its word and answers the next request on the connection.
    if (answer[0].headers.connection?.toLowerCase() !== 'close') {
      assert.equal(answer.length, 2, `keep-alive was promised (${answer[0].headers.connection}) but the next request got no answer`);
      assert.equal(answer[1].status, 200);
    }
  });
}

test('a small body refused before it is read keeps the connection usable', async () => {
  const body = '{"name":"x"}';
  const head = `POST /api/v1/groups HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  const answer = responses(await exchange([head, NEXT], 1500));
  assert.deepEqual(
    answer.map((r) => r.status),
    [401, 200],
  );
});

/** The access-log line of a request id, once it is written (the log is written after the response). */
async function accessLine(requestId: string): Promise<Record<string, unknown> | undefined> {
  for (let i = 0; i < 40; i++) {
    const line = logLines.find((l) => l.msg === 'request' && l.request_id === requestId);
    if (line) return line;
    await sleep(50);
  }
  return undefined;
}

test('a malformed Host header is a 400 in the error shape, with X-Request-ID and an access-log line', async () => {
  for (const host of ['x:99999', 'x:', '1.2.3', 'a b']) {
    const [r] = responses(await exchange([`GET /api/v1/devices HTTP/1.1\r\nHost: ${host}\r\nX-API-Key: ${key}\r\n\r\n`]));
    assert.equal(r.status, 400, host);
    assert.match(r.headers['content-type'], /^application\/json/);
    const body = JSON.parse(r.body) as { error: { code: string; message: string; request_id: string; details: object } };
    assert.equal(body.error.code, 'BAD_REQUEST');
    assert.match(body.error.message, /Host/);
    assert.ok(r.headers['x-request-id']);
    assert.equal(body.error.request_id, r.headers['x-request-id']);
    const line = await accessLine(body.error.request_id);
    assert.equal(line?.status, 400, `access-log line for Host: ${host}`);
  }
});

test('a broken chunked body is a 400 with no error-level log and no access-log 500', async () => {
  const before = logLines.length;
  const text = await exchange([
    'POST /api/v1/groups HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
    'zz\r\nabc\r\n',
  ]);
  const [r] = responses(text);
  assert.equal(r.status, 400);
  const body = JSON.parse(r.body) as { error: { code: string; request_id: string } };
  assert.equal(body.error.code, 'BAD_REQUEST');
  assert.equal(body.error.request_id, r.headers['x-request-id']);
  // The request's own access line, under the id the client was given, says what the client got.
  const line = await accessLine(body.error.request_id);
  assert.equal(line?.status, 400);
  await sleep(200);
  const since = logLines.slice(before);
  assert.deepEqual(
    since.filter((l) => l.level === 'error' || l.status === 500),
    [],
  );
});
