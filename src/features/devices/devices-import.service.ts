// Device import from CSV or an Oxidized router.db: a preview of every row, then all rows or only the valid ones, created by devices.service.
import type { DB } from '../../db/open';
import { ApiError, type FieldError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import { nameKey } from '../../lib/names';
import { recordAudit } from '../audit/audit.service';
import { heldDevices } from './device-holds.service';
import {
  CSV_COLUMNS,
  DEFAULT_ROUTER_DB_FIELDS,
  OXIDIZED_MODELS,
  parseDeviceCsv,
  parseRouterDb,
  parseRouterDbFields,
  type CsvColumn,
  type RawDevice,
  type RawRow,
} from './devices-csv';
import { loadInventoryRefs, type InventoryRefs } from './devices-import-refs';
import { DeviceCreateSchema } from './devices.schemas';
import { createDevice, type Device, type DeviceInput } from './devices.service';

export type ImportFormat = 'csv' | 'router.db';
export const IMPORT_FORMATS: readonly ImportFormat[] = ['csv', 'router.db'];
/** `all`: nothing is written unless every row is valid. `valid`: the valid rows are created, the others reported. */
export type ImportMode = 'all' | 'valid';
export const IMPORT_MODES: readonly ImportMode[] = ['all', 'valid'];

export interface ImportSource {
  format: ImportFormat;
  text: string;
  /**
   * The credential (name or id) of every device of a router.db (required: its username and password fields are
   * never read), and of the CSV rows whose credential cell is empty.
   */
  credential?: string;
  /** router.db only: the layout of its lines, as Oxidized's source map (default `name:model:group`). */
  fields?: string;
}

export interface ImportRowResult {
  /** Line of the file the row starts on. */
  row: number;
  name: string;
  /** Empty: the row is valid (and was, or would be, created). `field` is the file's column (or `model`, `row`). */
  errors: FieldError[];
  /** The device would be (or was) created held: the actor is not entitled to its credential. */
  held: boolean;
  /** The created device; null in a preview or when nothing was written. */
  deviceId: number | null;
}

export interface ImportReport {
  format: ImportFormat;
  /** null: a preview. */
  mode: ImportMode | null;
  rows: ImportRowResult[];
  valid: number;
  invalid: number;
  /** Devices written (0 in a preview, and in mode `all` when any row is invalid). */
  created: number;
}

/** Where the service's field names differ from the file's columns. */
const COLUMN_OF: Record<string, string> = { group_id: 'group', credential_id: 'credential', template_id: 'template' };

const TRUE = new Set(['true', 'yes', 'y', '1', 'on', 'enabled']);
const FALSE = new Set(['false', 'no', 'n', '0', 'off', 'disabled']);

/** Thrown inside the transaction to undo it: a preview, or mode `all` with an invalid row. */
class Rollback extends Error {}

/** Every row checked by the rules of device creation, in a transaction that is then undone: nothing is written. */
export function previewDeviceImport(db: DB, actor: Actor, source: ImportSource): ImportReport {
  return runImport(db, actor, source, null);
}

/**
 * Creates the devices of the file, each through devices.service createDevice (its permission, reference,
 * credential-coverage and hold rules, and its audit row), plus one `device.import` audit row. A device whose
 * name exists already is an invalid row: import creates devices, it never changes one.
 */
export function applyDeviceImport(db: DB, actor: Actor, source: ImportSource, mode: ImportMode): ImportReport {
  return runImport(db, actor, source, mode);
}

/**
 * One device from text fields as the CSV columns name them (group, credential and template by name or id), by
 * the same checks as an import row; for `confvault device add`. A 422 lists every problem in its message.
 */
export function addDeviceFromFields(db: DB, actor: Actor, fields: RawDevice): Device {
  authorize(actor, 'devices.create');
  const refs = loadInventoryRefs(db);
  const errors: FieldError[] = [];
  const input = toDeviceInput({ row: 1, fields }, refs, { defaultCredential: null, templates: modelTemplates(refs), seen: new Map() }, errors);
  const refuse = (list: FieldError[]) => ApiError.validation(list, `invalid device: ${list.map((e) => `${e.field}: ${e.message}`).join('; ')}`);
  if (!input) throw refuse(errors);
  try {
    return createDevice(db, actor, input);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'VALIDATION_ERROR') throw refuse(rowErrors(err));
    throw err;
  }
}

