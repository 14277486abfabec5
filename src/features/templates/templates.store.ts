// Queries for backup templates. Identity columns are real columns; the remaining TemplateSpec settings are JSON in `spec`.
import type { DB } from '../../db/open';
import { prepareCached, statementSet } from '../../db/statements';
import { optionalSettings } from '../../templates/index';
import type { TemplateSpec } from '../../templates/types';

export interface TemplateRow {
  id: number;
  name: string;
  vendor: string;
  description: string;
  builtin: number;
  spec: string;
  /** The YAML file in <data_dir>/templates/ this template is loaded from; null for built-ins and API-made templates. */
  source_file: string | null;
  device_count: number;
  created_at: number;
  updated_at: number;
}

/** The settings stored as JSON: everything in TemplateSpec except the identity columns. */
export type TemplateSettings = Omit<TemplateSpec, 'name' | 'vendor' | 'description'>;

/** Where a template comes from: shipped with the appliance, made through the API/web/CLI, or a file in <data_dir>/templates/. */
export type TemplateSource = 'builtin' | 'custom' | 'file';

export type Template = TemplateSpec & {
  id: number;
  builtin: boolean;
  source: TemplateSource;
  source_file: string | null;
  device_count: number;
  created_at: number;
  updated_at: number;
};

const DEFAULT_SETTINGS: TemplateSettings = {
  mode: 'shell',
  prompt: null,
  pre_commands: [],
  commands: [],
  enable: null,
  strip_patterns: [],
  ignore_patterns: [],
  redact_patterns: [],
  change_events: [],
  redact: false,
  exit_command: null,
};

/** Settings JSON with a fixed key order, so equal specs give equal text (built-in sync compares the text). */
export function settingsJson(spec: TemplateSpec): string {
  const s: TemplateSettings = {
    mode: spec.mode,
    prompt: spec.prompt,
    pre_commands: spec.pre_commands,
    commands: spec.commands,
    enable: spec.enable && {
      command: spec.enable.command,
      password_prompt: spec.enable.password_prompt,
      prompt: spec.enable.prompt,
      // Written only when set, so templates without it keep their stored text.
      ...(spec.enable.prompt_unchanged ? { prompt_unchanged: true } : {}),
    },
    strip_patterns: spec.strip_patterns,
    ignore_patterns: spec.ignore_patterns,
    redact_patterns: spec.redact_patterns.map((r) => ({
      pattern: r.pattern,
      replacement: r.replacement,
      ...(r.within === undefined ? {} : { within: r.within }),
    })),
    redact: spec.redact,
    exit_command: spec.exit_command,
    // Written only when set, so templates without change events keep their stored text.
    ...(spec.change_events?.length ? { change_events: spec.change_events } : {}),
    // The same for session knowledge and output cuts (absent or empty: not written).
    ...optionalSettings(spec),
  };
  return JSON.stringify(s);
}

export function toTemplateSpec(row: Pick<TemplateRow, 'name' | 'vendor' | 'description' | 'spec'>): TemplateSpec {
  const settings = JSON.parse(row.spec) as Partial<TemplateSettings>;
  return { ...DEFAULT_SETTINGS, ...settings, name: row.name, vendor: row.vendor, description: row.description };
}

