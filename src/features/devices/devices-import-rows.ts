// One inventory row's cells as the input of device creation or update, checked by the API's own body schemas; errors named by the file's columns.
import type { z } from '@hono/zod-openapi';
import type { ApiError, FieldError } from '../../errors';
import { CSV_COLUMNS, type CsvColumn, type RawDevice, type RawRow } from './devices-csv';
import type { InventoryRefs, Resolved } from './devices-import-refs';
import { DeviceCreateSchema, DeviceUpdateSchema } from './devices.schemas';
import type { DeviceInput, DevicePatch } from './devices.service';

export interface RowRefs {
  refs: InventoryRefs;
  /** The import's credential, for rows with an empty credential cell (creation only). */
  defaultCredential: number | null;
  /** router.db models to templates. */
  templates: (model: string) => Resolved;
}

/** Where the service's field names differ from the file's columns. */
const COLUMN_OF: Record<string, string> = { group_id: 'group', credential_id: 'credential', template_id: 'template' };

const TRUE = new Set(['true', 'yes', 'y', '1', 'on', 'enabled']);
const FALSE = new Set(['false', 'no', 'n', '0', 'off', 'disabled']);

/** Oxidized model (or RANCID type) → template id, by the templates' aliases; template names map to themselves. */
export function modelTemplates(refs: InventoryRefs): (model: string) => Resolved {
  return (model) => {
    const m = model.trim().toLowerCase();
    if (m === '') return { error: 'the line has no model' };
    const aliases = refs.modelAliases();
    const found = refs.template(aliases.get(m) ?? m);
    if ('id' in found) return found;
    return { error: `model "${model}" is not one this import knows (${[...aliases.keys()].join(', ')}) nor a template name` };
  };
}

export function columnOf(field: string): string {
  const top = field.split('.')[0];
  return COLUMN_OF[top] ?? top;
}

/** Errors are listed in the order of the file's columns (a router.db's model where the template would be). */
export function sortRowErrors(errors: FieldError[]): void {
  const rank = (field: string) => (CSV_COLUMNS as readonly string[]).indexOf(field === 'model' ? 'template' : field);
  errors.sort((a, b) => rank(a.field) - rank(b.field));
}

/** A service's refusal of one row as errors named by the file's columns. */
export function rowErrors(err: ApiError): FieldError[] {
  const listed = err.details.errors as FieldError[] | undefined;
  if (err.code === 'VALIDATION_ERROR' && listed?.length) return listed.map((e) => ({ field: columnOf(e.field), message: e.message }));
  if (err.code === 'DEVICE_NAME_EXISTS') return [{ field: 'name', message: `${err.message} (importing with “update existing devices”, --update, changes it)` }];
  const field = typeof err.details.field === 'string' ? columnOf(err.details.field) : 'row';
  return [{ field, message: err.message }];
}

/** The body fields of the row's non-empty cells (references resolved to ids); problems go to `errors`. */
function cellsToBody(raw: RawRow, r: RowRefs, errors: FieldError[]): Record<string, unknown> {
  const f: RawDevice = raw.fields;
  const body: Record<string, unknown> = {};
  const fail = (field: CsvColumn | 'model', message: string) => errors.push({ field, message });
  const ref = (field: 'group_id' | 'credential_id' | 'template_id', column: CsvColumn | 'model', found: Resolved) => {
    if ('id' in found) body[field] = found.id;
    else fail(column, found.error);
  };
  if (f.name !== undefined) body.name = f.name;
  if (f.hostname !== undefined) body.hostname = f.hostname;
  if (f.port !== undefined) {
    if (/^\d{1,5}$/.test(f.port)) body.port = Number(f.port);
    else fail('port', 'must be a number from 1 to 65535 (empty: the protocol’s default)');
  }
  if (f.protocol !== undefined) body.protocol = f.protocol.toLowerCase();
  if (f.group !== undefined) ref('group_id', 'group', r.refs.group(f.group));
  if (raw.credentialId !== undefined) body.credential_id = raw.credentialId;
  else if (f.credential !== undefined) ref('credential_id', 'credential', r.refs.credential(f.credential));
  if (raw.model !== undefined) ref('template_id', 'model', r.templates(raw.model));
  else if (f.template !== undefined) ref('template_id', 'template', r.refs.template(f.template));
  if (f.enabled !== undefined) {
    const v = f.enabled.toLowerCase();
    if (TRUE.has(v)) body.enabled = true;
    else if (FALSE.has(v)) body.enabled = false;
    else fail('enabled', 'must be true or false (yes/no, 1/0; empty: true)');
  }
  if (f.description !== undefined) body.description = f.description;
  if (f.schedule !== undefined) body.schedule = f.schedule;
  return body;
}

/** The schema's verdict, its problems added to `errors` under the file's columns (a column already reported is not repeated). */
function check<S extends z.ZodType>(schema: S, body: Record<string, unknown>, errors: FieldError[]): z.infer<S> | null {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const reported = new Set(errors.map((e) => (e.field === 'model' ? 'template' : e.field)));
    for (const issue of parsed.error.issues) {
      const field = columnOf(String(issue.path[0] ?? 'row'));
      if (reported.has(field)) continue;
      reported.add(field);
      errors.push({ field, message: issue.message });
    }
  }
  return errors.length === 0 && parsed.success ? parsed.data : null;
}

/** The row as the input of createDevice: empty cells take the API's defaults. Null when there are problems (in `errors`). */
export function toDeviceInput(raw: RawRow, r: RowRefs, errors: FieldError[]): DeviceInput | null {
  const body: Record<string, unknown> = { name: '', hostname: '', ...cellsToBody(raw, r, errors) };
  const failed = (c: string) => errors.some((e) => e.field === c);
  if (body.credential_id === undefined && !failed('credential')) {
    if (r.defaultCredential !== null) body.credential_id = r.defaultCredential;
    else errors.push({ field: 'credential', message: 'required: name a credential in this column, or choose one for the whole import' });
  }
  if (body.template_id === undefined && !failed('template') && !failed('model'))
    errors.push({ field: 'template', message: 'required: the name of a template' });
  return check(DeviceCreateSchema, body, errors);
}

/** The row as a patch of updateDevice: the non-empty cells only (an empty cell leaves the field as it is). */
export function toDevicePatch(raw: RawRow, r: RowRefs, errors: FieldError[]): DevicePatch | null {
  return check(DeviceUpdateSchema, cellsToBody(raw, r, errors), errors);
}
