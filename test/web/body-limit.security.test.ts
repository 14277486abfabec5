// Web form bodies are size-limited like the API's: an anonymous client cannot make the appliance buffer gigabytes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { WebClient } from './web-client';

/** Send a request head by hand (declaring a body it never sends) and return what the server answers within `ms`. */
function rawHead(url: string, head: string, ms: number): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let got = '';
    const done = () => {
      socket.destroy();
      resolve(got);
    };
    const timer = setTimeout(done, ms);
    socket.on('data', (d) => {
      got += d.toString('latin1');
      if (got.includes('\r\n\r\n')) {
        clearTimeout(timer);
        done();
      }
    });
    socket.on('error', () => {
      clearTimeout(timer);
      done();
    });
    socket.write(head);
  });
}

describe('web: request body size limit', () => {
  let t: TestAppliance;
  let admin: WebClient;
  const limit = () => t.services.config.server.max_body_bytes;

  before(async () => {
    t = await startTestAppliance();
    admin = new WebClient(t.url);
    assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
  });
  after(() => t.close());

  test('anonymous POST /login declaring a 2 GB body is refused at once with 413, nothing read', async () => {
    const answer = await rawHead(
      t.url,
      `POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 2147483648\r\n\r\nusername=a&password=`,
      3000,
    );
    assert.match(answer, /^HTTP\/1\.1 413 /, `answer: ${JSON.stringify(answer.slice(0, 80))}`);
  });

  test('anonymous POST /login with a body over the limit (chunked, no length) is 413', async () => {
    const body = 'username=admin&password=' + 'x'.repeat(limit() + 10);
    const res = await fetch(t.url + '/login', {
      method: 'POST',
      body: new Blob([body]).stream(),
      duplex: 'half',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    } as RequestInit);
    assert.equal(res.status, 413);
    await res.body?.cancel();
  });

  test('a logged-in form post over the limit is 413 and changes nothing; a normal one still works', async () => {
    const n = t.services.db.prepare('SELECT count(*) FROM device_groups').pluck().get();
    const big = await admin.post('/groups', { name: 'big', description: 'd'.repeat(limit() + 10) }, { csrf: true });
    assert.equal(big.res.status, 413);
    assert.equal(t.services.db.prepare('SELECT count(*) FROM device_groups').pluck().get(), n);
    const ok = await admin.post('/groups', { name: 'small', description: '' }, { csrf: true });
    assert.equal(ok.res.status, 303);
    assert.equal((await fetch(t.url + '/healthz')).status, 200);
  });
});
