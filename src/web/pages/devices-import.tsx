// Device import (CSV or Oxidized router.db: upload or paste, a preview with each row's errors, then all rows or only the valid ones) and the list's CSV export.
import { z } from '@hono/zod-openapi';
import type { Hono } from 'hono';
import { DEVICE_OPS } from '../../features/policy';
import { ApiError } from '../../errors';
import { exportDevicesCsv } from '../../features/devices/devices-csv.service';
import { CSV_COLUMN_DOCS, DEFAULT_ROUTER_DB_FIELDS, IMPORT_LIMITS } from '../../features/devices/devices-csv';
import { templateAliases } from '../../features/templates/templates.service';
import {
  applyDeviceImport,
  previewDeviceImport,
  type ImportMode,
  type ImportReport,
  type ImportSource,
  type RowDetection,
} from '../../features/devices/devices-import.service';
import { detectImportRows } from '../../engine/device-detect';
import { listCredentials } from '../../features/credentials/credentials.service';
import { usageInside } from '../../features/credentials/credentials.policy';
import { actorOf } from '../../http/context';
import { Csrf, FormError } from '../components/layout';
import { redirectWith, render } from '../render';
import { need, type WebContext, type WebEnv } from '../web-context';
import { deviceListQuery } from './device-list';

/** What the import form posts, kept as text so the preview can post it again. */
interface ImportForm {
  format: 'csv' | 'router.db';
  text: string;
  credential: string;
  fields: string;
  update: boolean;
  /** The preview's detections (rows with template or credential "auto"), posted back so that apply does not detect again. */
  detected: ReadonlyMap<number, RowDetection>;
}

const EMPTY_FORM: ImportForm = { format: 'csv', text: '', credential: '', fields: DEFAULT_ROUTER_DB_FIELDS, update: false, detected: new Map() };

/** The apply form's `detected` field: [line, detection] pairs as the preview wrote them. */
const DetectedSchema = z
  .array(
    z.tuple([
      z.number().int().positive(),
      z.union([z.object({ template: z.string(), credential: z.string(), reason: z.string().optional() }), z.object({ error: z.string() })]),
    ]),
  )
  .max(IMPORT_LIMITS.rows);

/** Registered before the device pages: `/devices/import` is not a device id. */
export function registerDeviceImport(web: Hono<WebEnv>): void {
  web.get('/devices/export.csv', need(DEVICE_OPS.export), (c) => {
    const { csv } = exportDevicesCsv(c.get('app').db, c.get('principal').scope, deviceListQuery(c).filter);
    c.header('Content-Type', 'text/csv; charset=utf-8');
    c.header('Content-Disposition', 'attachment; filename="devices.csv"');
    c.header('Cache-Control', 'no-store');
    return c.body(csv);
  });
  web.get('/devices/import', need(DEVICE_OPS.import), (c) => formPage(c, EMPTY_FORM));
  // The preview writes nothing, so it answers the POST itself; only applying redirects (Post/Redirect/Get).
  web.post('/devices/import/preview', need(DEVICE_OPS.import), async (c) => {
    const form = await readForm(c);
    if (form.text.trim() === '') return formPage(c, form, 'Choose a file or paste the device list.');
    try {
      // Rows with template or credential "auto" are detected here, at most a few at a time; apply uses what this found.
      const detected = await detectImportRows(c.get('app'), actorOf(c), sourceOf(form));
      const previewed = { ...form, detected };
      return await previewPage(c, previewed, previewDeviceImport(c.get('app').db, actorOf(c), sourceOf(previewed)));
    } catch (err) {
      if (err instanceof ApiError && err.status < 500 && err.code !== 'PERMISSION_DENIED') return formPage(c, form, err.message);
      throw err;
    }
  });
  web.post('/devices/import', need(DEVICE_OPS.import), async (c) => {
    const form = await readForm(c);
    const body = await c.req.parseBody();
    const mode: ImportMode = body.mode === 'valid' ? 'valid' : 'all';
    let report: ImportReport;
    try {
      report = applyDeviceImport(c.get('app').db, actorOf(c), sourceOf(form), mode);
    } catch (err) {
      if (err instanceof ApiError && err.status < 500 && err.code !== 'PERMISSION_DENIED') return formPage(c, form, err.message);
      throw err;
    }
    if (report.created + report.updated === 0) {
      const why =
        report.valid === 0
          ? 'No row is valid: nothing was written.'
          : `Nothing was written: ${report.invalid} row(s) have errors. Correct them, or create only the valid rows.`;
      return previewPage(c, form, report, why);
    }
    const held = report.rows.filter((r) => r.held).length;
    const left = report.invalid ? ` ${report.invalid} row(s) with errors were left out.` : '';
    const heldNote = held ? ` ${held} are held until a user entitled to their credential approves their address.` : '';
    const updated = report.updated ? ` ${report.updated} updated.` : '';
    return redirectWith(c, '/devices', `${report.created} device(s) imported.${updated}${left}${heldNote}`);
  });
}

