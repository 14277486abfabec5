// SSH device simulator: many simulated devices on loopback (one per port, or many per port chosen by login name).
import { createHash, createPrivateKey, sign as cryptoSign, timingSafeEqual } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import ssh2 from 'ssh2';
import { ed25519KeyPair } from '../helpers/keys';
import { pooledPadding, quietKeyExchange } from '../../src/engine/transports/ssh2-tuning';
import { writesInTurns } from '../../src/engine/transports/tcp';
import type { Algorithms, AuthContext, Connection, ParsedKey, ServerChannel } from 'ssh2';
import { DeviceShell, LineInput, devicePassword, deviceUsername, isSessionClosed, runDeviceExec, type DeviceIo, type SimDevice } from './device-shell';

export { loadTranscript, validateTranscript, type Transcript } from './transcript';
export type { SimDevice, SimFailure } from './device-shell';

export interface SimulatorOptions {
  devices: SimDevice[];
  /** 0 or absent: any free port. */
  port?: number;
  host?: string;
  /** Private host key (PEM or OpenSSH); generated when absent, so every start has a new key unless one is passed. */
  host_key?: string;
  /** "legacy-only" behaves like an old switch: SHA-1 key exchange, ssh-rsa host key, CBC ciphers only. */
  algorithms?: 'modern' | 'legacy-only' | Algorithms;
}

export interface RunningSimulator {
  host: string;
  port: number;
  /** "SHA256:<base64>" of the host key, as the engine reports it. */
  hostKeyFingerprint: string;
  /** The private host key, to restart the same "device" with the same key. */
  hostKey: string;
  /** Logins accepted so far as this device (by its username): a client that got here is talking to the device. */
  logins(username: string): number;
  close(): Promise<void>;
}

const LEGACY_ONLY: Algorithms = {
  kex: ['diffie-hellman-group1-sha1', 'diffie-hellman-group14-sha1'],
  serverHostKey: ['ssh-rsa'],
  cipher: ['aes128-cbc', '3des-cbc'],
  hmac: ['hmac-sha1'],
};

type Method = 'password' | 'keyboard-interactive' | 'publickey';

function methodsOf(d: SimDevice): Method[] {
  return d.auth_methods ?? (d.authorized_key ? ['publickey', 'password', 'keyboard-interactive'] : ['password', 'keyboard-interactive']);
}

function passwordOk(d: SimDevice, given: string | undefined): boolean {
  return d.failure !== 'wrong_password' && given === devicePassword(d);
}

function publicKeyOk(d: SimDevice, ctx: Extract<AuthContext, { method: 'publickey' }>, keys: Map<SimDevice, ParsedKey | null>): boolean {
  if (!d.authorized_key) return false;
  let allowed = keys.get(d);
  if (allowed === undefined) {
    const parsed = ssh2.utils.parseKey(d.authorized_key);
    const key: ParsedKey | null = parsed instanceof Error ? null : parsed;
    keys.set(d, key);
    allowed = key;
  }
  if (!allowed) return false;
  const pub = allowed.getPublicSSH();
  if (pub.length !== ctx.key.data.length || !timingSafeEqual(pub, ctx.key.data)) return false;
  // Without a signature the client only asks whether the key would do; with one, it must verify.
  return !ctx.signature || !ctx.blob || allowed.verify(ctx.blob, ctx.signature, ctx.hashAlgo) === true;
}

function channelIo(channel: ServerChannel, conn: Connection): DeviceIo {
  let open = true;
  const closed = () => {
    open = false;
  };
  conn.once('close', closed);
  channel.once('close', () => {
    closed();
    conn.removeListener('close', closed); // many exec channels share one connection
  });
  return {
    write: (data) =>
      new Promise<void>((resolve) => {
        if (!open || !channel.writable) return resolve();
        if (channel.write(data)) return resolve();
        const done = () => {
          channel.removeListener('drain', done);
          channel.removeListener('close', done);
          resolve();
        };
        channel.once('drain', done);
        channel.once('close', done);
      }),
    end: () => {
      channel.exit(0);
      channel.end();
    },
    drop: () => conn.end(),
    isOpen: () => open && channel.writable,
  };
}

/** A new private host key ssh2 can read back (see ed25519KeyPair). */
export function generateHostKey(type: 'ed25519' | 'rsa' = 'ed25519'): string {
  return type === 'rsa' ? ssh2.utils.generateKeyPairSync('rsa', { bits: 2048 }).private : ed25519KeyPair().private;
}

/**
 * The host key parsed, its Ed25519 signatures (one per connection's key exchange) made with a KeyObject: ssh2 signs with
 * the key's PEM text, which OpenSSL decodes every time (157 against 63 us, a few per cent of a simulator's CPU in the
 * benches). The signature is the same; an RSA key (legacy-only devices) signs as ssh2 does. ssh2 takes a parsed key as is.
 */
