// Backup templates: read-only built-ins kept in step with the code, custom templates validated, policy-checked and audited.
import type { DB } from '../../db/open';
import { builtinTemplates, isBuiltinTemplateName, optionalSettings, templateFieldsOf, validateTemplate } from '../../templates/index';
import { builtinFilesDigest } from '../../templates/files';
import { VERSION } from '../../version';
import type { TemplateSpec } from '../../templates/types';
import { ApiError, isUniqueViolation } from '../../errors';
import type { Actor } from '../../identity/actor';
import { authorize, denied, requireOwnsSharedThing } from '../../identity/policy';
import { TEMPLATE_OPS } from './templates.policy';
import type { Principal } from '../../identity/principal';
import { changesBetween, recordAudit } from '../audit/audit.service';
import {
  countTemplateDevicesOutside,
  countTemplateRows,
  deleteTemplateRow,
  getTemplateRow,
  getTemplateSpecRow,
  insertTemplateRow,
  listTemplateRows,
  listTemplateSyncRows,
  builtinSyncMark,
  schemaVersion,
  setBuiltinSyncMark,
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

export function createTemplate(db: DB, actor: Actor, input: TemplateInput): Template {
  authorize(actor, TEMPLATE_OPS.create);
  const spec = specFields(input);
  checkSpec(spec, null);
  const id = db
    .transaction(() => {
      const newId = withNameCheck(spec.name, () => insertTemplateRow(db, spec, false, Date.now()));
      recordAudit(db, actor, { action: 'template.create', target: `template ${newId}`, changes: changesBetween(null, spec), details: { name: spec.name } });
      return newId;
    })
    .immediate();
  return getTemplate(db, id);
}

/**
 * The commands a template sends run on every device that uses it, so a scoped user must not reach beyond the
 * scope through them (issue #9): a template used outside the scope, and any change of the commands themselves,
 * need scope all.
 */
function requireTemplateWithinScope(db: DB, actor: Actor, id: number, verb: 'changed' | 'deleted'): void {
  requireOwnsSharedThing(
    actor,
    { label: `Template ${id}`, use: 'device', details: { template_id: id } },
    (groups) => countTemplateDevicesOutside(db, id, groups),
    verb,
  );
}

/**
 * The enable exchange sends the credential's enable secret in-band, where the template's commands decide what
 * happens to it (typed at a prompt the template names, then read back from the command history or a shell
 * variable by a capture command): so what a template sends is decided only by a user entitled to every
 * credential, credentials.view besides scope all.
 */
function requireSecretsReach(actor: Actor, fields: readonly string[], verb: 'Changing' | 'Trying'): void {
  if (actor.principal.permissions.has('credentials.view')) return;
  throw denied(
    `${verb} a template's ${fields.join(' and ')} needs the permission credentials.view: the enable exchange hands the enable secret to what the template sends`,
    {
      permission: 'credentials.view',
      fields,
    },
  );
}

/**
 * Redaction is a security control: switching it off, or removing or changing any redact rule (a changed rule may
 * match less), decides whether the secrets of every device using the template are stored in clear. The fields
 * weakened by going from `before` to `after`; adding rules to a template that redacts weakens nothing.
 */
export function redactionWeakened(before: TemplateSpec, after: TemplateSpec): ('redact' | 'redact_patterns')[] {
  const out: ('redact' | 'redact_patterns')[] = [];
  if (before.redact && !after.redact) out.push('redact');
  const kept = new Set(after.redact_patterns.map((p) => JSON.stringify(p)));
  if (before.redact_patterns.some((p) => !kept.has(JSON.stringify(p)))) out.push('redact_patterns');
  return out;
}

/** Weakening redaction needs what changing the commands needs: scope all and credentials.view. */
function requireRedactionAuthority(actor: Actor, fields: readonly string[]): void {
  if (!actor.principal.scope.all) {
    throw denied(
      `Turning off or narrowing a template's redaction (${fields.join(' and ')}) needs a device-group scope of all: it decides whether secrets are stored in clear`,
      {
        fields,
      },
    );
  }
  if (!actor.principal.permissions.has('credentials.view')) {
    throw denied(
      `Turning off or narrowing a template's redaction (${fields.join(' and ')}) needs the permission credentials.view: it decides whether secrets are stored in clear`,
      {
        permission: 'credentials.view',
        fields,
      },
    );
  }
}

function pick(spec: TemplateSpec, fields: readonly ('redact' | 'redact_patterns')[]): Partial<TemplateSpec> {
  return Object.fromEntries(fields.map((f) => [f, spec[f]]));
}

/**
 * Everything a template sends to a device: the commands proper, the enable and exit commands sent around them, and
 * the session knowledge (pager answers and Enter are keystrokes; a login question is answered with the secrets).
 */
const COMMAND_FIELDS = ['commands', 'pre_commands', 'enable', 'exit_command', 'session'] as const;

export function updateTemplate(db: DB, actor: Actor, id: number, patch: TemplatePatch): Template {
  authorize(actor, TEMPLATE_OPS.update);
  // IMMEDIATE: the merge reads the row the write replaces, even with the CLI or web interface writing concurrently.
  db.transaction(() => {
    const row = getTemplateRow(db, id);
    if (!row) throw ApiError.notFound(`template ${id}`);
    if (row.builtin) throw readOnly(row.name);
    if (row.source_file !== null) throw fileManaged(row.name, row.source_file);
    const before = toTemplateSpec(row);
    const spec = specFields({ ...before, ...definedOnly(patch) });
    const changes = changesBetween(before, spec);
    const commandFields = COMMAND_FIELDS.filter((f) => f in changes);
    if (commandFields.length > 0 && !actor.principal.scope.all) {
      throw denied(`Changing a template's ${commandFields.join(' and ')} needs a device-group scope of all: the commands run on every device using it`, {
        fields: commandFields,
      });
    }
    if (commandFields.length > 0) requireSecretsReach(actor, commandFields, 'Changing');
    requireTemplateWithinScope(db, actor, id, 'changed');
    const weakened = redactionWeakened(before, spec);
    if (weakened.length > 0) requireRedactionAuthority(actor, weakened);
    checkSpec(spec, row.name);
    withNameCheck(spec.name, () => updateTemplateRow(db, id, spec, Date.now()));
    if (Object.keys(changes).length > 0) {
      const details = weakened.length > 0 ? { name: spec.name, redaction_weakened: weakened } : { name: spec.name };
      recordAudit(db, actor, { action: 'template.update', target: `template ${id}`, changes, details });
    }
    if (weakened.length > 0) {
      recordAudit(db, actor, {
        action: 'template.redaction_weakened',
        target: `template ${id}`,
        changes: changesBetween(pick(before, weakened), pick(spec, weakened)),
        details: { name: spec.name, effect: 'secrets of devices using this template may be stored in clear from their next backup' },
      });
    }
  }).immediate();
  return getTemplate(db, id);
}

/**
 * "Try on device" sends a template, possibly edited and unsaved, to a device and shows what came back: the same
 * rules as saving that edit (a scoped user changes no command and no template used outside the scope, and tries
 * no new template), and backups.view besides backups.run, since what comes back is the device's configuration.
 */
export function authorizeTemplateTrial(db: DB, actor: Actor, id: number | null, spec: TemplateSpec): void {
  authorize(actor, TEMPLATE_OPS.try);
  const scoped = !actor.principal.scope.all;
  if (id === null) {
    if (scoped) throw denied('Trying a new template needs a device-group scope of all: its commands would run on the device');
    requireSecretsReach(actor, COMMAND_FIELDS, 'Trying');
    return;
  }
  const row = getTemplateRow(db, id);
  if (!row) throw ApiError.notFound(`template ${id}`);
  if (row.builtin) return;
  const changes = changesBetween(toTemplateSpec(row), specFields(spec));
  const commandFields = COMMAND_FIELDS.filter((f) => f in changes);
  if (commandFields.length > 0 && scoped) {
    throw denied(`Trying a template with changed ${commandFields.join(' and ')} needs a device-group scope of all: the commands would run on the device`, {
      fields: commandFields,
    });
  }
  if (commandFields.length > 0) requireSecretsReach(actor, commandFields, 'Trying');
  if (scoped && Object.keys(changes).length > 0) requireTemplateWithinScope(db, actor, id, 'changed');
  const weakened = redactionWeakened(toTemplateSpec(row), specFields(spec));
  if (weakened.length > 0) requireRedactionAuthority(actor, weakened);
}

export function deleteTemplate(db: DB, actor: Actor, id: number): void {
  authorize(actor, TEMPLATE_OPS.delete);
  db.transaction(() => {
    const row = getTemplateRow(db, id);
    if (!row) throw ApiError.notFound(`template ${id}`);
    if (row.builtin) throw readOnly(row.name);
    if (row.source_file !== null) throw fileManaged(row.name, row.source_file);
    requireTemplateWithinScope(db, actor, id, 'deleted');
    if (row.device_count > 0) throw inUseError(id, row.device_count);
    deleteTemplateRow(db, id);
    recordAudit(db, actor, { action: 'template.delete', target: `template ${id}`, details: { name: row.name, vendor: row.vendor } });
  }).immediate(); // the write lock is held from the count to the delete, so no device can be added in between
}

export interface BuiltinSyncResult {
  inserted: string[];
  updated: string[];
  /** Built-in names already taken by a custom template (from before the built-in existed); left untouched. */
  conflicts: string[];
}

/**
 * What the built-in rows are synced from: the form a sync writes, the version, the database's schema (a migration
 * may rewrite rows) and the files' digest. Raise BUILTIN_SYNC_FORM when the rows a sync writes change for the same
 * files (settingsJson, the columns it fills).
 */
const BUILTIN_SYNC_FORM = 1;
const currentSyncMark = (db: DB) => `${BUILTIN_SYNC_FORM} ${VERSION} ${schemaVersion(db)} ${builtinFilesDigest()}`;

/**
 * Upsert the built-in library by name: add new built-ins, and rewrite vendor/description/settings of those whose
 * code changed. Runs at every start: when the database says it was last synced from these very files (a settings
 * row), nothing is parsed or compared. Otherwise it compares outside any write transaction and takes the write lock
 * only when something differs. A built-in the code no longer ships stays as it is: devices may still use it.
 * `conflicts` is reported by the start that compares, the first one after the files change.
 */
export function syncBuiltinTemplates(db: DB): BuiltinSyncResult {
  const mark = currentSyncMark(db);
  if (builtinSyncMark(db) === mark) return { inserted: [], updated: [], conflicts: [] };
  const first = planSync(listTemplateSyncRows(db));
  if (!first.changed) {
    try {
      setBuiltinSyncMark(db, mark);
    } catch {
      /* a database this process may only read (an operator reading another user's file): compare again next time */
    }
    return { inserted: [], updated: [], conflicts: first.conflicts };
  }
  return db
    .transaction(() => {
      // Planned again under the lock: another process may have synced in between.
      const plan = planSync(listTemplateSyncRows(db));
      const now = Date.now();
      for (const spec of plan.insert) insertTemplateRow(db, spec, true, now);
      for (const { id, spec } of plan.update) updateTemplateRow(db, id, spec, now);
      setBuiltinSyncMark(db, mark);
      return { inserted: plan.insert.map((s) => s.name), updated: plan.update.map((u) => u.spec.name), conflicts: plan.conflicts };
    })
    .immediate();
}

function planSync(rows: TemplateSyncRow[]) {
  const byName = new Map(rows.map((r) => [r.name.toLowerCase(), r]));
  const insert: TemplateSpec[] = [];
  const update: { id: number; spec: TemplateSpec }[] = [];
  const conflicts: string[] = [];
  for (const spec of builtinTemplates()) {
    const row = byName.get(spec.name.toLowerCase());
    if (!row) insert.push(spec);
    else if (!row.builtin) conflicts.push(spec.name);
    else if (row.vendor !== spec.vendor || row.description !== spec.description || row.spec !== settingsJson(spec) || row.name !== spec.name) {
      update.push({ id: row.id, spec });
    }
  }
  return { insert, update, conflicts, changed: insert.length + update.length > 0 };
}

/**
 * The names other backup tools give platforms (a router.db line's Oxidized model or RANCID type), each to the template
 * whose `aliases` lists it: built-ins first, then the others by id, the first claim winning. Read from the database,
 * so file and custom templates may add names.
 */
export function templateAliases(db: DB): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  const rows = listTemplateSyncRows(db).sort((a, b) => b.builtin - a.builtin || a.id - b.id);
  for (const row of rows) {
    const aliases = toTemplateSpec(row).aliases;
    for (const alias of [...(aliases?.oxidized ?? []), ...(aliases?.rancid ?? [])]) if (!out.has(alias)) out.set(alias, row.name);
  }
  return out;
}