async function readForm(c: WebContext): Promise<ImportForm> {
  const body = await c.req.parseBody();
  const str = (k: string) => (typeof body[k] === 'string' ? body[k] : '');
  const file = body.file;
  const uploaded = file instanceof File && file.size > 0 ? await file.text() : '';
  return {
    format: str('format') === 'router.db' ? 'router.db' : 'csv',
    text: uploaded || str('text'),
    credential: str('credential'),
    fields: str('fields').trim() || DEFAULT_ROUTER_DB_FIELDS,
    update: str('update') === 'on',
    detected: readDetected(str('detected')),
  };
}

/** The detections the preview posted back; anything unreadable counts as none (the "auto" rows are then refused). */
function readDetected(text: string): ReadonlyMap<number, RowDetection> {
  if (text === '') return new Map();
  try {
    const parsed = DetectedSchema.safeParse(JSON.parse(text));
    return new Map(parsed.success ? parsed.data : []);
  } catch {
    return new Map();
  }
}

function sourceOf(form: ImportForm): ImportSource {
  return {
    format: form.format,
    text: form.text,
    credential: form.credential || undefined,
    fields: form.format === 'router.db' ? form.fields : undefined,
    update: form.update,
    detected: form.detected,
  };
}

/** Credentials the user may attach to a device (others would hold or refuse every row), by name. */
function credentialChoices(c: WebContext): string[] {
  const scope = c.get('principal').scope;
  return listCredentials(c.get('app').db, { page: 1, limit: 1000 })
    .items.filter((cr) => usageInside(scope, cr.group_ids))
    .map((cr) => cr.name);
}

function formPage(c: WebContext, form: ImportForm, error?: string) {
  const credentials = credentialChoices(c);
  return render(
    c,
    { title: 'Import devices', active: '/devices', status: error ? 422 : 200 },
    <>
      <h1>Import devices</h1>
      <section class="card">
        <form method="post" action="/devices/import/preview" enctype="multipart/form-data" class="grid-form" id="import-form">
          <Csrf token={c.get('session').csrfToken} />
          <FormError errors={error ? { _form: error } : null} full />
          <fieldset>
            <legend>Format</legend>
            <label>
              <input type="radio" name="format" value="csv" checked={form.format === 'csv'} /> CSV with a header line (columns below)
            </label>
            <label>
              <input type="radio" name="format" value="router.db" checked={form.format === 'router.db'} /> Oxidized router.db
            </label>
          </fieldset>
          <label>
            File
            <input type="file" name="file" accept=".csv,.db,.txt,text/csv,text/plain" />
          </label>
          <label>
            Or paste the list
            <textarea name="text" rows={10} spellcheck={false}>
              {'\n' + form.text}
            </textarea>
          </label>
          <label>
            Credential for the import
            <select name="credential">
              <option value="">None: every CSV row names its own</option>
              {credentials.map((n) => (
                <option value={n} selected={n === form.credential}>
                  {n}
                </option>
              ))}
            </select>
            <span class="muted">
              Required for a router.db (its usernames and passwords are not imported); for a CSV, used where a row’s credential is empty.
            </span>
          </label>
          <label>
            router.db fields
            <input name="fields" value={form.fields} />
            <span class="muted">The order of a line’s fields, as Oxidized’s source map: name, ip, model, group, username, password, enable.</span>
          </label>
          <label class="check">
            <input type="checkbox" name="update" checked={form.update} /> Update existing devices: a row naming a device sets its non-empty cells (needs
            devices.update); otherwise such a row is an error
          </label>
          <button type="submit" class="primary">
            Preview
          </button>
        </form>
      </section>
      <ImportHelp aliases={templateAliases(c.get('app').db)} />
    </>,
  );
}

