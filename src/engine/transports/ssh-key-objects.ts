// ssh2's key exchange without stack traces for the throws inside Node's key checks, and its Curve25519 public key read as JWK. (Its per-packet ciphers run on its compiled binding: src/runtime/native.ts.)
import type { KeyObject } from 'node:crypto';
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
