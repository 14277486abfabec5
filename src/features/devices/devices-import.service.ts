// Device import from CSV or an Oxidized router.db: a preview of every row, then all rows or only the valid ones, through devices.service.
import type { DB } from '../../db/open';
import { ApiError, type FieldError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import { DEVICE_OPS } from './devices.policy';
import { nameKey } from '../../lib/names';
import { recordAudit } from '../audit/audit.service';
import { heldDevices } from './device-holds.service';
import { DEFAULT_ROUTER_DB_FIELDS, parseDeviceCsv, parseRouterDb, parseRouterDbFields, type RawDevice, type RawRow } from './devices-csv';
import { loadInventoryRefs } from './devices-import-refs';
import { loginCredentials } from './devices-import-logins';
import { cloginrcLogins } from './cloginrc';
import type { SecretBox } from '../../identity/secrets';
import { modelTemplates, rowErrors, sortRowErrors, toDeviceInput, toDevicePatch, type RowRefs } from './devices-import-rows';
import { getDeviceIdByName } from './devices-import.store';
import { createDevice, getDevice, updateDevice, type Device, type DevicePatch } from './devices.service';

export type ImportFormat = 'csv' | 'router.db';
export const IMPORT_FORMATS: readonly ImportFormat[] = ['csv', 'router.db'];
/** `all`: nothing is written unless every row is valid. `valid`: the valid rows are written, the others reported. */
export type ImportMode = 'all' | 'valid';
export const IMPORT_MODES: readonly ImportMode[] = ['all', 'valid'];

export interface ImportSource {
  format: ImportFormat;
  text: string;
  /**
   * The credential (name or id) of every new device of a router.db (required: its username and password fields
   * are never read), and of new devices whose CSV credential cell is empty.
   */
  credential?: string;
  /** router.db only: the layout of its lines, as Oxidized's source map (default `name:model:group`). */
  fields?: string;
  /**
   * Encrypts the file's logins into credentials (devices-import-logins.ts): a CSV's username, password and
   * enable_secret cells, and a router.db's username, password and enable fields when `logins` is set too.
   * Without it a file with login cells is refused: secrets are taken only where the caller asked for them.
   */
  secrets?: SecretBox;
  /** router.db only: read each line's username, password and enable fields (needs `secrets`); else they are never read. */
  logins?: boolean;
  /** router.db with `logins`: RANCID's .cloginrc, the login (and method) of each line that carries none itself. */
  cloginrc?: string;
  /**
   * A row naming an existing device updates it (needs devices.update, the device in the caller's scope): the
   * row's non-empty cells are set, empty ones left as they are. Without it such a row is refused.
   */
  update?: boolean;
  /**
   * Rows whose template (a router.db's model) or credential is "auto" (or every row, with `credential` "auto"), as
   * detection found them beforehand (rowsToDetect, then the engine), by line: the template and credential picked, or
   * why none was (the row is then refused with that reason).
   */
  detected?: ReadonlyMap<number, RowDetection>;
}

/** One row's detection: the template (name) and credential (id) picked and why, or why nothing was. */
export type RowDetection = { template: string; credential: string; reason?: string } | { error: string };

const isAuto = (v: string | undefined) => v?.trim().toLowerCase() === 'auto';

/** The rows detection must visit before `source` is imported: a template, model or credential "auto" (or the file's credential "auto"). */
export function rowsToDetect(source: ImportSource): RawRow[] {
  const all = isAuto(source.credential);
  return readSource(source).filter((r) => all || isAuto(r.model) || isAuto(r.fields.template) || isAuto(r.fields.credential));
}

/** Puts each row's detection in place of its "auto" cells; a row nothing was detected for says why. */
function applyDetections(rows: RawRow[], source: ImportSource): void {
  for (const r of rows) {
    const d = source.detected?.get(r.row);
    if (!d) continue;
    if ('error' in d) {
      r.problem ??= `detection: ${d.error}`;
      continue;
    }
    if (isAuto(r.model)) r.model = d.template;
    if (isAuto(r.fields.template)) r.fields.template = d.template;
    if (isAuto(r.fields.credential) || (isAuto(source.credential) && !r.fields.credential?.trim())) r.fields.credential = d.credential;
  }
}

export type ImportAction = 'create' | 'update' | 'unchanged';

export interface ImportRowResult {
  /** Line of the file the row starts on. */
  row: number;
  name: string;
  /** Empty: the row is valid. `field` is the file's column (or `model`, or `row` for the line itself). */
  errors: FieldError[];
  /** What the row does (or would do); null when it has errors. */
  action: ImportAction | null;
  /** The device is (or would be) held: the caller is not entitled to its credential. */
  held: boolean;
  /** The device created or updated; null in a preview or when nothing was written. */
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
  updated: number;
}

/** Thrown inside the transaction to undo it: a preview, or mode `all` with an invalid row. */
class Rollback extends Error {}

/** Every row checked by the rules of device creation (and update), in a transaction that is then undone: nothing is written. */
export function previewDeviceImport(db: DB, actor: Actor, source: ImportSource): ImportReport {
  return runImport(db, actor, source, null);
}

/**
 * Writes the devices of the file, each through devices.service createDevice (its permission, reference,
 * credential-coverage and hold rules, its audit row) or, with `update`, updateDevice; plus one `device.import`
 * audit row. A name already in use (or used twice in the file) is an invalid row unless `update` is chosen.
 */
export function applyDeviceImport(db: DB, actor: Actor, source: ImportSource, mode: ImportMode): ImportReport {
  return runImport(db, actor, source, mode);
}

/**
 * One device from text fields as the CSV columns name them (group, credential and template by name or id), by
 * the same checks as an import row; for `confvault device add`. A 422 lists every problem in its message.
 */
export function addDeviceFromFields(db: DB, actor: Actor, fields: RawDevice): Device {
  authorize(actor, DEVICE_OPS.create);
  const refs = loadInventoryRefs(db);
  const errors: FieldError[] = [];
  const input = toDeviceInput({ row: 1, fields }, { refs, defaultCredential: null, templates: modelTemplates(refs) }, errors);
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
  authorize(actor, DEVICE_OPS.import);
  if (source.update) authorize(actor, DEVICE_OPS.update);
  const raw = readSource(source);
  applyDetections(raw, source);
  let report: ImportReport | undefined;
  try {
    db.transaction(() => {
      const refs = loadInventoryRefs(db);
      const defaultCredential = source.credential?.trim() && !isAuto(source.credential) ? refs.credential(source.credential) : null;
      if (defaultCredential && 'error' in defaultCredential) {
        throw ApiError.validation([{ field: 'credential', message: defaultCredential.error }], defaultCredential.error);
      }
      if (source.format === 'router.db' && !defaultCredential && !source.logins && !isAuto(source.credential)) {
        const message = 'a router.db import needs one credential for all its devices (or its logins imported, --logins)';
        throw ApiError.validation([{ field: 'credential', message }], message);
      }
      const ctx: RowContext = {
        refs,
        defaultCredential: defaultCredential?.id ?? null,
        templates: modelTemplates(refs),
        seen: new Map(),
        update: !!source.update,
        login: source.secrets ? loginCredentials(db, actor, source.secrets, refs) : null,
      };
      const rows = raw.map((r) => importRow(db, actor, r, ctx));
      const held = heldDevices(
        db,
        rows.flatMap((r) => (r.deviceId === null ? [] : [r.deviceId])),
      );
      for (const r of rows) r.held = r.deviceId !== null && held.has(r.deviceId);
      const invalid = rows.filter((r) => r.errors.length > 0).length;
      const write = mode === 'valid' || (mode === 'all' && invalid === 0);
      const count = (a: ImportAction) => (write ? rows.filter((r) => r.action === a).length : 0);
      report = { format: source.format, mode, rows, valid: rows.length - invalid, invalid, created: count('create'), updated: count('update') };
      if (!write) throw new Rollback();
      if (report.created + report.updated > 0) {
        recordAudit(db, actor, {
          action: 'device.import',
          target: 'devices',
          details: { format: source.format, mode, rows: rows.length, created: report.created, updated: report.updated, refused: invalid },
        });
      }
    }).immediate();
  } catch (err) {
    if (!(err instanceof Rollback)) throw err;
  }
  const out = report as ImportReport;
  // Ids of a transaction undone name nothing.
  if (out.created + out.updated === 0) for (const r of out.rows) r.deviceId = null;
  return out;
}

function readSource(source: ImportSource): RawRow[] {
  if (source.logins && !source.secrets)
    throw ApiError.validation([{ field: 'logins', message: 'logins are imported through the CLI' }], 'logins are imported through the CLI');
  const rows =
    source.format === 'router.db'
      ? parseRouterDb(source.text, parseRouterDbFields(source.fields ?? DEFAULT_ROUTER_DB_FIELDS), { logins: source.logins })
      : parseDeviceCsv(source.text, { update: source.update });
  if (source.logins && source.cloginrc !== undefined) {
    const loginOf = cloginrcLogins(source.cloginrc);
    for (const r of rows) {
      const found = r.login || !r.fields.name ? undefined : loginOf(r.fields.name);
      if (!found) continue;
      const { protocol, ...login } = found;
      r.login = login;
      if (protocol && r.fields.protocol === undefined) r.fields.protocol = protocol;
    }
  }
  if (!source.secrets && rows.some((r) => r.login)) {
    const message = 'the file has username, password or enable_secret cells: logins are imported with confvault device import (encrypted as credentials)';
    throw ApiError.validation([{ field: 'file', message }], message);
  }
  return rows;
}

interface RowContext extends RowRefs {
  /** Names met earlier in the file (name key → row). */
  seen: Map<string, number>;
  update: boolean;
  /** The credential of a row's login (null: the source has no secret box). */
  login: ReturnType<typeof loginCredentials> | null;
}

function importRow(db: DB, actor: Actor, raw: RawRow, ctx: RowContext): ImportRowResult {
  const name = raw.fields.name ?? '';
  const result: ImportRowResult = { row: raw.row, name, errors: [], action: null, held: false, deviceId: null };
  if (raw.problem) result.errors.push({ field: 'row', message: raw.problem });
  if (name !== '') {
    const earlier = ctx.seen.get(nameKey(name));
    if (earlier !== undefined) result.errors.push({ field: 'name', message: `the same name as row ${earlier} of this file` });
    else ctx.seen.set(nameKey(name), raw.row);
  }
  const existing = ctx.update && name !== '' ? getDeviceIdByName(db, name) : undefined;
  // A savepoint per row with a login: a credential made for a row that is then refused does not stay behind.
  const attempt = db.transaction(() => {
    const made = writeRow(db, actor, raw, existing, ctx, result);
    if (made !== null && result.errors.length > 0) throw new RowUndone(made);
  });
  try {
    attempt();
  } catch (err) {
    if (!(err instanceof RowUndone)) throw err;
    ctx.login?.forget(err.credentialId);
  }
  sortRowErrors(result.errors);
  return result;
}

class RowUndone extends Error {
  constructor(readonly credentialId: number) {
    super('row undone');
  }
}

/** The row written (its login's credential first); the id of a credential it created, else null. Refusals land in `result`. */
function writeRow(db: DB, actor: Actor, raw: RawRow, existing: number | undefined, ctx: RowContext, result: ImportRowResult): number | null {
  let made: number | null = null;
  try {
    if (raw.login && ctx.login && result.errors.length === 0) {
      const credential = ctx.login.resolve({ ...raw, login: raw.login });
      if ('error' in credential) result.errors.push({ field: 'credential', message: credential.error });
      else {
        raw.credentialId = credential.id;
        if (credential.created) made = credential.id;
      }
    }
    // Inside the import's transaction, the service's own transaction is a savepoint: a refused row leaves nothing.
    if (existing !== undefined) updateRow(db, actor, raw, existing, ctx, result);
    else {
      const input = toDeviceInput(raw, ctx, result.errors);
      if (input && result.errors.length === 0) {
        result.deviceId = createDevice(db, actor, input).id;
        result.action = 'create';
      }
    }
  } catch (err) {
    // The permissions were checked for the whole import; what is left is about this row (a device out of scope).
    if (!(err instanceof ApiError) || err.status >= 500 || (err.code === 'PERMISSION_DENIED' && existing === undefined)) throw err;
    result.errors.push(...rowErrors(err));
  }
  return made;
}

/** The row's non-empty cells that differ from the device, set by updateDevice; nothing when none differs. */
function updateRow(db: DB, actor: Actor, raw: RawRow, id: number, ctx: RowContext, result: ImportRowResult): void {
  const current = getDevice(db, actor.principal.scope, id);
  const patch = toDevicePatch(raw, ctx, result.errors);
  if (!patch || result.errors.length > 0) return;
  const changed: DevicePatch = {};
  for (const [k, v] of Object.entries(patch) as [keyof DevicePatch, DevicePatch[keyof DevicePatch]][]) {
    if (k !== 'accept_host_key_change' && v !== undefined && v !== current[k]) Object.assign(changed, { [k]: v });
  }
  result.deviceId = id;
  if (Object.keys(changed).length === 0) {
    result.action = 'unchanged';
    return;
  }
  updateDevice(db, actor, id, changed);
  result.action = 'update';
}
