// ssh2's compiled crypto binding (build/runtime.mjs builds it for the pinned runtime; the executable ships it): every
// cipher the engine offers runs on it at both ends, and the bundles (the session threads', the executable's) load it.
// Without it ssh2 makes a cipher object per packet in JavaScript: a fifth of a collector's CPU (#27).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import ssh2 from 'ssh2';
import type { Algorithms } from 'ssh2';
import { WORKER_NATIVE } from '../../src/runtime/native';
import { ed25519KeyPair } from '../helpers/keys';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ADDON = path.join(ROOT, 'node_modules/ssh2/lib/protocol/crypto/build/Release/sshcrypto.node');

type Sides = { _cipher: object; _decipher: object };
const sidesOf = (conn: unknown) => (conn as { _protocol: Sides })._protocol;
const kinds = (p: Sides) => [p._cipher.constructor.name, p._decipher.constructor.name];

// Each kind of cipher object ssh2 has: AES-GCM (what the engine and a modern device agree on), ChaCha20-Poly1305, a
// stream cipher with its own MAC, and the CBC cipher of the legacy set (old switches).
const CIPHERS: [string, Algorithms, string][] = [
  ['aes128-gcm', { cipher: ['aes128-gcm@openssh.com'] }, 'AESGCM'],
  ['chacha20-poly1305', { cipher: ['chacha20-poly1305@openssh.com'] }, 'ChaChaPoly'],
  ['aes128-ctr with hmac-sha2-256', { cipher: ['aes128-ctr'], hmac: ['hmac-sha2-256'] }, 'Generic'],
  ['aes128-cbc with hmac-sha1 (legacy)', { cipher: ['aes128-cbc'], hmac: ['hmac-sha1'] }, 'Generic'],
];

for (const [name, algorithms, kind] of CIPHERS)
  test(`${name}: client and server encrypt and decrypt on the compiled binding, and a command is answered`, async () => {
    let server: Sides | undefined;
    const host = new ssh2.Server({ hostKeys: [ed25519KeyPair().private], algorithms }, (conn) => {
      conn.on('authentication', (ctx) => ctx.accept());
      conn.on('ready', () => {
        server = sidesOf(conn);
        conn.on('session', (accept) => accept().on('exec', (acceptExec, _reject, info) => acceptExec().end(`${info.command}: pong\n`)));
      });
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    const client = new ssh2.Client();
    try {
      await new Promise<void>((resolve, reject) => {
        client.once('ready', resolve).once('error', reject);
        const port = (host.address() as AddressInfo).port;
        client.connect({ host: '127.0.0.1', port, username: 'u', password: 'p', readyTimeout: 5000, algorithms });
      });
      const out = await new Promise<string>((resolve, reject) =>
        client.exec('ping', (err, channel) => {
          if (err) return reject(err);
          let text = '';
          channel.on('data', (d: Buffer) => (text += d.toString())).on('close', () => resolve(text));
        }),
      );
      assert.equal(out, 'ping: pong\n');
      // Fails when the binding is missing (a failed build) or an ssh2 upgrade renamed its classes.
      const expected = [`${kind}CipherBinding`, `${kind}DecipherBinding`];
      assert.deepEqual(kinds(sidesOf(client)), expected, 'the client side');
      assert.deepEqual(kinds(server!), expected, 'the server side');
    } finally {
      client.end();
      host.close();
    }
  });

/**
 * A probe bundled as the engine's worker bundles are (build/esbuild-node.mjs NATIVE_PLUGINS, as build/worker-bundles.mjs
 * uses them), run in a worker thread as the session threads run: whether ssh2 found its binding (it then makes every
 * cipher from it, as the tests above show).
 */
function probeBundle(): string {
  const probe = `
    const protocolCrypto = require('ssh2/lib/protocol/crypto.js');
    const { parentPort } = require('node:worker_threads');
    parentPort.postMessage({ binding: protocolCrypto.bindingAvailable });`;
  const script = `const { NATIVE_PLUGINS, NODE_BUNDLE } = await import('./build/esbuild-node.mjs');
    const esbuild = await import('esbuild');
    const out = await esbuild.build({ ...NODE_BUNDLE, stdin: { contents: ${JSON.stringify(probe)}, resolveDir: process.cwd(), loader: 'js' }, write: false, plugins: NATIVE_PLUGINS });
    process.stdout.write(out.outputFiles[0].text);`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(!r.stdout.includes('sshcrypto.node is not part of'), 'the binding is not replaced by a module that throws');
  return r.stdout;
}

function runProbe(code: string, workerData: object): Promise<{ binding: boolean }> {
  return new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData, env: { ...process.env, CONFVAULT_ROOT: ROOT } });
    w.once('message', (m: { binding: boolean }) => {
      resolve(m);
      void w.terminate();
    });
    w.once('error', reject);
  });
}

test('the bundles load the binding in a worker thread: from node_modules in development, from the file a session thread is handed', async () => {
  const code = probeBundle();
  assert.deepEqual(await runProbe(code, {}), { binding: true }, 'development: node_modules');
  assert.deepEqual(await runProbe(code, { [WORKER_NATIVE]: { sshCrypto: ADDON } }), { binding: true }, 'the handed file (the executable)');
  // A file that does not load leaves ssh2 on its JavaScript ciphers, as without the binding: slower, not broken.
  assert.deepEqual(await runProbe(code, { [WORKER_NATIVE]: { sshCrypto: path.join(ROOT, 'no-such.node') } }), { binding: false });
});