function signingWithKeyObject(hostKey: string): { key: ParsedKey | string } {
  const parsed = ssh2.utils.parseKey(hostKey);
  if (parsed instanceof Error) throw parsed;
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (key.type !== 'ssh-ed25519') return { key: hostKey };
  const privateKey = createPrivateKey(key.getPrivatePEM());
  key.sign = (data: Buffer) => cryptoSign(null, data, privateKey);
  return { key };
}

/** Starts an SSH server replaying the devices' transcripts. */
export async function startSimulator(o: SimulatorOptions): Promise<RunningSimulator> {
  const host = o.host ?? '127.0.0.1';
  const legacy = o.algorithms === 'legacy-only';
  const hostKey = o.host_key ?? generateHostKey(legacy ? 'rsa' : 'ed25519');
  const parsedHostKey = ssh2.utils.parseKey(hostKey);
  if (parsedHostKey instanceof Error) throw parsedHostKey;
  const keyBlob = (Array.isArray(parsedHostKey) ? parsedHostKey[0] : parsedHostKey).getPublicSSH();
  const fingerprint = 'SHA256:' + createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '');
  const algorithms = o.algorithms === 'legacy-only' ? LEGACY_ONLY : o.algorithms === 'modern' ? undefined : o.algorithms;

  const byName = new Map<string, SimDevice>();
  for (const d of o.devices) byName.set(d.name, d);
  if (o.devices.length === 1 && !byName.has(deviceUsername(o.devices[0]))) byName.set(deviceUsername(o.devices[0]), o.devices[0]);
  const authorizedKeys = new Map<SimDevice, ParsedKey | null>();
  const connections = new Set<Connection>();
  const logins = new Map<string, number>();

  const server = new ssh2.Server({ hostKeys: [signingWithKeyObject(hostKey)], algorithms, ident: 'confvault-sim' }, (conn) => {
    connections.add(conn);
    // A CLI writes small pieces: Nagle plus delayed ACKs would add 40 ms per exchange (ssh2 has it, its typings do not).
    (conn as Connection & { setNoDelay(on: boolean): void }).setNoDelay(true);
    let device: SimDevice | null = null;
    let loginUser = '';
    conn.on('error', () => undefined);
    conn.on('close', () => connections.delete(conn));
    // The key exchange without stack traces and the packets' padding from a pool, as the engine's side has them.
    conn.on('handshake', () => {
      quietKeyExchange(conn);
      pooledPadding(conn);
    });
    // The packets a device writes in one tick (output, prompt, exit status, close) leave in one socket write.
    const sock = (conn as unknown as { _sock?: Socket })._sock;
    if (sock) writesInTurns(sock);
    conn.on('authentication', (ctx) => {
      const d = byName.get(ctx.username);
      const methods = d ? methodsOf(d) : (['password', 'keyboard-interactive'] as Method[]);
      const accept = () => {
        device = d ?? null;
        loginUser = ctx.username;
        logins.set(ctx.username, (logins.get(ctx.username) ?? 0) + 1);
        ctx.accept();
      };
      if (!d || !(methods as string[]).includes(ctx.method)) return ctx.reject(methods);
      if (ctx.method === 'password') return passwordOk(d, ctx.password) ? accept() : ctx.reject(methods);
      if (ctx.method === 'publickey') return publicKeyOk(d, ctx, authorizedKeys) ? accept() : ctx.reject(methods);
      if (ctx.method === 'keyboard-interactive') {
        return ctx.prompt([{ prompt: 'Password: ', echo: false }], (answers) => (passwordOk(d, answers[0]) ? accept() : ctx.reject(methods)));
      }
      return ctx.reject(methods);
    });
    conn.on('ready', () => {
      conn.on('session', (acceptSession) => {
        const session = acceptSession();
        session.on('pty', (accept) => accept?.());
        session.on('window-change', (accept) => accept?.());
        session.on('env', (accept) => accept?.());
        session.on('shell', (accept) => {
          const channel = accept();
          const input = new LineInput();
          channel.on('data', (d: Buffer) => input.feed(d.toString('latin1')));
          channel.on('close', () => input.close());
          if (device) void new DeviceShell(device, channelIo(channel, conn), input, loginUser).run().catch(() => conn.end());
        });
        session.on('exec', (accept, reject, info) => {
          if (!device || !device.transcript.exec) return reject?.();
          const channel = accept();
          const d = device;
          runDeviceExec(d, info.command, channelIo(channel, conn)).then(
            (code) => {
              if (!channel.writable) return;
              channel.exit(code);
              channel.end();
            },
            (err: unknown) => {
              if (!isSessionClosed(err)) conn.end();
            },
          );
        });
      });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, host, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  // Clients come and go by the thousand in benchmarks: do not warn about listeners or backlog.
  server.setMaxListeners(0);
  const port = (server.address() as AddressInfo).port;
  return {
    host,
    port,
    hostKeyFingerprint: fingerprint,
    hostKey,
    logins: (username) => logins.get(username) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const conn of connections) conn.end();
        server.close(() => resolve());
      }),
  };
}
