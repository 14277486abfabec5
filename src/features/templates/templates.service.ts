// Backup templates: read-only built-ins kept in step with the code, custom templates validated before they are saved.
import type { DB } from '../../db/open';
import { BUILTIN_TEMPLATES, validateTemplate } from '../../engine/templates/index';
import type { TemplateSpec } from '../../engine/templates/types';
import { ApiError, isUniqueViolation } from '../../errors';
import {
  countTemplateRows,
  deleteTemplateRow,
  getTemplateRow,
  getTemplateSpecRow,
  insertTemplateRow,
  listTemplateRows,
  listTemplateSyncRows,
  settingsJson,
  toTemplate,
  toTemplateSpec,
  updateTemplateRow,
  type Template,
  type TemplateSyncRow,
} from './templates.store';

export type { Template } from './templates.store';

/** A new custom template: a whole TemplateSpec (the route fills in documented defaults). */
export type TemplateInput = TemplateSpec;
/** PUT semantics: omitted fields keep their value; the merged template is validated as a whole. */
export type TemplatePatch = Partial<TemplateSpec>;

const BUILTIN_NAMES: ReadonlySet<string> = new Set(BUILTIN_TEMPLATES.map((t) => t.name.toLowerCase()));

export function listTemplates(
  db: DB,
  opts: { page: number; limit: number; vendor?: string; builtin?: boolean; q?: string },
): { items: Template[]; total: number } {
  const filter = { vendor: opts.vendor ?? null, builtin: opts.builtin ?? null, q: opts.q ? opts.q.toLowerCase() : null };
  const total = countTemplateRows(db, filter);
  const offset = (opts.page - 1) * opts.limit;
  const items = offset < total ? listTemplateRows(db, filter, offset, opts.limit).map(toTemplate) : [];
  return { items, total };
}

export function getTemplate(db: DB, id: number): Template {
  const row = getTemplateRow(db, id);
  if (!row) throw ApiError.notFound(`template ${id}`);
  return toTemplate(row);
}

/** The stored spec for the backup runner; undefined when the template does not exist. */
export function getTemplateSpec(db: DB, id: number): TemplateSpec | undefined {
  const row = getTemplateSpecRow(db, id);
  return row && toTemplateSpec(row);
}

export function createTemplate(db: DB, input: TemplateInput): Template {
  const spec = specFields(input);
  checkSpec(spec, null);
  const id = withNameCheck(spec.name, () => insertTemplateRow(db, spec, false, Date.now()));
  return getTemplate(db, id);
}

export function updateTemplate(db: DB, id: number, patch: TemplatePatch): Template {
  // IMMEDIATE: the merge reads the row the write replaces, even with the CLI or web interface writing concurrently.
  db.transaction(() => {
    const row = getTemplateRow(db, id);
    if (!row) throw ApiError.notFound(`template ${id}`);
    if (row.builtin) throw readOnly(row.name);
    const spec = specFields({ ...toTemplateSpec(row), ...definedOnly(patch) });
    checkSpec(spec, row.name);
    withNameCheck(spec.name, () => updateTemplateRow(db, id, spec, Date.now()));
  }).immediate();
  return getTemplate(db, id);
}

export function deleteTemplate(db: DB, id: number): void {
  db.transaction(() => {
    const row = getTemplateRow(db, id);
    if (!row) throw ApiError.notFound(`template ${id}`);
    if (row.builtin) throw readOnly(row.name);
    if (row.device_count > 0) throw inUseError(id, row.device_count);
    deleteTemplateRow(db, id);
  }).immediate(); // the write lock is held from the count to the delete, so no device can be added in between
}

export interface BuiltinSyncResult {
  inserted: string[];
  updated: string[];
  /** Built-in names already taken by a custom template (from before the built-in existed); left untouched. */
  conflicts: string[];
}

/**
 * Upsert the built-in library by name: add new built-ins, and rewrite vendor/description/settings of those whose
 * code changed. Runs at every start, so it first compares outside any write transaction and takes the write lock
 * only when something differs. A built-in the code no longer ships stays as it is: devices may still use it.
 */
export function syncBuiltinTemplates(db: DB): BuiltinSyncResult {
  const first = planSync(listTemplateSyncRows(db));
  if (!first.changed) return { inserted: [], updated: [], conflicts: first.conflicts };
  return db
    .transaction(() => {
      // Planned again under the lock: another process may have synced in between.
      const plan = planSync(listTemplateSyncRows(db));
      const now = Date.now();
      for (const spec of plan.insert) insertTemplateRow(db, spec, true, now);
      for (const { id, spec } of plan.update) updateTemplateRow(db, id, spec, now);
      return { inserted: plan.insert.map((s) => s.name), updated: plan.update.map((u) => u.spec.name), conflicts: plan.conflicts };
    })
    .immediate();
}

function planSync(rows: TemplateSyncRow[]) {
  const byName = new Map(rows.map((r) => [r.name.toLowerCase(), r]));
  const insert: TemplateSpec[] = [];
  const update: { id: number; spec: TemplateSpec }[] = [];
  const conflicts: string[] = [];
  for (const spec of BUILTIN_TEMPLATES) {
    const row = byName.get(spec.name.toLowerCase());
    if (!row) insert.push(spec);
    else if (!row.builtin) conflicts.push(spec.name);
    else if (row.vendor !== spec.vendor || row.description !== spec.description || row.spec !== settingsJson(spec) || row.name !== spec.name) {
      update.push({ id: row.id, spec });
    }
  }
  return { insert, update, conflicts, changed: insert.length + update.length > 0 };
}

/** Validation errors first (422), then the name rule (400). `previousName` is null for a new template. */
function checkSpec(spec: TemplateSpec, previousName: string | null): void {
  const errors = validateTemplate(spec);
  if (errors.length) throw ApiError.validation(errors, 'Template validation failed');
  // Built-in names are reserved even before the built-in is synced; a custom template that predates a built-in of
  // the same name keeps its name, so the check applies only when the name is set or changed.
  const renamed = previousName === null || previousName.toLowerCase() !== spec.name.toLowerCase();
  if (renamed && BUILTIN_NAMES.has(spec.name.toLowerCase())) {
    throw new ApiError('TEMPLATE_NAME_EXISTS', `"${spec.name}" is the name of a built-in template; choose another name`);
  }
}

/** Only the TemplateSpec fields, in case the caller's object carries more (the DB row's id, counts). */
export function specFields(t: TemplateSpec): TemplateSpec {
  return {
    name: t.name,
    vendor: t.vendor,
    description: t.description,
    mode: t.mode,
    prompt: t.prompt,
    pre_commands: t.pre_commands,
    commands: t.commands,
    enable: t.enable,
    strip_patterns: t.strip_patterns,
    ignore_patterns: t.ignore_patterns,
    redact_patterns: t.redact_patterns,
    redact: t.redact,
    exit_command: t.exit_command,
  };
}

function definedOnly(patch: TemplatePatch): TemplatePatch {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as TemplatePatch;
}

function readOnly(name: string): ApiError {
  return new ApiError('TEMPLATE_BUILTIN_READONLY', `"${name}" is a built-in template and cannot be changed or deleted; create a copy under another name`);
}

function inUseError(id: number, devices: number): ApiError {
  return new ApiError(
    'TEMPLATE_IN_USE',
    `template ${id} is used by ${devices} device${devices === 1 ? '' : 's'}; give them another template first`,
    { device_count: devices },
  );
}

function withNameCheck<T>(name: string, write: () => T): T {
  try {
    return write();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ApiError('TEMPLATE_NAME_EXISTS', `a template named "${name}" already exists`);
    throw err;
  }
}