function runImport(db: DB, actor: Actor, source: ImportSource, mode: ImportMode | null): ImportReport {
  authorize(actor, 'devices.create');
  const raw = readSource(source);
  let report: ImportReport | undefined;
  try {
    db.transaction(() => {
      const refs = loadInventoryRefs(db);
      const defaultCredential = source.credential?.trim() ? refs.credential(source.credential) : null;
      if (defaultCredential && 'error' in defaultCredential) {
        throw ApiError.validation([{ field: 'credential', message: defaultCredential.error }], defaultCredential.error);
      }
      if (source.format === 'router.db' && !defaultCredential) {
        const message = 'a router.db import needs one credential for all its devices (its passwords are not imported)';
        throw ApiError.validation([{ field: 'credential', message }], message);
      }
      const templates = modelTemplates(refs);
      const seen = new Map<string, number>();
      const rows = raw.map((r) => importRow(db, actor, refs, r, { defaultCredential: defaultCredential?.id ?? null, templates, seen }));
      const held = heldDevices(
        db,
        rows.flatMap((r) => (r.deviceId === null ? [] : [r.deviceId])),
      );
      for (const r of rows) r.held = r.deviceId !== null && held.has(r.deviceId);
      const invalid = rows.filter((r) => r.errors.length > 0).length;
      const write = mode === 'valid' || (mode === 'all' && invalid === 0);
      report = { format: source.format, mode, rows, valid: rows.length - invalid, invalid, created: write ? rows.length - invalid : 0 };
      if (!write) throw new Rollback();
      if (report.created > 0) {
        recordAudit(db, actor, {
          action: 'device.import',
          target: 'devices',
          details: { format: source.format, mode, rows: rows.length, created: report.created, refused: invalid },
        });
      }
    }).immediate();
  } catch (err) {
    if (!(err instanceof Rollback)) throw err;
  }
  const out = report as ImportReport;
  // Ids of a transaction undone name nothing.
  if (out.created === 0) for (const r of out.rows) r.deviceId = null;
  return out;
}

function readSource(source: ImportSource): RawRow[] {
  if (source.format === 'router.db') return parseRouterDb(source.text, parseRouterDbFields(source.fields ?? DEFAULT_ROUTER_DB_FIELDS));
  return parseDeviceCsv(source.text);
}

/** Oxidized model → template id, for the models whose template this appliance has; template names map to themselves. */
function modelTemplates(refs: InventoryRefs): (model: string) => { id: number } | { error: string } {
  return (model) => {
    const m = model.trim().toLowerCase();
    if (m === '') return { error: 'the line has no model' };
    const mapped = OXIDIZED_MODELS[m];
    const target = mapped ?? m;
    const found = refs.template(target);
    if ('id' in found) return found;
    if (mapped) return { error: `model "${model}" maps to template ${mapped}, which this appliance does not have` };
    return { error: `model "${model}" is not one this import knows (${Object.keys(OXIDIZED_MODELS).join(', ')}) nor a template name` };
  };
}

interface RowContext {
  defaultCredential: number | null;
  templates: (model: string) => { id: number } | { error: string };
  /** Names met earlier in the file (name key → row). */
  seen: Map<string, number>;
}

function importRow(db: DB, actor: Actor, refs: InventoryRefs, raw: RawRow, ctx: RowContext): ImportRowResult {
  const name = raw.fields.name ?? '';
  const result: ImportRowResult = { row: raw.row, name, errors: [], held: false, deviceId: null };
  if (raw.problem) result.errors.push({ field: 'row', message: raw.problem });
  const input = toDeviceInput(raw, refs, ctx, result.errors);
  if (name !== '') {
    const earlier = ctx.seen.get(nameKey(name));
    if (earlier !== undefined) result.errors.push({ field: 'name', message: `the same name as row ${earlier} of this file` });
    else ctx.seen.set(nameKey(name), raw.row);
  }
  if (result.errors.length > 0 || !input) {
    result.errors.sort((a, b) => columnRank(a.field) - columnRank(b.field));
    return result;
  }
  try {
    // Inside the import's transaction, createDevice's own transaction is a savepoint: a refused row leaves nothing.
    result.deviceId = createDevice(db, actor, input).id;
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500 || err.code === 'PERMISSION_DENIED') throw err;
    result.errors.push(...rowErrors(err));
  }
  return result;
}