/** Every template that declares how it is recognised (its `detect` field), with its id, for platform detection. */
export function detectableTemplates(db: DB): (Pick<TemplateSpec, 'name' | 'detect'> & { id: number })[] {
  return listTemplateSyncRows(db)
    .map((row) => ({ id: row.id, name: row.name, detect: toTemplateSpec(row).detect }))
    .filter((t) => t.detect !== undefined);
}

/** Validation errors first (422), then the name rule (400). `previousName` is null for a new template. */
function checkSpec(spec: TemplateSpec, previousName: string | null): void {
  const errors = validateTemplate(spec);
  if (errors.length) throw ApiError.validation(errors, 'Template validation failed');
  // Built-in names are reserved even before the built-in is synced; a custom template that predates a built-in of
  // the same name keeps its name, so the check applies only when the name is set or changed.
  const renamed = previousName === null || previousName.toLowerCase() !== spec.name.toLowerCase();
  if (renamed && isBuiltinTemplateName(spec.name)) {
    throw new ApiError('TEMPLATE_NAME_EXISTS', `"${spec.name}" is the name of a built-in template; choose another name`);
  }
}

/** Only the TemplateSpec fields, in case the caller's object carries more (the DB row's id, counts); optional parts normalised. */
export function specFields(t: TemplateSpec): TemplateSpec & { change_events: string[] } {
  const { session, command_output, aliases, detect, ...fields } = templateFieldsOf(t);
  return { ...fields, change_events: t.change_events ?? [], ...optionalSettings({ session, command_output, aliases, detect }) };
}

