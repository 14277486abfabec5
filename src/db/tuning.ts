// The database layer's speed-ups, switched per handle from [performance] (src/config; docs/performance.md says what each buys).
// The handle's type from the driver itself: open.ts imports this module (withEngineSync), so no import back.
import type Database from 'better-sqlite3';

type DB = Database.Database;

export interface DbTuning {
  /** Prepared statements kept per handle (prepareCached, the stores' statement sets); off: prepared at each use. */
  statementCache: boolean;
  /** The engine's own records committed with synchronous=NORMAL (withEngineSync); off: FULL, an fsync per commit. */
  engineSyncNormal: boolean;
  /** Rendered history pages kept per history version (features/backups/history-pages.ts); off: rendered per request. */
  historyPageCache: boolean;
}

const ALL_ON: DbTuning = Object.freeze({ statementCache: true, engineSyncNormal: true, historyPageCache: true });
const tunings = new WeakMap<DB, DbTuning>();

/** Set a handle's switches (the appliance's handle, from the configuration); handles not tuned have every speed-up on. */
export function tuneDatabase(db: DB, tuning: DbTuning): void {
  tunings.set(db, Object.freeze({ ...tuning }));
}

export function tuningOf(db: DB): DbTuning {
  return tunings.get(db) ?? ALL_ON;
}
