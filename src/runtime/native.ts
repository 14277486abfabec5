// Loads the native addons (SQLite, argon2, ssh2's crypto): from node_modules in development, extracted from the executable's assets in production.
import { createRequire } from 'node:module';
import path from 'node:path';
import { workerData } from 'node:worker_threads';
import { extractNativeAddon, isExecutable, repoRoot } from './assets';

let sqliteBinding: object | undefined;
let sqlitePath: string | undefined;
/** ssh2's crypto binding, once loaded, and the file it was loaded from (the executable's extracted asset). */
let sshCrypto: Record<string, unknown> | undefined;
let sshCryptoPath: string | undefined;

/** The asset of ssh2's crypto binding (build/build.mjs; build/runtime.mjs compiles it for the pinned runtime). */
const SSH_CRYPTO_ASSET = 'native/sshcrypto.node';
/** Where ssh2 looks for it in development (node_modules/ssh2/lib/protocol/crypto.js). */
const SSH_CRYPTO_DEV = 'node_modules/ssh2/lib/protocol/crypto/build/Release/sshcrypto.node';
/** The workerData key under which a session thread gets the extracted file (nativeForWorker). */
export const WORKER_NATIVE = 'confvaultNative';
/** The classes ssh2 takes from the binding when its crypto module loads. */
const SSH_CRYPTO_CLASSES = ['AESGCMCipher', 'ChaChaPolyCipher', 'GenericCipher', 'AESGCMDecipher', 'ChaChaPolyDecipher', 'GenericDecipher'];

/** Prepare native addons before the database, password hashing or SSH is used (into nativeDir, else DATA_DIR/.native). Idempotent. */
export function prepareNativeAddons(dataDir: string, nativeDir: string | null): void {
  if (!isExecutable() || sqliteBinding) return;
  const dir = nativeDir ?? path.join(dataDir, '.native');
  sqlitePath = extractNativeAddon('native/better_sqlite3.node', dir);
  const mod = { exports: {} as object };
  process.dlopen(mod, sqlitePath);
  sqliteBinding = mod.exports;
  // @node-rs/argon2 honours this variable before its own lookup.
  process.env.NAPI_RS_NATIVE_LIBRARY_PATH = extractNativeAddon('native/argon2.linux-x64-gnu.node', dir);
  // Loaded now, so that a data dir the system will not load code from fails here, as the SQLite addon does.
  sshCryptoPath = extractNativeAddon(SSH_CRYPTO_ASSET, dir);
  loadedSshCrypto();
}

/** The addon object to hand to better-sqlite3's nativeBinding option, or undefined to let it find its own. */
export function sqliteNativeBinding(): object | undefined {
  return sqliteBinding;
}

/** The SQLite addon's file, for a worker thread that opens the database (a bundled worker cannot find it by itself). */
export function sqliteNativePath(): string {
  if (sqlitePath) return sqlitePath;
  const main = createRequire(path.join(repoRoot(), 'package.json')).resolve('better-sqlite3'); // .../better-sqlite3/lib/index.js
  return path.join(path.dirname(main), '..', 'build', 'Release', 'better_sqlite3.node');
}

/** What a session thread is handed in workerData[WORKER_NATIVE]: the extracted crypto binding (executable), else nothing. */
export function nativeForWorker(): { sshCrypto?: string } {
  return sshCryptoPath ? { sshCrypto: sshCryptoPath } : {};
}

function loadedSshCrypto(): Record<string, unknown> {
  if (sshCrypto) return sshCrypto;
  if (!sshCryptoPath) throw new Error(`${SSH_CRYPTO_ASSET} was not prepared: the command opened an SSH session before prepareNativeAddons`);
  const mod = { exports: {} as Record<string, unknown> };
  process.dlopen(mod, sshCryptoPath);
  sshCrypto = mod.exports;
  return sshCrypto;
}

/**
 * What ssh2's `require('./crypto/build/Release/sshcrypto.node')` returns in a bundle (build/esbuild-node.mjs,
 * sshCryptoAddon): its compiled binding, whose ciphers keep one OpenSSL context per connection where its JavaScript
 * fallback makes a cipher object per packet (a fifth of a collector's CPU, #27). In development, the file in
 * node_modules (build/runtime.mjs compiles it; when missing this throws and ssh2 falls back, as without the bundle).
 * In the executable's session threads, the file the main thread extracted (handed in workerData). On the executable's
 * main thread ssh2 loads it at startup, before any data dir is known: it gets a stand-in for each class, which
 * constructs the real one from the file prepareNativeAddons extracts.
 */
export function sshCryptoModule(): object {
  const handed = (workerData as Record<string, { sshCrypto?: string } | undefined> | null)?.[WORKER_NATIVE]?.sshCrypto;
  if (handed) {
    sshCryptoPath = handed;
    return loadedSshCrypto();
  }
  if (!isExecutable()) return createRequire(path.join(repoRoot(), 'package.json'))(path.join(repoRoot(), SSH_CRYPTO_DEV)) as object;
  return Object.fromEntries(
    SSH_CRYPTO_CLASSES.map((name) => [
      name,
      // A constructor that returns an object gives that object to `new`: the real instance, with its own methods.
      function standIn(...args: unknown[]) {
        const Real = loadedSshCrypto()[name] as new (...a: unknown[]) => object;
        return new Real(...args);
      },
    ]),
  );
}