function definedOnly(patch: TemplatePatch): TemplatePatch {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
}

function readOnly(name: string): ApiError {
  return new ApiError('TEMPLATE_BUILTIN_READONLY', `"${name}" is a built-in template and cannot be changed or deleted; create a copy under another name`);
}

/** A template loaded from a file in <data_dir>/templates/: the file is its source, so the API and web interface only read it. */
export function fileManaged(name: string, file: string): ApiError {
  return new ApiError(
    'CONFLICT',
    `template "${name}" is managed by file ${file}: edit the file and reload (confvault template reload, or SIGHUP to confvault serve)`,
    {
      source_file: file,
    },
  );
}

function inUseError(id: number, devices: number): ApiError {
  return new ApiError('TEMPLATE_IN_USE', `template ${id} is used by ${devices} device${devices === 1 ? '' : 's'}; give them another template first`, {
    device_count: devices,
  });
}

function withNameCheck<T>(name: string, write: () => T): T {
  try {
    return write();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ApiError('TEMPLATE_NAME_EXISTS', `a template named "${name}" already exists`);
    throw err;
  }
}

/** A "try on device" run (web): who tried which template on which device, and how it went; never the output. */
export function recordTemplateTrial(
  db: DB,
  actor: Actor,
  templateId: number | null,
  trial: { device_id: number; device_name: string; ok: boolean; failure: string | null; duration_ms: number },
): void {
  db.transaction(() => {
    recordAudit(db, actor, { action: 'template.try', target: templateId === null ? 'template (unsaved)' : `template ${templateId}`, details: trial });
  }).immediate();
}

/** The template reads a door offers: the reader's own templates.view (TEMPLATE_OPS). */
export function listTemplatesFor(db: DB, reader: Principal, opts: Parameters<typeof listTemplates>[1]): { items: Template[]; total: number } {
  authorize(reader, TEMPLATE_OPS.list);
  return listTemplates(db, opts);
}

export function getTemplateFor(db: DB, reader: Principal, id: number): Template {
  authorize(reader, TEMPLATE_OPS.get);
  return getTemplate(db, id);
}
