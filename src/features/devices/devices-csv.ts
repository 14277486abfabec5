// Device inventory files without the database: the CSV columns (import and export), Oxidized router.db lines (models map to templates by the templates' aliases).
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { ApiError } from '../../errors';

/** The columns of an inventory CSV, in the order export writes them. */
export const CSV_COLUMNS = ['name', 'hostname', 'port', 'protocol', 'group', 'credential', 'template', 'enabled', 'description', 'schedule'] as const;
export type CsvColumn = (typeof CSV_COLUMNS)[number];

/** What each column holds and what an empty cell means (the import page, the CLI help and docs/web.md show it). */
export const CSV_COLUMN_DOCS: readonly { column: CsvColumn; empty: string; text: string }[] = [
  { column: 'name', empty: 'required', text: 'Unique device name, 1-128 characters (case-insensitive, as in the API)' },
  { column: 'hostname', empty: 'required', text: 'IPv4 or IPv6 address, or DNS name' },
  { column: 'port', empty: '22 for ssh, 23 for telnet', text: 'TCP port, 1-65535' },
  { column: 'protocol', empty: 'ssh', text: 'ssh or telnet' },
  { column: 'group', empty: 'ungrouped', text: 'Group name; its path (Parent/Child) when several groups share the name; or its id. The group must exist' },
  { column: 'credential', empty: 'the credential chosen for the import; else required', text: 'Credential name (or id)' },
  { column: 'template', empty: 'required', text: 'Template name, e.g. cisco-ios (or id)' },
  { column: 'enabled', empty: 'true', text: 'true or false (yes/no, 1/0)' },
  { column: 'description', empty: 'none', text: 'Free text, up to 2000 characters' },
  { column: 'schedule', empty: 'inherited from the group or the appliance', text: 'Cron expression such as 30 4 * * 1-5, or @daily' },
];

/**
 * Columns an import reads but export never writes: a device's login, imported as an encrypted credential
 * (devices-import-logins.ts). A router.db's username, password and enable fields land here too, when asked.
 */
export const LOGIN_COLUMNS = ['username', 'password', 'enable_secret'] as const;
export type LoginColumn = (typeof LOGIN_COLUMNS)[number];
export type RawLogin = Partial<Record<LoginColumn, string>>;

/** One device as text, as the file gave it (absent or empty: the column's default). */
export type RawDevice = Partial<Record<CsvColumn, string>>;

export interface RawRow {
  /** Line of the file the row starts on (the header is line 1), as a spreadsheet numbers it. */
  row: number;
  fields: RawDevice;
  /** router.db only: the Oxidized model, mapped to a template by the service. */
  model?: string;
  /** Why the line itself is unusable (more values than columns). */
  problem?: string;
  /** The row's login cells, when it has any (never exported, never printed). */
  login?: RawLogin;
  /** The credential the login became (set by the import before the row is checked). */
  credentialId?: number;
}

/** Bounds of one import: the whole file is validated (and applied) in one transaction. */
export const IMPORT_LIMITS = { rows: 5000, bytes: 2 * 1024 * 1024 } as const;

function fileError(message: string): ApiError {
  return ApiError.validation([{ field: 'file', message }], message);
}

export function checkImportSize(text: string): void {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > IMPORT_LIMITS.bytes) {
    throw new ApiError('PAYLOAD_TOO_LARGE', `the file has ${bytes} bytes; one import takes at most ${IMPORT_LIMITS.bytes} bytes (split it)`);
  }
}

function checkRowCount(n: number): void {
  if (n > IMPORT_LIMITS.rows) throw fileError(`the file has ${n} devices; one import takes at most ${IMPORT_LIMITS.rows} (split it)`);
}

/**
 * Rows of an inventory CSV: a header naming columns of CSV_COLUMNS (name and hostname at least, name alone for
 * `update`; any order, any case; unknown names refused,
 * so a misspelt column is not silently dropped), then one device a line. Comma-separated, or semicolon-separated
 * when the header has semicolons and no commas (spreadsheets in many locales save so); a UTF-8 BOM is skipped.
 */
