// Opens the SQLite database with the appliance's pragmas (WAL, synchronous=FULL, foreign keys, busy timeout); NORMAL only for the engine's records.
import Database from 'better-sqlite3';
import { nameKey } from '../lib/names';
import { sqliteNativeBinding } from '../runtime/native';
import { tuningOf } from './tuning';

export type DB = Database.Database;

export const BUSY_TIMEOUT_MS = 10_000;

/** `nativePath`: the SQLite addon's file, for a worker thread (sqliteNativePath of the main thread). */
export function openDatabase(file: string, opts: { readonly?: boolean; nativePath?: string } = {}): DB {
  const nativeBinding = opts.nativePath ?? sqliteNativeBinding();
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

const engineWrites = new WeakMap<DB, number>();

/**
 * Milliseconds since this handle last wrote an engine record (withEngineSync), Infinity if never: background upkeep
 * (the search index) steps back while backups are being recorded.
 */
export function msSinceEngineWrite(db: DB): number {
  const at = engineWrites.get(db);
  return at === undefined ? Infinity : Date.now() - at;
}

/**
 * Runs `fn` with synchronous=NORMAL for its commits, then puts FULL back: only for the backup engine's own records
 * (a backup starting, the device's reachability, a backup finishing), never for what a person or an API client wrote.
 * Why: with FULL each commit fsyncs the WAL on the event loop (a fraction of a millisecond on an idle disk, tens of
 * milliseconds on a busy one), three per device; in `npm run bench -- --only hostile` those fsyncs were a quarter of
 * the event loop's time during a 1,000-device run, and /healthz waited behind them.
 * What it costs: in WAL mode a NORMAL commit is still atomic and consistent and survives a crash of the process (the
 * WAL is in the OS cache; test/backups/crash.test.ts kills the runner with SIGKILL). Only a power loss or kernel crash
 * can roll back such records, and only those committed since the last FULL commit or checkpoint (which fsyncs the WAL
 * and so every frame before it): such a backup then looks as if it had not run, its snapshot file (fsynced before the
 * record) is left unreferenced for `db prune`, and the next run records it again. SQLite refuses to change the
 * setting inside a transaction, so within one (an import's) `fn` runs with the setting it has.
 */
export function withEngineSync<T>(db: DB, fn: () => T): T {
  engineWrites.set(db, Date.now());
  if (db.inTransaction || !tuningOf(db).engineSyncNormal) return fn();
  // exec, not pragma(): no statement object and no result rows, 2.4 us for the pair against 23 (several records a backup).
  db.exec('PRAGMA synchronous = NORMAL');
  try {
    return fn();
  } finally {
    db.exec('PRAGMA synchronous = FULL');
  }
}

/**
 * SQL functions the schema relies on: `name_key(text)` is the case-folded key of a name (src/lib/names.ts), used by
 * the unique indexes of schema 0010. A connection without it cannot write those tables ("no such function"), so
 * every handle, including a tool's, must be opened here (or call this).
 */
export function registerFunctions(db: DB): void {
  db.function('name_key', { deterministic: true }, (s: unknown) => (typeof s === 'string' ? nameKey(s) : s));
}
