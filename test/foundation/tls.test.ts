// Optional TLS: with tls_cert and tls_key the appliance serves HTTPS; unusable files stop start-up naming the key.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import https from 'node:https';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runCliAsync, spawnServe, tempDir } from '../helpers/appliance';

const root = tempDir('confvault-tls-');
after(() => rmSync(root, { recursive: true, force: true }));

function selfSigned(name: string): { cert: string; key: string } {
  const cert = path.join(root, `${name}.crt`);
  const key = path.join(root, `${name}.key`);
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-subj', '/CN=localhost', '-keyout', key, '-out', cert],
    {
      stdio: 'ignore',
    },
  );
  return { cert, key };
}

function httpsGet(url: string): Promise<{ status: number; headers: Record<string, unknown>; body: string; cn: string }> {
  return new Promise((resolve, reject) => {
    https
      .get(url, { rejectUnauthorized: false, agent: false }, (res) => {
        let body = '';
        const cn = String((res.socket as import('node:tls').TLSSocket).getPeerCertificate().subject?.CN);
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, cn }));
      })
      .on('error', reject);
  });
}

test('tls_cert + tls_key: /healthz over HTTPS with the configured certificate, plain HTTP refused', async () => {
  const { cert, key } = selfSigned('good');
  const server = await spawnServe(['--data-dir', path.join(root, 'data'), '--listen', '127.0.0.1:0'], {
    CONFVAULT_TLS_CERT: cert,
    CONFVAULT_TLS_KEY: key,
  });
  try {
    assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const res = await httpsGet(`${server.url}/healthz`);
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), { status: 'ok' });
    assert.ok(res.headers['x-request-id']);
    assert.equal(res.cn, 'localhost');
    const api = await httpsGet(`${server.url}/api/v1/anything`);
    assert.equal(api.status, 401);
    // Plain HTTP to the TLS port gets no HTTP answer.
    const plain = await fetch(server.url.replace('https:', 'http:') + '/healthz').then(
      (r) => r.status,
      () => 'refused',
    );
    assert.notEqual(plain, 200);
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test('an unreadable or mismatched certificate stops serve with one line naming the setting', async () => {
  const a = selfSigned('a');
  const b = selfSigned('b');
  const garbage = path.join(root, 'garbage.pem');
  writeFileSync(garbage, 'not a certificate\n');
  const serve = (cert: string, keyFile: string, n: number) =>
    runCliAsync(['serve', '--listen', '127.0.0.1:0', '--data-dir', path.join(root, `bad-${n}`)], {
      env: { CONFVAULT_TLS_CERT: cert, CONFVAULT_TLS_KEY: keyFile },
    });
  const [missingCert, missingKey, mismatched, notPem] = await Promise.all([
    serve(path.join(root, 'nope.crt'), a.key, 1),
    serve(a.cert, path.join(root, 'nope.key'), 2),
    serve(a.cert, b.key, 3),
    serve(garbage, a.key, 4),
  ]);
  const expectations: [typeof missingCert, RegExp][] = [
    [missingCert, /server\.tls_cert: cannot read .*nope\.crt \(ENOENT\)/],
    [missingKey, /server\.tls_key: cannot read .*nope\.key \(ENOENT\)/],
    [mismatched, /server\.tls_cert\/server\.tls_key: not a usable certificate and key/],
    [notPem, /server\.tls_cert\/server\.tls_key: not a usable certificate and key/],
  ];
  for (const [r, expected] of expectations) {
    assert.equal(r.status, 1, r.stderr);
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], /^confvault serve: invalid configuration: /);
    assert.match(lines[0], expected);
  }
  // Refused before anything was created (no data dir, no admin password printed and lost).
  for (let n = 1; n <= 4; n++) assert.equal(existsSync(path.join(root, `bad-${n}`)), false);
});
