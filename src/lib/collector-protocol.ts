// The collector protocol's shared pieces (central and site): version, signed-request canonical form, sealing of job secrets.
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createPrivateKey,
  createPublicKey,
  createSecretKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';

/**
 * Bumped on any incompatible change of the messages; both sides refuse a peer that speaks another one, in one line.
 * The path stays /collector/v1 so that a collector of any version reaches the check (header X-Collector-Protocol)
 * and hears the mismatch line rather than a 404. Version 2 (#27): results travel in batches, answered per result.
 */
export const PROTOCOL_VERSION = 2;
export const PROTOCOL_PREFIX = '/collector/v1';

export const HEADERS = {
  protocol: 'x-collector-protocol',
  id: 'x-collector-id',
  timestamp: 'x-collector-timestamp',
  nonce: 'x-collector-nonce',
  signature: 'x-collector-signature',
  version: 'x-collector-version',
} as const;

/**
 * A results request carries at most this many results, and a collector packs at most BATCH_BYTES of them into one
 * (a single larger result travels alone, up to the central's body limit).
 */
export const BATCH_RESULTS = 50;
export const BATCH_BYTES = 8 * 1024 * 1024;
/** A lease request names at most this many leases the collector still holds (to renew them). */
export const MAX_HELD = 1000;
/**
 * An idle collector's lease request (`wait`) is held at most this long (and at most poll_seconds) until work is
 * queued; short, so that a central stopping waits little for held requests.
 */
export const LEASE_HOLD_MAX_MS = 5_000;

/** What the central answers for each result of a batch: `retry` keeps it at the site for the next request. */
export type ResultOutcome =
  | { lease_id: string; outcome: 'stored'; backup_id: string }
  | { lease_id: string; outcome: 'duplicate'; backup_id: string }
  | { lease_id: string; outcome: 'refused'; message: string }
  | { lease_id: string; outcome: 'retry'; message: string };

/** A signed request older or newer than this (clock skew included) is refused; nonces are remembered this long. */
export const REPLAY_WINDOW_MS = 5 * 60_000;

/**
 * What a collector signs: method, path (with query), timestamp, nonce and the body's SHA-256, one per line. A body,
 * path or time changed on the way fails the signature; a request replayed inside the window fails on its nonce.
 */
export function canonicalRequest(method: string, pathAndQuery: string, timestamp: string, nonce: string, body: Buffer | string): string {
  const bodyHash = createHash('sha256').update(body).digest('hex');
  return [`confvault-collector-v${PROTOCOL_VERSION}`, method.toUpperCase(), pathAndQuery, timestamp, nonce, bodyHash].join('\n');
}

export interface CollectorKeys {
  /** PEM (PKCS#8) private keys: kept at the site only, mode 0600. */
  signing_private: string;
  sealing_private: string;
  /** base64 DER (SPKI) public keys: pinned by the central at enrolment. */
  signing_public: string;
  sealing_public: string;
}

export function generateCollectorKeys(): CollectorKeys {
  const s = generateKeyPairSync('ed25519');
  const x = generateKeyPairSync('x25519');
  const pem = (k: KeyObject) => k.export({ type: 'pkcs8', format: 'pem' }).toString();
  const der = (k: KeyObject) => k.export({ type: 'spki', format: 'der' }).toString('base64');
  return { signing_private: pem(s.privateKey), sealing_private: pem(x.privateKey), signing_public: der(s.publicKey), sealing_public: der(x.publicKey) };
}

/**
 * Parsed keys by their text: the collectors' pinned public keys at the central, the site's own private keys. Parsing a
 * key cost more than the signature check it serves (collectors-bench, #27). Bounded: emptied when it holds
 * KEY_CACHE_MAX keys (docs/collectors.md); a revoked collector is refused before its key is looked at.
 */
const KEY_CACHE_MAX = 1024;
const keyCache = new Map<string, KeyObject | null>();

function cachedKey(text: string, parse: () => KeyObject | null): KeyObject | null {
  let key = keyCache.get(text);
  if (key === undefined) {
    if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear();
    key = parse();
    keyCache.set(text, key);
  }
  return key;
}