export function parseDeviceCsv(text: string, opts: { update?: boolean } = {}): RawRow[] {
  checkImportSize(text);
  const firstLine = text.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0] ?? '';
  const delimiter = firstLine.includes(';') && !firstLine.includes(',') ? ';' : ',';
  let records: { record: string[]; info: { lines: number } }[];
  try {
    records = parse(text, { bom: true, delimiter, info: true, skip_empty_lines: true, relax_column_count: true }) as unknown as typeof records;
  } catch (err) {
    throw fileError(`not a readable CSV file: ${(err as Error).message}`);
  }
  if (records.length === 0) throw fileError('the file is empty: the first line must name the columns (name,hostname,...)');
  const header = records[0].record.map((h) => h.trim().toLowerCase());
  const known: readonly string[] = [...CSV_COLUMNS, ...LOGIN_COLUMNS];
  const unknown = header.filter((h) => !known.includes(h));
  if (unknown.length) throw fileError(`unknown column ${unknown.map((u) => `"${u}"`).join(', ')}; the columns are ${known.join(', ')}`);
  const repeated = header.filter((h, i) => header.indexOf(h) !== i);
  if (repeated.length) throw fileError(`column "${repeated[0]}" appears twice in the header`);
  // A file that only updates devices needs their names; one that creates them, their addresses too.
  const required: CsvColumn[] = opts.update ? ['name'] : ['name', 'hostname'];
  const missing = required.filter((c) => !header.includes(c));
  if (missing.length) throw fileError(`the header lacks the column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
  const columns = header as (CsvColumn | LoginColumn)[];
  const rows = records.slice(1);
  checkRowCount(rows.length);
  return rows.map(({ record, info }) => {
    const fields: RawDevice = {};
    const login: RawLogin = {};
    columns.forEach((col, i) => {
      // A login cell keeps its spaces: they may be part of a password.
      const cell = record[i] ?? '';
      const v = (LOGIN_COLUMNS as readonly string[]).includes(col) ? cell : fromCell(cell.trim());
      if (v === '') return;
      if (isLoginColumn(col)) login[col] = v;
      else fields[col] = v;
    });
    // A quoted value may span lines; csv-parse counts the line a record ends on.
    const inner = record.reduce((n, v) => n + (v.match(/\n/g)?.length ?? 0), 0);
    const extra = record.length > columns.length && record.slice(columns.length).some((v) => v.trim() !== '');
    const problem = extra ? `the row has ${record.length} values but the header names ${columns.length} columns` : undefined;
    return { row: info.lines - inner, fields, ...(problem ? { problem } : {}), ...(Object.keys(login).length ? { login } : {}) };
  });
}

function isLoginColumn(c: string): c is LoginColumn {
  return (LOGIN_COLUMNS as readonly string[]).includes(c);
}

/** The fields of an Oxidized router.db line this import understands (others are read past; the login only when asked). */
export const ROUTER_DB_FIELDS = ['name', 'ip', 'model', 'group', 'username', 'password', 'enable', 'skip'] as const;
export type RouterDbField = (typeof ROUTER_DB_FIELDS)[number];
export const DEFAULT_ROUTER_DB_FIELDS = 'name:model:group';

function layoutError(message: string): ApiError {
  return ApiError.validation([{ field: 'fields', message }], message);
}

/**
 * The layout of router.db lines, as Oxidized's `source.csv.map` gives it: field names in order, separated by
 * colons or commas (`name:ip:model:username:password:enable`). name and model are required.
 */
export function parseRouterDbFields(spec: string): RouterDbField[] {
  const names = spec
    .split(/[:,]/)
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const bad = names.filter((n) => !(ROUTER_DB_FIELDS as readonly string[]).includes(n));
  if (bad.length) throw layoutError(`unknown router.db field "${bad[0]}"; the fields are ${ROUTER_DB_FIELDS.join(', ')}`);
  const fields = names as RouterDbField[];
  const twice = fields.find((f, i) => f !== 'skip' && fields.indexOf(f) !== i);
  if (twice) throw layoutError(`router.db field "${twice}" is given twice`);
  if (!fields.includes('name') || !fields.includes('model')) {
    throw layoutError('router.db fields must include name and model');
  }
  return fields;
}

/**
 * Rows of an Oxidized router.db: one device a line, fields split on `:` as Oxidized splits them (on `;` in a line
 * that has one: RANCID 3's `name;type;state`, read with the layout name:model:skip); blank lines and
 * `#` comments skipped. The device is reached at `ip` when the layout has it, else at its name. Usernames,
 * passwords and enable secrets are read only with `logins` (to become credentials); else one credential serves all.
 */
export function parseRouterDb(text: string, layout: readonly RouterDbField[], opts: { logins?: boolean } = {}): RawRow[] {
  checkImportSize(text);
  const out: RawRow[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    // RANCID 3 separates with semicolons (name;type;state), Oxidized and RANCID 2 with colons.
    const parts = trimmed.split(trimmed.includes(';') ? ';' : ':').map((p) => p.trim());
    const at = (f: RouterDbField): string | undefined => {
      const idx = layout.indexOf(f);
      const v = idx < 0 ? undefined : parts[idx];
      return v === undefined || v === '' ? undefined : v;
    };
    const name = at('name');
    const fields: RawDevice = { name, hostname: at('ip') ?? name };
    const group = at('group');
    if (group !== undefined) fields.group = group;
    const row: RawRow = { row: i + 1, fields, model: at('model') ?? '' };
    if (opts.logins) {
      const login: RawLogin = { username: at('username'), password: at('password'), enable_secret: at('enable') };
      if (login.username !== undefined || login.password !== undefined || login.enable_secret !== undefined) row.login = login;
    }
    out.push(row);
  });
  checkRowCount(out.length);
  return out;
}

/**
 * A spreadsheet runs a cell starting with = + - @ (or a tab or CR) as a formula: export writes such a value with a
 * leading apostrophe, the spreadsheets' text marker, and import takes one off again, so a value survives the round trip.
 */
const FORMULA_START = /^[=+\-@\t\r']/;

function toCell(v: string): string {
  return FORMULA_START.test(v) ? `'${v}` : v;
}

function fromCell(v: string): string {
  return v.startsWith("'") && FORMULA_START.test(v.slice(1)) ? v.slice(1) : v;
}

/** CSV text of devices with the columns of CSV_COLUMNS, header first. */
export function devicesToCsv(rows: readonly RawDevice[]): string {
  return stringify(
    rows.map((r) => CSV_COLUMNS.map((c) => toCell(r[c] ?? ''))),
    { header: true, columns: [...CSV_COLUMNS] },
  );
}