function rowErrors(err: ApiError): FieldError[] {
  const listed = err.details.errors as FieldError[] | undefined;
  if (err.code === 'VALIDATION_ERROR' && listed?.length) return listed.map((e) => ({ field: columnOf(e.field), message: e.message }));
  if (err.code === 'DEVICE_NAME_EXISTS') return [{ field: 'name', message: `${err.message} (import creates devices; it does not change one)` }];
  const field = typeof err.details.field === 'string' ? columnOf(err.details.field) : 'row';
  return [{ field, message: err.message }];
}

/** Errors are listed in the order of the file's columns (a router.db's model where the template would be). */
function columnRank(field: string): number {
  const i = (CSV_COLUMNS as readonly string[]).indexOf(field === 'model' ? 'template' : field);
  return i < 0 ? -1 : i;
}

function columnOf(field: string): string {
  const top = field.split('.')[0];
  return COLUMN_OF[top] ?? top;
}

/**
 * The row's text as the input of createDevice, checked by the API's own body schema (the same messages as the
 * API and the form). Empty cells take the API's defaults. Problems are added to `errors`; null when there are any.
 */
function toDeviceInput(raw: RawRow, refs: InventoryRefs, ctx: RowContext, errors: FieldError[]): DeviceInput | null {
  const f: RawDevice = raw.fields;
  const body: Record<string, unknown> = { name: f.name ?? '', hostname: f.hostname ?? '' };
  const fail = (field: CsvColumn | 'model', message: string) => errors.push({ field, message });
  if (f.port !== undefined) {
    if (/^\d{1,5}$/.test(f.port)) body.port = Number(f.port);
    else fail('port', 'must be a number from 1 to 65535 (empty: the protocol’s default)');
  }
  if (f.protocol !== undefined) body.protocol = f.protocol.toLowerCase();
  if (f.group !== undefined) {
    const g = refs.group(f.group);
    if ('id' in g) body.group_id = g.id;
    else fail('group', g.error);
  }
  if (f.credential !== undefined) {
    const cr = refs.credential(f.credential);
    if ('id' in cr) body.credential_id = cr.id;
    else fail('credential', cr.error);
  } else if (ctx.defaultCredential !== null) {
    body.credential_id = ctx.defaultCredential;
  } else {
    fail('credential', 'required: name a credential in this column, or choose one for the whole import');
  }
  if (raw.model !== undefined) {
    const t = ctx.templates(raw.model);
    if ('id' in t) body.template_id = t.id;
    else fail('model', t.error);
  } else if (f.template !== undefined) {
    const t = refs.template(f.template);
    if ('id' in t) body.template_id = t.id;
    else fail('template', t.error);
  } else {
    fail('template', 'required: the name of a template');
  }
  if (f.enabled !== undefined) {
    const v = f.enabled.toLowerCase();
    if (TRUE.has(v)) body.enabled = true;
    else if (FALSE.has(v)) body.enabled = false;
    else fail('enabled', 'must be true or false (yes/no, 1/0; empty: true)');
  }
  if (f.description !== undefined) body.description = f.description;
  if (f.schedule !== undefined) body.schedule = f.schedule;
  const parsed = DeviceCreateSchema.safeParse(body);
  if (!parsed.success) {
    const reported = new Set(errors.map((e) => (e.field === 'model' ? 'template' : e.field)));
    for (const issue of parsed.error.issues) {
      const field = columnOf(String(issue.path[0] ?? 'row'));
      // A reference already reported as unknown is also "required" to the schema: say it once.
      if (!reported.has(field)) errors.push({ field, message: issue.message });
    }
  }
  return errors.length === 0 && parsed.success ? parsed.data : null;
}
