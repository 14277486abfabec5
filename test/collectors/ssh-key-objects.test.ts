// The SSH transport's per-packet keys as KeyObjects and its key exchange without stack traces (collectors-bench, #27):
// ssh2's internals are where useKeyObjects and quietKeyExchange expect them, and the connections work on after, both ways.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyObject } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import ssh2 from 'ssh2';
import type { Algorithms, Client } from 'ssh2';
import { quietKeyExchange, useKeyObjects } from '../../src/engine/transports/ssh-key-objects';
import { collectConfig } from '../../src/engine/collect';
import { startSimulator, type RunningSimulator } from '../sim/simulator';
import { ed25519KeyPair } from '../helpers/keys';
import { FAST_LIMITS, IOS_TEMPLATE, iosDevice, target } from '../sim/fixtures/engine-fixtures';

let sim: RunningSimulator;
before(async () => {
  sim = await startSimulator({ devices: [iosDevice()] });
});
after(() => sim.close());

function login(algorithms: Algorithms): Promise<Client> {
  const client = new ssh2.Client();
  return new Promise((resolve, reject) => {
    client.once('ready', () => resolve(client));
    client.once('error', reject);
    client.connect({ host: '127.0.0.1', port: sim.port, username: 'core-sw1', password: 'admin123', readyTimeout: 5000, algorithms });
  });
}

// Each kind of ssh2 cipher object: AES-GCM (the usual), ChaCha20-Poly1305, and a stream cipher with its own MAC.
const CIPHERS: [string, Algorithms][] = [
  ['aes128-gcm', { cipher: ['aes128-gcm@openssh.com'] }],
  ['chacha20-poly1305', { cipher: ['chacha20-poly1305@openssh.com'] }],
  ['aes128-ctr with hmac-sha2-256', { cipher: ['aes128-ctr'], hmac: ['hmac-sha2-256'] }],
];

for (const [name, algorithms] of CIPHERS)
  test(`${name}: after login both directions are keyed by KeyObjects and the session goes on`, async () => {
    const client = await login(algorithms);
    try {
      const replaced = useKeyObjects(client);
      // Fails when an ssh2 upgrade moved its keys: the speed-up would be lost without a word otherwise.
      assert.ok(replaced >= 2, `expected the cipher's and the decipher's keys replaced, got ${replaced}`);
      const protocol = (client as unknown as { _protocol: { _cipher: Record<string, unknown>; _decipher: Record<string, unknown> } })._protocol;
      for (const side of [protocol._cipher, protocol._decipher]) {
        assert.ok(
          Object.values(side).some((v) => v instanceof KeyObject),
          'a KeyObject key on each side',
        );
      }
      assert.equal(useKeyObjects(client), 0, 'a second call finds nothing left to replace');
      const seen = await new Promise<string>((resolve, reject) => {
        client.shell({ term: 'vt100' }, (err, channel) => {
          if (err) return reject(err);
          let text = '';
          let sent = false;
          const timer = setTimeout(() => reject(new Error(`no answer; got ${JSON.stringify(text)}`)), 5000);
          channel.on('data', (d: Buffer) => {
            text += d.toString('latin1');
            // The prompt came (decipher works); a command sent now must be answered (cipher works).
            if (!sent && /[>#]\s*$/.test(text)) {
              sent = true;
              channel.write('show clock\n');
            } else if (sent && text.split(/[>#]\s*/).length > 2) {
              clearTimeout(timer);
              resolve(text);
            }
          });
        });
      });
      assert.match(seen, /show clock/);
    } finally {
      client.end();
    }
  });

test('a capture over SSH with the swap gives the same text as before it (the engine calls it at the handshake)', async () => {
  const r = await collectConfig(target(sim.port, { username: 'core-sw1' }), IOS_TEMPLATE, FAST_LIMITS, { redact_key: Buffer.alloc(32, 1) });
  if (!r.ok) assert.fail(`${r.failure}: ${r.message}`);
  assert.ok(r.text.endsWith('!\nend\n'));
  assert.ok(!r.text.includes('s3cretCommunity'));
});

test("a server connection's keys are swapped at its 'handshake' too (the simulators do it), and the session goes on", async () => {
  const swapped: number[] = [];
  const server = new ssh2.Server({ hostKeys: [ed25519KeyPair().private] }, (conn) => {
    conn.on('handshake', () => swapped.push(useKeyObjects(conn)));
    conn.on('authentication', (ctx) => ctx.accept());
    conn.on('ready', () =>
      conn.on('session', (accept) =>
        accept().on('exec', (acceptExec) => {
          const channel = acceptExec();
          channel.end('pong\n');
        }),
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = new ssh2.Client();
  try {
    await new Promise<void>((resolve, reject) => {
      client.once('ready', resolve).once('error', reject);
      client.connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, username: 'u', password: 'p', readyTimeout: 5000 });
    });
    const out = await new Promise<string>((resolve, reject) =>
      client.exec('ping', (err, channel) => {
        if (err) return reject(err);
        let text = '';
        channel.on('data', (d: Buffer) => (text += d.toString())).on('close', () => resolve(text));
      }),
    );
    assert.equal(out, 'pong\n');
    assert.equal(swapped.length, 1);
    assert.ok(swapped[0] >= 2, `expected the server's cipher and decipher keys replaced, got ${swapped[0]}`);
  } finally {
    client.end();
    server.close();
  }
});

// Each kind of key exchange the engine offers first: Curve25519 (createPublicKey from DER: its throws are what is spared),
// ECDH on NIST P-256 and a Diffie-Hellman group.
const KEXES = ['curve25519-sha256', 'ecdh-sha2-nistp256', 'diffie-hellman-group14-sha256'] as const;

for (const kex of KEXES)
  test(`${kex}: the key exchange runs without stack traces from its class's second connection on, and the sessions log in`, async () => {
    const first = await login({ kex: [kex] });
    let proto: { computeSecret: unknown };
    try {
      // Fails when an ssh2 upgrade moved its key exchange: the speed-up would be lost without a word otherwise.
      assert.equal(quietKeyExchange(first), true);
      proto = Object.getPrototypeOf((first as unknown as { _protocol: { _kex: object } })._protocol._kex) as { computeSecret: unknown };
      const wrapped = proto.computeSecret;
      assert.equal(quietKeyExchange(first), true);
      assert.equal(proto.computeSecret, wrapped, 'wrapped once per class, not once per connection');
      const exchange = (first as unknown as { _protocol: { _kex: { getPublicKey(): Buffer; _keys?: { publicKey: KeyObject } } } })._protocol._kex;
      if (kex === 'curve25519-sha256') {
        const der = exchange._keys!.publicKey.export({ type: 'spki', format: 'der' });
        assert.deepEqual(exchange.getPublicKey(), der.subarray(-32), 'its public key read from JWK: the bytes ssh2 cuts from DER');
      }
    } finally {
      first.end();
    }
    const limit = Error.stackTraceLimit;
    const second = await login({ kex: [kex] });
    second.end();
    assert.equal(Error.stackTraceLimit, limit, 'the process keeps its stack traces after the exchange');
  });
