// Bulk edit of the devices ticked on the list: choose the change, preview each device's old -> new (or why it is refused), apply.
import type { Hono } from 'hono';
import { DEVICE_OPS } from '../../features/policy';
import { listCredentials } from '../../features/credentials/credentials.service';
import { applyBulkEdit, previewBulkEdit, type BulkChange, type BulkField, type BulkItem } from '../../features/devices/devices-bulk.service';
import { ScheduleSchema } from '../../features/devices/shared.schemas';
import { listTemplates } from '../../features/templates/templates.service';
import { ApiError } from '../../errors';
import { actorOf } from '../../http/context';
import { Csrf, FieldError, FormError } from '../components/layout';
import { redirectWith, render } from '../render';
import { fieldErrors, need, type WebContext, type WebEnv } from '../web-context';
import { groupOptions, groupPaths } from './groups-options';

type Body = Record<string, string | File | (string | File)[]>;
const list = (v: unknown): string[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is string => typeof x === 'string');
const one = (b: Body, k: string): string => list(b[k])[0] ?? '';

/** The devices posted: the ticked boxes, or every device of the page when "select all on this page" was ticked (no script). */
function selectedIds(b: Body): number[] {
  const raw = one(b, 'all_on_page') === '1' ? list(b.page_device_id) : list(b.device_id);
  return [...new Set(raw.filter((v) => /^\d{1,15}$/.test(v)).map(Number))];
}

/** The change chosen in the form; a choice left on "keep" changes nothing. Errors by field. */
function parseChange(b: Body): { change: BulkChange; errors: Record<string, string> } {
  const change: BulkChange = {};
  const errors: Record<string, string> = {};
  const id = (k: string) => (/^\d{1,15}$/.test(one(b, k)) ? Number(one(b, k)) : undefined);
  if (one(b, 'group_id') === 'none') change.group_id = null;
  else change.group_id = id('group_id');
  change.credential_id = id('credential_id');
  change.template_id = id('template_id');
  const sched = one(b, 'schedule_mode');
  if (sched === 'inherit') change.schedule = null;
  if (sched === 'set') {
    const r = ScheduleSchema.safeParse(one(b, 'schedule'));
    if (r.success) change.schedule = r.data;
    else errors.schedule = r.error.issues[0]?.message ?? 'not a valid schedule';
  }
  const enabled = one(b, 'enabled');
  if (enabled === 'on' || enabled === 'off') change.enabled = enabled === 'on';
  const retired = one(b, 'retired');
  if (retired === 'retire' || retired === 'reactivate') change.retired = retired === 'retire';
  return { change, errors };
}

export function registerDeviceBulk(web: Hono<WebEnv>): void {
  // From the list: the choice form; with step=preview, what each device would become.
  web.post('/devices/bulk', need(DEVICE_OPS.bulkEdit), async (c) => {
    const b = await c.req.parseBody({ all: true });
    const ids = selectedIds(b);
    if (ids.length === 0) return redirectWith(c, '/devices', 'Select at least one device to edit.', 'error');
    if (one(b, 'step') !== 'preview') return bulkPage(c, b, ids, null);
    const { change, errors } = parseChange(b);
    if (Object.keys(errors).length) return bulkPage(c, b, ids, null, errors);
    try {
      return bulkPage(c, b, ids, previewBulkEdit(c.get('app').db, actorOf(c), ids, change));
    } catch (err) {
      const e = fieldErrors(err);
      if (e) return bulkPage(c, b, ids, null, e);
      throw err;
    }
  });
  web.post('/devices/bulk/apply', need(DEVICE_OPS.bulkEdit), async (c) => {
    const b = await c.req.parseBody({ all: true });
    const ids = selectedIds(b);
    const { change, errors } = parseChange(b);
    if (ids.length === 0 || Object.keys(errors).length) return redirectWith(c, '/devices', 'Nothing to apply: choose devices and a change.', 'error');
    let items: BulkItem[];
    try {
      items = applyBulkEdit(c.get('app').db, actorOf(c), ids, change);
    } catch (err) {
      if (err instanceof ApiError && err.status === 422) return redirectWith(c, '/devices', err.message, 'error');
      throw err;
    }
    return resultPage(c, items);
  });
}

/** Names for the ids a change shows (group path, credential and template names); an id the reader cannot name stays an id. */
function namer(c: WebContext) {
  const db = c.get('app').db;
  const groups = groupOptions(db, c.get('principal').scope);
  const paths = groupPaths(groups);
  const credentials = listCredentials(db, { page: 1, limit: 1000 }).items;
  const templates = listTemplates(db, { page: 1, limit: 1000 }).items;
  const creds = new Map(credentials.map((x) => [x.id, x.name]));
  const tpls = new Map(templates.map((x) => [x.id, x.name]));
  const show = (field: BulkField, v: unknown): string => {
    const id = typeof v === 'number' ? v : NaN;
    if (field === 'group_id') return v === null ? '(ungrouped)' : (paths.get(id) ?? `group ${id}`);
    if (field === 'credential_id') return creds.get(id) ?? `credential ${id}`;
    if (field === 'template_id') return tpls.get(id) ?? `template ${id}`;
    if (field === 'schedule') return typeof v === 'string' ? v : '(inherited)';
    if (field === 'enabled') return v ? 'enabled' : 'disabled';
    return v ? 'retired' : 'in service';
  };
  return { groups, credentials, templates, show };
}

const LABEL: Record<BulkField, string> = {
  group_id: 'Group',
  credential_id: 'Credential',
  template_id: 'Platform',
  schedule: 'Schedule',
  enabled: 'State',
  retired: 'Retired',
};

