// src/engine/transports/ssh2-tuning.ts (collectors-bench, #27): ssh2's internals are where quietKeyExchange,
// pooledPadding and pipelinedShell expect them, and the connections work on after; tcp.ts's writesInTurns.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KeyObject } from 'node:crypto';
import ssh2 from 'ssh2';
import type { Algorithms, Client } from 'ssh2';
import net, { type AddressInfo } from 'node:net';
import { pipelinedShell, pooledPadding, quietKeyExchange } from '../../src/engine/transports/ssh2-tuning';
import { writesInTurns } from '../../src/engine/transports/tcp';
import { ed25519KeyPair } from '../helpers/keys';
import { collectConfig } from '../../src/engine/collect';
import { startSimulator, type RunningSimulator } from '../sim/simulator';
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

test('a capture over SSH with the quiet key exchange gives the configuration (the engine calls it at the handshake)', async () => {
  const r = await collectConfig(target(sim.port, { username: 'core-sw1' }), IOS_TEMPLATE, FAST_LIMITS, { redact_key: Buffer.alloc(32, 1) });
  if (!r.ok) assert.fail(`${r.failure}: ${r.message}`);
  assert.ok(r.text.endsWith('!\nend\n'));
  assert.ok(!r.text.includes('s3cretCommunity'));
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

test('AES-GCM packets padded from the pool: the class is patched once, the padding differs packet to packet, a session goes on', async () => {
  const client = await login({ cipher: ['aes128-gcm@openssh.com'] });
  try {
    // Fails when an ssh2 upgrade changed its allocPacket: the speed-up would be lost without a word otherwise.
    assert.equal(pooledPadding(client), true);
    const cipher = (client as unknown as { _protocol: { _cipher: { allocPacket(n: number): Buffer } } })._protocol._cipher;
    const patched = Object.getPrototypeOf(cipher).allocPacket as { name: string };
    assert.equal(patched.name, 'pooledGcmAllocPacket');
    assert.equal(pooledPadding(client), true);
    assert.equal(Object.getPrototypeOf(cipher).allocPacket, patched, 'patched once per class');
    // The layout ssh2 writes: length, padding length, payload, padding to a 16-byte block (at least 4), room for the tag.
    const paddings = new Set<string>();
    for (const payload of [1, 10, 11, 27, 100]) {
      const packet = cipher.allocPacket(payload);
      const padLen = packet[4];
      assert.ok(padLen >= 4 && (4 + 1 + payload + padLen - 4) % 16 === 0, `payload ${payload}: padding ${padLen}`);
      assert.equal(packet.length, 4 + 1 + payload + padLen + 16);
      assert.equal(packet.readUInt32BE(0), 1 + payload + padLen);
      paddings.add(packet.subarray(5 + payload, 5 + payload + padLen).toString('hex'));
    }
    assert.equal(paddings.size, 5, 'fresh random padding for each packet');
    const answered = await new Promise<string>((resolve, reject) =>
      client.exec('show clock', (err, channel) => {
        if (err) return reject(err);
        let text = '';
        channel.on('data', (d: Buffer) => (text += d.toString())).on('close', () => resolve(text));
      }),
    );
    assert.ok(answered.length > 0, 'the device answers over the patched cipher');
  } finally {
    client.end();
  }
  const chacha = await login({ cipher: ['chacha20-poly1305@openssh.com'] });
  try {
    assert.equal(pooledPadding(chacha), false, 'another cipher is left as ssh2 wrote it');
  } finally {
    chacha.end();
  }
});

/**
 * A device that answers the pty request only once the shell request has arrived, accepting it or refusing it: a client
 * that waits for the pty answer before it asks for the shell (ssh2's own shell()) waits forever. Records what came when.
 */
async function gatedDevice(pty: 'accept' | 'refuse'): Promise<{ port: number; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const server = new ssh2.Server({ hostKeys: [ed25519KeyPair().private] }, (conn) => {
    conn.on('error', () => undefined);
    conn.on('authentication', (ctx) => ctx.accept());
    conn.on('ready', () =>
      conn.on('session', (acceptSession) => {
        const session = acceptSession();
        let answerPty: (() => void) | undefined;
        session.on('pty', (accept, reject) => {
          seen.push('pty');
          answerPty = pty === 'accept' ? accept : reject;
        });
        session.on('shell', (accept) => {
          seen.push(answerPty ? 'shell (pty unanswered)' : 'shell');
          answerPty?.();
          accept().end('router> ');
        });
        session.on('exec', (accept) => accept().end('12:00\n'));
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, seen, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** `client.shell()` with pipelinedShell, as the engine's openShell calls it; rejects after 5 s rather than hang. */
function pipelinedShellOf(client: Client): Promise<{ restored: boolean; channel: ssh2.ClientChannel }> {
  const restore = pipelinedShell(client);
  assert.ok(restore, 'ssh2 1.x: its protocol object has the pty and shell requests pipelinedShell wraps');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no answer to the shell request within 5 s')), 5000);
    client.shell({ term: 'vt100', cols: 512, rows: 1000, width: 0, height: 0 }, (err, channel) => {
      clearTimeout(timer);
      restore();
      const proto = (client as unknown as { _protocol: object })._protocol;
      const restored = !Object.hasOwn(proto, 'pty') && !Object.hasOwn(proto, 'shell');
      if (err) reject(Object.assign(err, { restored }));
      else resolve({ restored, channel });
    });
  });
}

async function loginTo(port: number): Promise<Client> {
  const client = new ssh2.Client();
  await new Promise<void>((resolve, reject) => {
    client.once('ready', () => resolve());
    client.once('error', reject);
    client.connect({ host: '127.0.0.1', port, username: 'backup', password: 'x', readyTimeout: 5000 });
  });
  return client;
}

test('the shell request leaves with the pty request: a device answering the pty only after both opens the shell', async () => {
  const device = await gatedDevice('accept');
  const client = await loginTo(device.port);
  try {
    const { restored, channel } = await pipelinedShellOf(client);
    assert.deepEqual(device.seen, ['pty', 'shell (pty unanswered)']);
    assert.equal(restored, true, "ssh2's own requests are back once the shell is open");
    const text = await new Promise<string>((resolve) => {
      let out = '';
      channel.on('data', (d: Buffer) => (out += d.toString())).on('close', () => resolve(out));
    });
    assert.equal(text, 'router> ');
  } finally {
    client.end();
    await device.close();
  }
});

test('a refused pty: the shell request sent with it gets no channel, the open fails as before and ssh2 is restored', async () => {
  const device = await gatedDevice('refuse');
  const client = await loginTo(device.port);
  try {
    await assert.rejects(pipelinedShellOf(client), (err: Error & { restored?: boolean }) => {
      assert.match(err.message, /pseudo-terminal/);
      assert.equal(err.restored, true);
      return true;
    });
    assert.deepEqual(device.seen, ['pty', 'shell (pty unanswered)']);
    // The connection goes on: an exec channel after the refused shell is answered.
    const exec = await new Promise<boolean>((resolve) => client.exec('show clock', (err) => resolve(!err)));
    assert.equal(exec, true);
  } finally {
    client.end();
    await device.close();
  }
});

test('writes in one turn of the event loop leave in one system call: the peer reads them as one chunk, in order', async () => {
  const chunks: string[] = [];
  const server = net.createServer((sock) => sock.on('data', (d: Buffer) => chunks.push(d.toString())));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sock = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
  try {
    await new Promise((resolve) => sock.once('connect', resolve));
    writesInTurns(sock);
    sock.write('exit\n');
    sock.write('EOF;');
    sock.write('disconnect;');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(chunks, ['exit\nEOF;disconnect;']);
    sock.write('next turn');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(chunks, ['exit\nEOF;disconnect;', 'next turn']);
  } finally {
    sock.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});