export function toTemplate(row: TemplateRow): Template {
  return {
    id: row.id,
    ...toTemplateSpec(row),
    builtin: row.builtin === 1,
    source: row.builtin === 1 ? 'builtin' : row.source_file !== null ? 'file' : 'custom',
    source_file: row.source_file,
    device_count: row.device_count,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

// device_count uses the devices_template index: one index probe per listed template.
const COLUMNS = `t.id, t.name, t.vendor, t.description, t.builtin, t.spec, t.source_file,
  (SELECT count(*) FROM devices d WHERE d.template_id = t.id) AS device_count, t.created_at, t.updated_at`;

// Filters are bound, never spliced. The table holds the built-ins plus a few custom templates, so a scan is
// cheaper than maintaining indexes for vendor/builtin; the name filter is a substring match no index serves.
const FILTER = `(@vendor IS NULL OR t.vendor = @vendor COLLATE NOCASE)
  AND (@builtin IS NULL OR t.builtin = @builtin)
  AND (@q IS NULL OR instr(lower(t.name), @q) > 0)`;

function prepareStatements(db: DB) {
  return {
    count: db.prepare(`SELECT count(*) FROM templates t WHERE ${FILTER}`).pluck(),
    page: db.prepare(`SELECT ${COLUMNS} FROM templates t WHERE ${FILTER} ORDER BY t.id LIMIT @limit OFFSET @offset`),
    get: db.prepare(`SELECT ${COLUMNS} FROM templates t WHERE t.id = ?`),
    spec: db.prepare('SELECT name, vendor, description, spec FROM templates WHERE id = ?'),
    all: db.prepare('SELECT id, name, vendor, description, builtin, spec, source_file FROM templates'),
    insert: db.prepare(
      `INSERT INTO templates (name, vendor, description, builtin, spec, source_file, created_at, updated_at)
       VALUES (@name, @vendor, @description, @builtin, @spec, @source_file, @now, @now)`,
    ),
    update: db.prepare('UPDATE templates SET name = @name, vendor = @vendor, description = @description, spec = @spec, updated_at = @now WHERE id = @id'),
    remove: db.prepare('DELETE FROM templates WHERE id = ?'),
    setSourceFile: db.prepare('UPDATE templates SET source_file = ? WHERE id = ?'),
    problems: db.prepare('SELECT path, errors, reported_at FROM template_file_problems ORDER BY path'),
    clearProblems: db.prepare('DELETE FROM template_file_problems'),
    addProblem: db.prepare('INSERT INTO template_file_problems (path, errors, reported_at) VALUES (?, ?, ?)'),
  };
}

// Prepared once per database handle; a closed handle's entry goes with it.
const stmts = statementSet(prepareStatements);

export interface TemplateFilter {
  vendor: string | null;
  builtin: boolean | null;
  /** Lower-cased name substring. */
  q: string | null;
}

function bind(f: TemplateFilter) {
  return { vendor: f.vendor, builtin: f.builtin === null ? null : f.builtin ? 1 : 0, q: f.q };
}

export function countTemplateRows(db: DB, f: TemplateFilter): number {
  return stmts(db).count.get(bind(f)) as number;
}

export function listTemplateRows(db: DB, f: TemplateFilter, offset: number, limit: number): TemplateRow[] {
  return stmts(db).page.all({ ...bind(f), limit, offset }) as TemplateRow[];
}

export function getTemplateRow(db: DB, id: number): TemplateRow | undefined {
  return stmts(db).get.get(id) as TemplateRow | undefined;
}

export function getTemplateSpecRow(db: DB, id: number): Pick<TemplateRow, 'name' | 'vendor' | 'description' | 'spec'> | undefined {
  return stmts(db).spec.get(id) as Pick<TemplateRow, 'name' | 'vendor' | 'description' | 'spec'> | undefined;
}

export type TemplateSyncRow = Pick<TemplateRow, 'id' | 'name' | 'vendor' | 'description' | 'builtin' | 'spec' | 'source_file'>;

export function listTemplateSyncRows(db: DB): TemplateSyncRow[] {
  return stmts(db).all.all() as TemplateSyncRow[];
}

/** The settings row naming the built-in library the built-in rows were last synced from (templates.service.ts). */
const BUILTIN_SYNC_KEY = 'builtin_templates_synced';

export function builtinSyncMark(db: DB): string | undefined {
  // Not .pluck(): the cached statement is shared (master-key.store.ts reads rows from it), and pluck would stick.
  return (prepareCached(db, 'SELECT value FROM settings WHERE key = ?').get(BUILTIN_SYNC_KEY) as { value: string } | undefined)?.value;
}

/** The newest migration applied: a migration may rewrite template rows, so it is part of what a sync is from. */
export function schemaVersion(db: DB): number {
  return (prepareCached(db, 'SELECT max(version) AS v FROM schema_migrations').get() as { v: number | null }).v ?? 0;
}

export function setBuiltinSyncMark(db: DB, mark: string): void {
  prepareCached(db, 'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(BUILTIN_SYNC_KEY, mark);
}

export function insertTemplateRow(db: DB, spec: TemplateSpec, builtin: boolean, now: number, sourceFile: string | null = null): number {
  const info = stmts(db).insert.run({
    name: spec.name,
    vendor: spec.vendor,
    description: spec.description,
    builtin: builtin ? 1 : 0,
    spec: settingsJson(spec),
    source_file: sourceFile,
    now,
  });
  return Number(info.lastInsertRowid);
}

export function updateTemplateRow(db: DB, id: number, spec: TemplateSpec, now: number): void {
  stmts(db).update.run({ id, name: spec.name, vendor: spec.vendor, description: spec.description, spec: settingsJson(spec), now });
}

export function deleteTemplateRow(db: DB, id: number): number {
  return stmts(db).remove.run(id).changes;
}

export function setTemplateSourceFile(db: DB, id: number, sourceFile: string | null): void {
  stmts(db).setSourceFile.run(sourceFile, id);
}

export interface TemplateFileProblemRow {
  path: string;
  /** JSON: [{ field, message }]. */
  errors: string;
  reported_at: number;
}

export function listTemplateFileProblemRows(db: DB): TemplateFileProblemRow[] {
  return stmts(db).problems.all() as TemplateFileProblemRow[];
}

/** Replace the last reload's report with this one (inside the caller's transaction). */
export function replaceTemplateFileProblemRows(db: DB, rows: readonly TemplateFileProblemRow[]): void {
  const s = stmts(db);
  s.clearProblems.run();
  for (const r of rows) s.addProblem.run(r.path, r.errors, r.reported_at);
}

/** Devices using the template that lie outside `scope` (ungrouped devices are outside every limited scope). */
export function countTemplateDevicesOutside(db: DB, id: number, groupIds: readonly number[]): number {
  return db
    .prepare(
      `SELECT count(*) FROM devices WHERE template_id = ?
         AND (group_id IS NULL OR group_id NOT IN (SELECT value FROM json_each(?)))`,
    )
    .pluck()
    .get(id, JSON.stringify(groupIds)) as number;
}