function bulkPage(c: WebContext, b: Body, ids: number[], preview: BulkItem[] | null, errors?: Record<string, string> | null) {
  const names = namer(c);
  const csrf = c.get('session').csrfToken;
  const v = (k: string) => one(b, k);
  const Opt = (p: { value: string; label: string; k: string }) => (
    <option value={p.value} selected={v(p.k) === p.value}>
      {p.label}
    </option>
  );
  const Choice = (p: { k: string; label: string; children: unknown }) => (
    <label>
      {p.label}
      <select name={p.k} disabled={preview !== null}>
        <option value="">— keep —</option>
        {p.children}
      </select>
    </label>
  );
  return render(
    c,
    { title: 'Edit devices', active: '/devices', status: errors ? 422 : 200 },
    <>
      <p class="crumbs">
        <a href="/devices">Devices</a> / Edit {ids.length} selected
      </p>
      <h1>Edit {ids.length} selected device(s)</h1>
      <FormError errors={errors} />
      <form method="post" action={preview ? '/devices/bulk/apply' : '/devices/bulk'} id="bulk-edit" class="card">
        <Csrf token={csrf} />
        {ids.map((id) => (
          <input type="hidden" name="device_id" value={String(id)} />
        ))}
        <input type="hidden" name="step" value="preview" />
        {preview
          ? ['group_id', 'credential_id', 'template_id', 'schedule_mode', 'schedule', 'enabled', 'retired'].map((k) => (
              <input type="hidden" name={k} value={v(k)} />
            ))
          : null}
        <div class="form-grid">
          <Choice k="group_id" label="Move to group">
            <Opt k="group_id" value="none" label="(ungrouped)" />
            {names.groups.map((g) => (
              <Opt k="group_id" value={String(g.id)} label={g.label} />
            ))}
          </Choice>
          <Choice k="credential_id" label="Credential">
            {names.credentials.map((x) => (
              <Opt k="credential_id" value={String(x.id)} label={x.name} />
            ))}
          </Choice>
          <Choice k="template_id" label="Platform (template)">
            {names.templates.map((t) => (
              <Opt k="template_id" value={String(t.id)} label={`${t.name} — ${t.vendor}`} />
            ))}
          </Choice>
          <Choice k="schedule_mode" label="Schedule">
            <Opt k="schedule_mode" value="inherit" label="inherit (group or appliance)" />
            <Opt k="schedule_mode" value="set" label="set to the expression below" />
          </Choice>
          <label>
            Schedule expression (with “set”)
            <input
              name="schedule"
              value={v('schedule')}
              placeholder="0 3 * * *"
              disabled={preview !== null}
              aria-describedby={errors?.schedule ? 'schedule-error' : undefined}
            />
            <FieldError errors={errors} name="schedule" />
          </label>
          <Choice k="enabled" label="Enabled">
            <Opt k="enabled" value="on" label="enable" />
            <Opt k="enabled" value="off" label="disable" />
          </Choice>
          <Choice k="retired" label="Retire">
            <Opt k="retired" value="retire" label="retire (keep history, stop backups)" />
            <Opt k="retired" value="reactivate" label="reactivate" />
          </Choice>
        </div>
        {preview ? <BulkTable items={preview} show={names.show} caption="What applying changes" /> : null}
        <div class="actions">
          {preview ? (
            <button type="submit" class="primary" id="bulk-apply" disabled={!preview.some((i) => i.changes.length > 0)}>
              Apply to {preview.filter((i) => i.changes.length > 0).length} device(s)
            </button>
          ) : (
            <button type="submit" class="primary" id="bulk-preview">
              Preview changes
            </button>
          )}
          <a href="/devices">Cancel</a>
        </div>
      </form>
    </>,
  );
}

function resultPage(c: WebContext, items: BulkItem[]) {
  const names = namer(c);
  const changed = items.filter((i) => i.changes.length > 0).length;
  const refused = items.filter((i) => i.refused).length;
  return render(
    c,
    { title: 'Devices edited', active: '/devices' },
    <>
      <p class="crumbs">
        <a href="/devices">Devices</a> / Edited
      </p>
      <h1>Devices edited</h1>
      <p class={`flash ${refused ? 'info' : 'ok'}`} role="status" id="bulk-summary">
        {changed} device(s) changed{refused ? `, ${refused} refused (left as they were)` : ''}.
      </p>
      <BulkTable items={items} show={names.show} caption="What was applied" />
      <p>
        <a href="/devices">Back to the device list</a>
      </p>
    </>,
  );
}

function BulkTable({ items, show, caption }: { items: BulkItem[]; show: (f: BulkField, v: unknown) => string; caption: string }) {
  return (
    <div class="table-wrap">
      <table class="list" id="bulk-items">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th>Device</th>
            <th>Change</th>
          </tr>
        </thead>
        <tbody>
          {items.map((i) => (
            <tr data-device={String(i.id)} class={i.refused ? 'failed-row' : undefined}>
              <td>{i.name ? <a href={`/devices/${i.id}`}>{i.name}</a> : `device ${i.id}`}</td>
              <td>
                {i.refused ? (
                  <span class="refused">
                    <span class="badge failed">refused</span> {i.refused}
                  </span>
                ) : i.changes.length === 0 ? (
                  <span class="muted">no change</span>
                ) : (
                  <ul class="plain">
                    {i.changes.map((ch) => (
                      <li>
                        {LABEL[ch.field]}: {show(ch.field, ch.before)} → {show(ch.field, ch.after)}
                      </li>
                    ))}
                  </ul>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
