// ssh2's per-packet ciphers and MACs keyed by KeyObjects instead of Buffers, once a connection's keys are set (its 'handshake' event), and its key exchange without stack traces for the throws inside Node's key checks.
import { createSecretKey, type KeyObject } from 'node:crypto';
import type { Client, Connection } from 'ssh2';

/**
 * The fields of ssh2's (1.x) cipher and decipher objects (lib/protocol/crypto.js) that hold a key passed on every
 * packet to createCipheriv, createDecipheriv or createHmac, and used for nothing else. Node 24 checks such a key with
 * a private-field test that throws and catches when it is a Buffer: about 30 us per call, i.e. per SSH packet on
 * each side, a tenth of a collector's CPU (collectors-bench, #27). A KeyObject passes that test at once.
 */
const PER_PACKET_KEYS = ['_encKey', '_decipherKey', '_macKey', '_encKeyMain', '_encKeyPktLen', '_decKeyMain', '_decKeyPktLen'] as const;

/**
 * Replaces the Buffer keys of the connection's current cipher and decipher by KeyObjects of the same bytes (the
 * output is the same; a later re-key makes new objects with Buffers, which work as before). Returns how many were
 * replaced: 0 when ssh2's internals are not where this expects them (nothing is changed then). A client's or a server's
 * connection (the test simulators swap theirs at the server side's 'handshake' event).
 */
export function useKeyObjects(client: Client | Connection): number {
  const protocol = (client as unknown as { _protocol?: { _cipher?: object; _decipher?: object } })._protocol;
  let replaced = 0;
  for (const side of [protocol?._cipher, protocol?._decipher]) {
    if (!side) continue;
    const fields = side as Record<string, unknown>;
    for (const name of PER_PACKET_KEYS) {
      const key = fields[name];
      if (Buffer.isBuffer(key) && key.length > 0) {
        fields[name] = createSecretKey(key);
        replaced++;
      }
    }
  }
  return replaced;
}

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
