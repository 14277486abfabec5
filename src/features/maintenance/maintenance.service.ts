// Database maintenance: online consistent backup through SQLite's backup API, and integrity checks.
import { chmodSync, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { DB } from '../../db/open';
import { openDatabase } from '../../db/open';
import { patternProblems } from '../../templates/index';
import { listTemplates } from '../templates/templates.service';
import { foreignKeyViolationRows, integrityCheckRows, pingDatabase, useRollbackJournal } from './maintenance.store';

export interface CheckReport {
  ok: boolean;
  lines: string[];
}

/** A further check run by `db check` (the snapshot store registers one). */
export type ExtraCheck = (db: DB, dataDir: string) => Promise<CheckReport> | CheckReport;

/** The database answers a query (/healthz); throws when it cannot. */
export function checkDatabaseAnswers(db: DB): void {
  pingDatabase(db);
}

export function checkDatabase(db: DB): CheckReport {
  const integrity = integrityProblems(db);
  const fk = foreignKeyViolationRows(db);
  const lines: string[] = [];
  const ok = integrity.length === 0 && fk.length === 0;
  if (integrity.length === 0) lines.push('database integrity: ok');
  else for (const p of integrity) lines.push(`database integrity: ${p}`);
  lines.push(fk.length === 0 ? 'foreign keys: ok' : `foreign keys: ${fk.length} violation(s)`);
  return { ok, lines };
}

/** integrity_check's findings, none when it says "ok". Damage that stops the check itself (SQLITE_CORRUPT) is a finding too. */
function integrityProblems(db: DB): string[] {
  try {
    const rows = integrityCheckRows(db);
    return rows.length === 1 && rows[0] === 'ok' ? [] : rows;
  } catch (e) {
    if (String((e as { code?: unknown }).code).startsWith('SQLITE_CORRUPT')) return [`the check stopped: ${(e as Error).message}`];
    throw e;
  }
}

/**
 * Custom templates whose patterns the engine cannot run (saved before patterns became RE2 syntax). Their backups
 * fail with a message naming the pattern until the template is edited, so `db check` fails on them too.
 */
export function checkTemplatePatterns(db: DB): CheckReport {
  const lines: string[] = [];
  let custom = 0;
  for (let page = 1; ; page++) {
    const { items, total } = listTemplates(db, { page, limit: 200, builtin: false });
    for (const t of items) {
      custom++;
      for (const p of patternProblems(t)) lines.push(`template ${t.name} (id ${t.id}): ${p.field} is not valid RE2 syntax: ${p.problem}`);
    }
    if (page * 200 >= total) break;
  }
  const bad = lines.length;
  lines.unshift(
    bad === 0
      ? `template patterns: ok (${custom} custom template(s), RE2 syntax)`
      : `template patterns: ${bad} pattern(s) the engine cannot run; edit these templates:`,
  );
  return { ok: bad === 0, lines };
}

/**
 * Copy the live database to `dest` while the server keeps writing. The copy is taken in one backup step
 * (a single read transaction, which WAL lets writers run beside), then checked with integrity_check.
 * The copy is a single file in rollback-journal mode.
 */
export async function backupDatabase(db: DB, dest: string): Promise<{ file: string; bytes: number; pages: number }> {
  const file = path.resolve(dest);
  if (existsSync(file)) throw new Error(`${file} already exists; choose a new file name`);
  if (!existsSync(path.dirname(file))) throw new Error(`folder ${path.dirname(file)} does not exist`);
  const result = await db.backup(file, { progress: () => 0x7fffffff });
  chmodSync(file, 0o600);
  // The copy inherits WAL mode; switch it to a self-contained rollback-journal file so that it leaves
  // no -wal/-shm files beside it and opens read-only anywhere it is restored from.
  const copy = openDatabase(file);
  try {
    useRollbackJournal(copy);
    const report = checkDatabase(copy);
    if (!report.ok) throw new Error(`the copy failed its integrity check: ${report.lines.join('; ')}`);
  } finally {
    copy.close();
  }
  return { file, bytes: statSync(file).size, pages: result.totalPages };
}