const privateKey = (pem: string) => cachedKey(pem, () => createPrivateKey(pem))!;

/** A base64 SPKI public key of the given type, or null when it is not one. */
export function parsePublicKey(b64: string, type: 'ed25519' | 'x25519'): KeyObject | null {
  return cachedKey(`${type}:${b64}`, () => {
    try {
      const key = createPublicKey({ key: Buffer.from(b64, 'base64'), format: 'der', type: 'spki' });
      return key.asymmetricKeyType === type ? key : null;
    } catch {
      return null;
    }
  });
}

export function signRequest(privatePem: string, canonical: string): string {
  return sign(null, Buffer.from(canonical), privateKey(privatePem)).toString('base64');
}

export function verifyRequest(publicKey: KeyObject, canonical: string, signature: string): boolean {
  try {
    return verify(null, Buffer.from(canonical), publicKey, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}

const SEAL_LABEL = 'confvault collector seal v1';

/** A secret sealed to one collector: an ephemeral X25519 key, ECDH with the collector's key, HKDF-SHA256, AES-256-GCM. */
export interface Sealed {
  epk: string;
  iv: string;
  tag: string;
  ct: string;
}

function sealKey(shared: Buffer, epk: Buffer, recipient: Buffer): KeyObject {
  // A KeyObject: a cipher given a Buffer costs about 30 µs more on Node 24 (its key check throws and catches inside).
  return createSecretKey(Buffer.from(hkdfSync('sha256', shared, Buffer.concat([epk, recipient]), SEAL_LABEL, 32)));
}

/**
 * A sealer of JSON values to the collector's X25519 public key (base64 SPKI); only its private key opens them. Each
 * value is sealed on its own (AES-256-GCM, a fresh random IV); the values of one sealer share its ephemeral key, so
 * a lease answer pays one key agreement, not one per job (collectors-bench, #27).
 */
export function sealerTo(recipientB64: string): (value: unknown) => Sealed {
  const recipient = parsePublicKey(recipientB64, 'x25519');
  if (!recipient) throw new Error('not an X25519 public key');
  const eph = generateKeyPairSync('x25519');
  const epk = eph.publicKey.export({ type: 'spki', format: 'der' });
  const key = sealKey(diffieHellman({ privateKey: eph.privateKey, publicKey: recipient }), epk, Buffer.from(recipientB64, 'base64'));
  const epkText = epk.toString('base64');
  return (value) => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const ct = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return { epk: epkText, iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), ct: ct.toString('base64') };
  };
}

/** Seal one JSON value to the collector's X25519 public key (a sealer of its own). */
export function sealTo(recipientB64: string, value: unknown): Sealed {
  return sealerTo(recipientB64)(value);
}

/**
 * The opening keys of the last ephemeral keys seen, by ephemeral key and recipient: the jobs of one lease answer
 * share one (sealerTo). Bounded: emptied when it holds OPEN_KEYS_MAX (docs/caches.md).
 */
const OPEN_KEYS_MAX = 64;
const openKeys = new Map<string, KeyObject>();

/** Open what sealTo sealed to this collector; throws when it was sealed to another key or changed on the way. */
export function openSealed(privatePem: string, publicB64: string, sealed: Sealed): unknown {
  const id = `${sealed.epk}\n${publicB64}\n${privatePem}`;
  let key = openKeys.get(id);
  if (!key) {
    const epk = Buffer.from(sealed.epk, 'base64');
    const shared = diffieHellman({ privateKey: privateKey(privatePem), publicKey: createPublicKey({ key: epk, format: 'der', type: 'spki' }) });
    key = sealKey(shared, epk, Buffer.from(publicB64, 'base64'));
    if (openKeys.size >= OPEN_KEYS_MAX) openKeys.clear();
    openKeys.set(id, key);
  }
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return JSON.parse(Buffer.concat([decipher.update(Buffer.from(sealed.ct, 'base64')), decipher.final()]).toString('utf8'));
}

export function sha256Text(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Syslog forwarded by a collector (POST /events): at most this many messages a request, each at most this many characters (the receiver's own bound). */
export const EVENTS_MAX_BATCH = 500;
export const EVENTS_MAX_MESSAGE = 8 * 1024;