/** `aliases`: Oxidized models and RANCID types to the templates whose aliases name them. */
function ImportHelp({ aliases }: { aliases: ReadonlyMap<string, string> }) {
  return (
    <section class="card" id="import-help">
      <h2>CSV columns</h2>
      <p>
        The first line names the columns, in any order; only name and hostname are required. Groups, credentials and templates are given by name. At most{' '}
        {IMPORT_LIMITS.rows} rows per file. A name already in use is an error, unless “update existing devices” is chosen: then the row’s non-empty cells are
        set on that device. “Export CSV” on the device list writes this format.
      </p>
      <table class="list">
        <thead>
          <tr>
            <th>Column</th>
            <th>Holds</th>
            <th>When empty</th>
          </tr>
        </thead>
        <tbody>
          {CSV_COLUMN_DOCS.map((d) => (
            <tr>
              <td class="mono">{d.column}</td>
              <td>{d.text}</td>
              <td>{d.empty}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Oxidized router.db</h2>
      <p>
        One device a line, fields separated by colons; blank lines and # comments are skipped. Models become templates by the templates' aliases:{' '}
        {[...aliases].map(([m, t]) => `${m} → ${t}`).join(', ')}. The group must exist.
      </p>
    </section>
  );
}

function previewPage(c: WebContext, form: ImportForm, report: ImportReport, error?: string) {
  const bad = report.rows.filter((r) => r.errors.length > 0);
  const good = report.rows.filter((r) => r.errors.length === 0);
  const held = good.filter((r) => r.held).length;
  const updates = good.filter((r) => r.action === 'update').length;
  return render(
    c,
    { title: 'Import devices: preview', active: '/devices', status: error ? 422 : 200 },
    <>
      <h1>Import devices: preview</h1>
      <FormError errors={error ? { _form: error } : null} full />
      <p id="import-summary">
        {report.rows.length} row(s): {report.valid} valid, {report.invalid} with errors.
        {updates ? ` ${updates} would update an existing device.` : ''}
        {held ? ` ${held} would be held until a user entitled to their credential approves their address.` : ''} Nothing has been written yet.
      </p>
      {bad.length ? (
        <section class="card">
          <h2>Rows with errors</h2>
          <div class="table-wrap">
            <table class="list" id="import-errors">
              <thead>
                <tr>
                  <th>Row</th>
                  <th>Name</th>
                  <th>Column</th>
                  <th>Problem</th>
                </tr>
              </thead>
              <tbody>
                {bad.flatMap((r) =>
                  r.errors.map((e) => (
                    <tr>
                      <td>{r.row}</td>
                      <td>{r.name || '—'}</td>
                      <td class="mono">{e.field}</td>
                      <td>{e.message}</td>
                    </tr>
                  )),
                )}
              </tbody>
            </table>
          </div>
        </section>
      ) : null}
      <DetectedRows c={c} report={report} detected={form.detected} />
      {good.length ? (
        <details class="card">
          <summary>Valid rows ({good.length})</summary>
          <table class="list" id="import-valid">
            <tbody>
              {good.map((r) => (
                <tr>
                  <td>{r.row}</td>
                  <td>{r.name}</td>
                  <td>{r.action === 'create' ? 'new' : r.action}</td>
                  <td>{r.held ? <span class="badge failed">held</span> : null}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      ) : null}
      <section class="card">
        <form method="post" action="/devices/import" class="grid-form" id="import-apply">
          <Csrf token={c.get('session').csrfToken} />
          <input type="hidden" name="format" value={form.format} />
          <input type="hidden" name="credential" value={form.credential} />
          <input type="hidden" name="fields" value={form.fields} />
          {form.update ? <input type="hidden" name="update" value="on" /> : null}
          {form.detected.size ? <input type="hidden" name="detected" value={JSON.stringify([...form.detected])} /> : null}
          <textarea name="text" hidden>
            {'\n' + form.text}
          </textarea>
          <fieldset>
            <legend>Apply</legend>
            <label>
              <input type="radio" name="mode" value="all" checked={report.invalid === 0} /> All or nothing: create the devices only if every row is valid
            </label>
            <label>
              <input type="radio" name="mode" value="valid" checked={report.invalid > 0} /> Only the valid rows ({report.valid}); leave out the rows with errors
            </label>
          </fieldset>
          <div class="row">
            <button type="submit" class="primary" disabled={report.valid === 0}>
              Apply
            </button>
            <a href="/devices/import">Start again</a>
          </div>
        </form>
      </section>
    </>,
  );
}

/** Each row detection picked a platform for: the template, the credential that logged in, and why (rows it did not are errors above). */
function DetectedRows({ c, report, detected }: { c: WebContext; report: ImportReport; detected: ReadonlyMap<number, RowDetection> }) {
  const picked = report.rows.flatMap((r) => {
    const d = detected.get(r.row);
    return d && 'template' in d ? [{ row: r, d }] : [];
  });
  if (picked.length === 0) return null;
  const names = new Map(listCredentials(c.get('app').db, { page: 1, limit: 1000 }).items.map((cr) => [String(cr.id), cr.name]));
  return (
    <section class="card">
      <h2>Detected</h2>
      <p class="muted">Rows with template or credential “auto”: what detection found. Applying uses these; it does not detect again.</p>
      <div class="table-wrap">
        <table class="list" id="import-detected">
          <thead>
            <tr>
              <th>Row</th>
              <th>Name</th>
              <th>Template</th>
              <th>Credential</th>
              <th>Why</th>
            </tr>
          </thead>
          <tbody>
            {picked.map(({ row, d }) => (
              <tr>
                <td>{row.row}</td>
                <td>{row.name || '—'}</td>
                <td class="mono">{d.template}</td>
                <td>{names.get(d.credential) ?? d.credential}</td>
                <td>{d.reason ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
