// A per-handle cache of prepared statements, for queries on a request's hot path.
import type Database from 'better-sqlite3';
import type { DB } from './open';
import { tuningOf } from './tuning';

const caches = new WeakMap<DB, Map<string, Database.Statement>>();
/** Statements kept per handle, at most: the SQL texts are fixed fragments (a few hundred); this only guards a mistake. */
const MAX_CACHED_STATEMENTS = 2_000;

/**
 * `db.prepare(sql)`, memoised per handle and SQL text. Only for SQL built from fixed fragments: the number of
 * distinct texts must stay small (values are always bound, never part of the text). Never call `.pluck()` or
 * `.raw()` on the result: those modes stick to the shared statement and would change it for every caller.
 */
export function prepareCached(db: DB, sql: string): Database.Statement {
  if (!tuningOf(db).statementCache) return db.prepare(sql);
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  let stmt = cache.get(sql);
  if (!stmt) {
    stmt = db.prepare(sql);
    if (cache.size >= MAX_CACHED_STATEMENTS) cache.clear();
    cache.set(sql, stmt);
  }
  return stmt;
}

/**
 * A store's set of prepared statements, made once per handle (a closed handle's set goes with it): `prepare` builds
 * the set. With [performance] statement_cache off, a new set is prepared at each use.
 */
export function statementSet<S>(prepare: (db: DB) => S): (db: DB) => S {
  const sets = new WeakMap<DB, S>();
  return (db) => {
    if (!tuningOf(db).statementCache) return prepare(db);
    let s = sets.get(db);
    if (!s) sets.set(db, (s = prepare(db)));
    return s;
  };
}

// `never[]`: any function taking the handle first fits (parameters are checked contravariantly).
type TxBody = (db: DB, ...args: never[]) => unknown;
const transactions = new WeakMap<DB, Map<TxBody, Database.Transaction>>();

/**
 * `db.transaction(...)` built once per handle and body, then called with `args`: building a transaction function
 * costs several microseconds, a clear share of a fast request. `body` must be a module-level function (its identity
 * is the cache key), and receives the handle first.
 */
export function runTransaction<F extends TxBody>(db: DB, body: F, ...args: Parameters<F> extends [DB, ...infer A] ? A : never): ReturnType<F> {
  let cache = transactions.get(db);
  if (!cache) {
    cache = new Map();
    transactions.set(db, cache);
  }
  let tx = cache.get(body);
  if (!tx) {
    tx = db.transaction((...a: never[]) => body(db, ...a));
    cache.set(body, tx);
  }
  return tx(...args) as ReturnType<F>;
}

/**
 * SQLite's plan for `sql` run with `args`, one detail line per step. The query-plan tests call it (through the
 * stores' `explain*` functions) on the very SQL text the stores prepare, never on a copy.
 */
export function explainQueryPlan(db: DB, sql: string, args: readonly unknown[]): string[] {
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((r) => r.detail);
}
