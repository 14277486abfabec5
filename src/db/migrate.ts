// Applies the numbered SQL files of schema/ in order, each in its own transaction, recorded in schema_migrations.
import { existsSync } from 'node:fs';
import { listAssets, readAsset } from '../runtime/assets';
import { registerFunctions, type DB } from './open';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export class DatabaseTooNewError extends Error {}

export function loadMigrations(): Migration[] {
  return listAssets('schema')
    .filter((n) => /\/\d{4}_[a-z0-9_]+\.sql$/.test(n))
    .map((n) => {
      const base = n.slice(n.lastIndexOf('/') + 1);
      return { version: Number(base.slice(0, 4)), name: base.slice(5, -4), sql: readAsset(n).toString('utf8') };
    })
    .sort((a, b) => a.version - b.version);
}

function appliedVersions(db: DB): number[] {
  // Created under the write lock: two processes starting on a new file at once (several `init`) could otherwise both
  // compile the CREATE against a schema without the table, and the second fail with "table ... already exists".
  if (!db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'").get()) {
    db.transaction(() =>
      db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`),
    ).immediate();
  }
  return db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all() as number[];
}

export interface MigrateResult {
  applied: number[];
  backupFile: string | null;
}

/**
 * Bring the schema up to date. Before touching a database that already has a schema, a consistent
 * copy is written next to it (<file>.pre-v<N>.bak). A database from a newer binary is refused.
 */
export function migrate(db: DB, file: string | null, migrations: Migration[] = loadMigrations()): MigrateResult {
  registerFunctions(db);
  const latest = migrations.at(-1)?.version ?? 0;
  const done = appliedVersions(db);
  const current = done.at(-1) ?? 0;
  if (current > latest) {
    throw new DatabaseTooNewError(
      `database schema version ${current} is newer than this confvault (knows up to ${latest}); use a newer confvault or restore a backup`,
    );
  }
  const pending = migrations.filter((m) => !done.includes(m.version));
  if (pending.length === 0) {
    refreshNameKeys(db);
    return { applied: [], backupFile: null };
  }

  let backupFile: string | null = null;
  if (current > 0 && file && file !== ':memory:') {
    backupFile = `${file}.pre-v${pending[0].version}.bak`;
    if (!existsSync(backupFile)) {
      try {
        db.prepare('VACUUM INTO ?').run(backupFile);
      } catch (err) {
        // Another process starting at the same moment (several `init` at once) wrote the same version's copy first.
        if (!existsSync(backupFile)) throw err;
      }
    }
  }
  const applied: number[] = [];
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  // A migration may rebuild a table (create, copy, drop, recreate): with foreign keys on, its DROP TABLE would delete
  // or refuse on the rows that reference it. The pragma is a no-op inside a transaction, so it is switched around
  // the run, and each migration must leave every foreign key satisfied before it commits.
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) as number;
  db.pragma('foreign_keys = OFF');
  try {
    for (const m of pending) {
      // IMMEDIATE takes the write lock first, so a second process starting at the same moment waits and then skips.
      db.exec('BEGIN IMMEDIATE');
      try {
        const already = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version);
        if (!already) {
          db.exec(m.sql);
          checkForeignKeys(db);
          record.run(m.version, m.name, Date.now());
          applied.push(m.version);
        }
        db.exec('COMMIT');
      } catch (err) {
        db.exec('ROLLBACK');
        throw new Error(`migration ${String(m.version).padStart(4, '0')}_${m.name} failed: ${(err as Error).message}`);
      }
    }
  } finally {
    db.pragma(`foreign_keys = ${foreignKeys ? 'ON' : 'OFF'}`);
  }
  refreshNameKeys(db);
  return { applied, backupFile };
}

/**
 * The name_key indexes hold keys computed with the Unicode tables of the Node.js that wrote them. A confvault built
 * on a newer Unicode version may fold a newly assigned character differently: those indexes are rebuilt once, the
 * first time it opens the database (a REINDEX of a few milliseconds; a unique violation fails the start with the name).
 * Returns whether it rebuilt them.
 */
export function refreshNameKeys(db: DB): boolean {
  const unicode = process.versions.unicode ?? 'unknown';
  const indexes = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND sql LIKE '%name_key(%'").pluck().all() as string[];
  if (indexes.length === 0) return false;
  const stored = db.prepare("SELECT value FROM settings WHERE key = 'name_key_unicode'").pluck().get();
  if (stored === unicode) return false;
  db.transaction(() => {
    for (const index of indexes) db.exec(`REINDEX "${index.replaceAll('"', '""')}"`);
    db.prepare("INSERT INTO settings (key, value) VALUES ('name_key_unicode', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(unicode);
  })();
  return true;
}

interface ForeignKeyViolation {
  table: string;
  rowid: number | null;
  parent: string;
  fkid: number;
}

/** Throws, naming the first few, when a row references a missing parent (what foreign_keys=OFF let through). */
function checkForeignKeys(db: DB): void {
  const violations = db.pragma('foreign_key_check') as ForeignKeyViolation[];
  if (violations.length === 0) return;
  const shown = violations
    .slice(0, 5)
    .map((v) => `${v.table} row ${v.rowid ?? '?'} -> ${v.parent}`)
    .join(', ');
  throw new Error(
    `${violations.length} foreign key violation${violations.length > 1 ? 's' : ''} (${shown}${violations.length > 5 ? ', ...' : ''}); ` +
      'the database is unchanged: repair these rows (`confvault db check` lists them) and start again',
  );
}

export function schemaVersion(db: DB): number {
  return appliedVersions(db).at(-1) ?? 0;
}
