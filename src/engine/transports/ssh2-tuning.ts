// Where confvault changes how ssh2 (1.x) works inside, for speed only (collectors-bench, #27): its key exchange without
// stack traces for the throws inside Node's key checks, its Curve25519 public key read as JWK, its AES-GCM packets padded
// from a pool of random bytes. Each is guarded: left alone when ssh2's internals are not where this expects them, and a
// test fails then. (Its ciphers run on its compiled binding: src/runtime/native.ts.)
import { randomBytes, type KeyObject } from 'node:crypto';
import type { Client, Connection } from 'ssh2';

/** Runs `fn` without capturing stack traces for the errors thrown (and caught) inside it; its result is the same. */
function withoutStackTraces<T>(fn: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return fn();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Key exchange classes whose computeSecret runs without stack traces already. */
const quietened = new WeakSet<object>();

/**
 * ssh2's Curve25519 key exchange (lib/protocol/kex.js, computeSecret) gives the peer's public key to createPublicKey
 * as DER, and Node 24's key checks throw and catch inside such a call: the stack traces of those throws are most of
 * its cost (93 against 34 us, measured). The connection's key exchange class gets its computeSecret wrapped, once per
 * process, to run without stack traces (collectors-bench, #27); the secret is the same, and an error it returns (a bad
 * peer key) keeps its message. The Curve25519 class's own public key is read in its JWK form instead of DER. Called at
 * the 'handshake' event: the class is then known, so the connections after the first one have it. Returns whether the
 * class has it; false when ssh2's internals are not where this expects them.
 */
export function quietKeyExchange(conn: Client | Connection): boolean {
  const kex = (conn as unknown as { _protocol?: { _kex?: { type?: unknown } } })._protocol?._kex;
  const proto = kex ? (Object.getPrototypeOf(kex) as KeyExchangeClass | null) : null;
  if (!proto || typeof proto.computeSecret !== 'function') return false;
  if (quietened.has(proto)) return true;
  const compute = proto.computeSecret;
  proto.computeSecret = function (this: unknown, ...args: unknown[]) {
    return withoutStackTraces(() => compute.apply(this, args));
  };
  if (kex?.type === '25519' && typeof proto.getPublicKey === 'function' && typeof proto.generateKeys === 'function') {
    // The same 32 bytes ssh2 cuts from the DER encoding (its getPublicKey), read from the JWK form: OpenSSL's DER encoder
    // is looked up on every export, 33 against 1.3 us, twice a connection.
    proto.getPublicKey = function (this: Curve25519Exchange) {
      this.generateKeys();
      return Buffer.from(this._keys.publicKey.export({ format: 'jwk' }).x!, 'base64url');
    };
  }
  quietened.add(proto);
  return true;
}

/** What quietKeyExchange touches of ssh2's key exchange classes (lib/protocol/kex.js). */
interface KeyExchangeClass {
  computeSecret?: (...args: unknown[]) => unknown;
  getPublicKey?: () => Buffer;
  generateKeys?: () => void;
}

/** ssh2's Curve25519Exchange: its key pair once generateKeys ran. */
interface Curve25519Exchange {
  generateKeys(): void;
  _keys: { publicKey: KeyObject };
}

/**
 * ssh2's AES-GCM packet allocation (lib/protocol/crypto.js, allocPacket of AESGCMCipherBinding and of its JavaScript
 * twin) as written in the version this was made for, whitespace and comments aside. Anything else is left alone.
 */
const GCM_ALLOC_PACKET =
  'allocPacket(payloadLen) { let pktLen = 4 + 1 + payloadLen; let padLen = 16 - ((pktLen - 4) & (16 - 1)); if (padLen < 4) padLen += 16; pktLen += padLen; const packet = Buffer.allocUnsafe(pktLen + 16); writeUInt32BE(packet, pktLen - 4, 0); packet[4] = padLen; randomFillSync(packet, 5 + payloadLen, padLen); return packet; }';

const normalised = (source: string) =>
  source
    .replace(/\/\*.*?\*\//g, '')
    .replace(/\s+/g, ' ')
    .replace(/\( /g, '(')
    .trim();

/** Random bytes for packet padding, drawn from the system's generator 4 KB at a time and each used once. */
const padding = { pool: Buffer.alloc(0), at: 0 };

function fillPadding(packet: Buffer, offset: number, length: number): void {
  if (padding.at + length > padding.pool.length) {
    padding.pool = randomBytes(4096);
    padding.at = 0;
  }
  padding.pool.copy(packet, offset, padding.at, padding.at + length);
  padding.at += length;
}

/** GCM_ALLOC_PACKET with the padding from the pool: the same packet layout, the same kind of random bytes. */
function pooledGcmAllocPacket(payloadLen: number): Buffer {
  let pktLen = 4 + 1 + payloadLen;
  let padLen = 16 - ((pktLen - 4) & 15);
  if (padLen < 4) padLen += 16;
  pktLen += padLen;
  const packet = Buffer.allocUnsafe(pktLen + 16);
  packet.writeUInt32BE(pktLen - 4, 0);
  packet[4] = padLen;
  fillPadding(packet, 5 + payloadLen, padLen);
  return packet;
}

/**
 * ssh2 pads every packet with fresh random bytes from randomFillSync: 2.6 us a call on Node 24 for a dozen bytes,
 * most of it the call itself (collectors-bench, #27: a few per cent of a site's CPU, and of a simulator's). The
 * connection's AES-GCM cipher class (what the engine and a modern device agree on) gets its allocPacket replaced,
 * once per process, by one that copies its padding from a pool of random bytes filled 4 KB at a time: 0.15 us.
 * Called at the 'handshake' event, as quietKeyExchange. Returns whether the class has it; false for another cipher,
 * or when ssh2's allocPacket is no longer the one this replicates.
 */
export function pooledPadding(conn: Client | Connection): boolean {
  const cipher = (conn as unknown as { _protocol?: { _cipher?: object } })._protocol?._cipher;
  const proto = cipher ? (Object.getPrototypeOf(cipher) as { allocPacket?: (n: number) => Buffer } | null) : null;
  if (!proto || typeof proto.allocPacket !== 'function') return false;
  if (proto.allocPacket === pooledGcmAllocPacket) return true;
  if (normalised(proto.allocPacket.toString()) !== GCM_ALLOC_PACKET) return false;
  proto.allocPacket = pooledGcmAllocPacket;
  return true;
}

/** What pipelinedShell touches of ssh2's protocol object (lib/protocol/Protocol.js): its two channel requests. */
interface ChannelRequests {
  pty?: (id: number, ...rest: unknown[]) => unknown;
  shell?: (id: number, wantReply: boolean) => unknown;
}

/**
 * The shell request sent right behind the pseudo-terminal request, as OpenSSH's client sends them, instead of one round
 * trip later: ssh2's `shell()` waits for the device's answer to "pty-req" before it asks for the shell (collectors-bench,
 * #27: one wake-up fewer a session at each end). The answers come back in order, so ssh2 still matches each to its
 * request; when the pseudo-terminal is refused, the shell's answer finds no request waiting and is dropped, as ssh2
 * drops any unmatched answer, and the channel closes as before. For the next `shell()` of `client` only; the returned
 * function puts ssh2's own requests back (call it once the shell callback ran). Returns null when ssh2's protocol object
 * is not what this expects, and nothing changes.
 */
export function pipelinedShell(client: Client): (() => void) | null {
  const proto = (client as unknown as { _protocol?: ChannelRequests })._protocol;
  const { pty, shell } = proto ?? {};
  if (!proto || typeof pty !== 'function' || typeof shell !== 'function' || Object.hasOwn(proto, 'pty') || Object.hasOwn(proto, 'shell')) return null;
  /** The channel whose shell request left with its pty request. */
  let sentFor: number | null = null;
  proto.pty = function (this: unknown, id: number, ...rest: unknown[]) {
    const r = pty.call(this, id, ...rest);
    // ssh2 asks for a reply (its last argument) whenever a callback waits, as shell() always has one.
    if (rest[rest.length - 1] === true) {
      shell.call(this, id, true);
      sentFor = id;
    }
    return r;
  };
  proto.shell = function (this: unknown, id: number, wantReply: boolean) {
    if (sentFor === id && wantReply) {
      sentFor = null;
      return;
    }
    return shell.call(this, id, wantReply);
  };
  return () => {
    delete proto.pty;
    delete proto.shell;
  };
}
