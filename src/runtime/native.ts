// Loads the native addons (SQLite, argon2): from node_modules in development, extracted from the executable's assets in production.
import { createRequire } from 'node:module';
import path from 'node:path';
import { extractNativeAddon, isExecutable, repoRoot } from './assets';

let sqliteBinding: object | undefined;
let sqlitePath: string | undefined;

/** Prepare native addons before the database or password hashing is used (into nativeDir, else DATA_DIR/.native). Idempotent. */
export function prepareNativeAddons(dataDir: string, nativeDir: string | null): void {
  if (!isExecutable() || sqliteBinding) return;
  const dir = nativeDir ?? path.join(dataDir, '.native');
  sqlitePath = extractNativeAddon('native/better_sqlite3.node', dir);
  const mod = { exports: {} as object };
  process.dlopen(mod, sqlitePath);
  sqliteBinding = mod.exports;
  // @node-rs/argon2 honours this variable before its own lookup.
  process.env.NAPI_RS_NATIVE_LIBRARY_PATH = extractNativeAddon('native/argon2.linux-x64-gnu.node', dir);
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
