// Opens the SQLite database with the appliance's pragmas (WAL, synchronous=FULL, foreign keys, busy timeout).
import Database from 'better-sqlite3';
import { nameKey } from '../lib/names';
import { sqliteNativeBinding } from '../runtime/native';

export type DB = Database.Database;

export const BUSY_TIMEOUT_MS = 10_000;

export function openDatabase(file: string, opts: { readonly?: boolean } = {}): DB {
  const nativeBinding = sqliteNativeBinding();
  const db = new Database(file, {
    readonly: opts.readonly ?? false,
    timeout: BUSY_TIMEOUT_MS,
    ...(nativeBinding ? { nativeBinding: nativeBinding as unknown as string } : {}),
  });
  if (!opts.readonly) db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma('temp_store = MEMORY');
  db.pragma('cache_size = -32000');
  registerFunctions(db);
  return db;
}

/**
 * SQL functions the schema relies on: `name_key(text)` is the case-folded key of a name (src/lib/names.ts), used by
 * the unique indexes of schema 0010. A connection without it cannot write those tables ("no such function"), so
 * every handle, including a tool's, must be opened here (or call this).
 */
export function registerFunctions(db: DB): void {
  db.function('name_key', { deterministic: true }, (s: unknown) => (typeof s === 'string' ? nameKey(s) : s));
}
