// Devices: the scoped list (search, group, platform, reachability, stale and failed filters, sorting, paging), create, edit, delete.
import type { Hono } from 'hono';
import { staleBefore, staleDevices } from '../../features/notifications/notification-events.service';
import { ApiError } from '../../errors';
import {
  acceptHostKey,
  createDevice,
  deleteDevice,
  getDevice,
  getHostKeyChange,
  listDevices,
  listPlatforms,
  updateDevice,
  DEVICE_SORTS,
  type DeviceFilter,
  type DeviceOrder,
} from '../../features/devices/devices.service';
import { approveDeviceHold, getDeviceHoldView, heldDevices } from '../../features/devices/device-holds.service';
import { actorOf } from '../../http/context';
import { DeviceHold } from '../components/device-hold';
import { Csrf, Pager } from '../components/layout';
import { redirectWith, render } from '../render';
import { can, fieldErrors, formFields, formatTime, intParam, intQuery, need, type WebContext, type WebEnv } from '../web-context';
import { DeviceForm, parseDeviceForm } from './device-form';
import { groupOptions, groupPaths } from './groups-options';

const PAGE_SIZE = 50;
const REACH = ['reachable', 'unreachable', 'unknown'] as const;

export function registerDevices(web: Hono<WebEnv>): void {
  web.get('/devices', need('devices.view'), (c) => listPage(c));
  web.get('/devices/new', need('devices.create'), (c) => formPage(c, null));
  web.post('/devices', need('devices.create'), async (c) => {
    const f = await formFields(c);
    const parsed = parseDeviceForm(f);
    if (!parsed.ok) return formPage(c, null, f, parsed.errors);
    try {
      const d = createDevice(c.get('app').db, actorOf(c), parsed.input);
      return redirectWith(c, `/devices/${d.id}`, `Device ${d.name} created.${heldNote(c, d.id)}`);
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors)
        return formPage(
          c,
          null,
          f,
          err instanceof ApiError && typeof err.details.field === 'string' && err.details.field ? { [err.details.field]: err.message } : errors,
        );
      throw err;
    }
  });
  web.get('/devices/:id/edit', need('devices.view', 'devices.update'), (c) => formPage(c, intParam(c, 'id')));
  web.post('/devices/:id/edit', need('devices.view', 'devices.update'), async (c) => {
    const id = intParam(c, 'id');
    const f = await formFields(c);
    const db = c.get('app').db;
    getDevice(db, c.get('principal').scope, id); // 404/403 before anything is said about the form
    const parsed = parseDeviceForm(f);
    if (!parsed.ok) return formPage(c, id, f, parsed.errors);
    try {
      // The form shows every field, so an empty port means "the protocol's default", as on creation. A host key
      // is accepted by its own button (one fingerprint), never by saving the form.
      const { accept_host_key_change: _ignored, ...input } = parsed.input;
      const d = updateDevice(db, actorOf(c), id, { ...input, port: input.port ?? (input.protocol === 'telnet' ? 23 : 22) });
      return redirectWith(c, `/devices/${id}`, `Device ${d.name} saved.${heldNote(c, id)}`);
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors)
        return formPage(
          c,
          id,
          f,
          err instanceof ApiError && typeof err.details.field === 'string' && err.details.field ? { [err.details.field]: err.message } : errors,
        );
      throw err;
    }
  });
  web.post('/devices/:id/delete', need('devices.view', 'devices.delete'), (c) => {
    const id = intParam(c, 'id');
    const db = c.get('app').db;
    const d = getDevice(db, c.get('principal').scope, id);
    deleteDevice(db, actorOf(c), id);
    return redirectWith(c, '/devices', `Device ${d.name} and its backup records deleted.`);
  });
  // The fingerprint posted is the one the page showed: a device offering another key since is refused (409).
  web.post('/devices/:id/host-key/accept', need('devices.view', 'devices.update'), async (c) => {
    const id = intParam(c, 'id');
    const f = await formFields(c);
    try {
      acceptHostKey(c.get('app').db, actorOf(c), id, f.fingerprint ?? '');
    } catch (err) {
      if (err instanceof ApiError && err.status < 500 && err.status !== 404) return redirectWith(c, `/devices/${id}/edit`, err.message, 'error');
      throw err;
    }
    return redirectWith(c, `/devices/${id}`, `Host key ${f.fingerprint} accepted for the next backup.${heldNote(c, id)}`);
  });
  // The fields posted are the address the page showed: a device changed since is refused (409), nothing approved.
  web.post('/devices/:id/hold/approve', need('devices.view', 'devices.update'), async (c) => {
    const id = intParam(c, 'id');
    const f = await formFields(c);
    const shown = { hostname: f.hostname ?? '', port: Number(f.port), protocol: f.protocol ?? '', credential_id: Number(f.credential_id) };
    try {
      approveDeviceHold(c.get('app').db, actorOf(c), id, shown);
    } catch (err) {
      if (err instanceof ApiError && err.status < 500 && err.status !== 404) return redirectWith(c, `/devices/${id}`, err.message, 'error');
      throw err;
    }
    return redirectWith(c, `/devices/${id}`, `Address ${shown.protocol}://${shown.hostname}:${shown.port} approved: the next backup logs in.`);
  });
}

/** The flash text's tail when the change left the device held. */
function heldNote(c: WebContext, id: number): string {
  const view = getDeviceHoldView(c.get('app').db, actorOf(c), id);
  return view ? ` Its backups are held until a user entitled to credential ${view.hold.credential_name ?? view.hold.credential_id} approves its address.` : '';
}

/** The list's filters from the query string: the list and its CSV export (devices-import.tsx) read the same ones. */
export function deviceListQuery(c: WebContext) {
  const q = (c.req.query('q') ?? '').trim().slice(0, 128);
  const groupId = intQuery(c, 'group_id', 0);
  const reach = REACH.find((r) => r === c.req.query('reachability'));
  const staleOnly = c.req.query('stale') === '1';
  const failedOnly = c.req.query('failed') === '1';
  const templateId = intQuery(c, 'template_id', 0);
  const order: DeviceOrder = { sort: DEVICE_SORTS.find((s) => s === c.req.query('sort')) ?? 'name', desc: c.req.query('dir') === 'desc' };
  const staleHours = c.get('app').config.backup.stale_after_hours;
  const filter: DeviceFilter = {
    q: q || undefined,
    group_id: groupId || undefined,
    reachability: reach,
    stale_before: staleOnly ? staleBefore(staleHours) : undefined,
    template_id: templateId || undefined,
    last_failed: failedOnly || undefined,
  };
  const params = {
    q,
    group_id: groupId ? String(groupId) : undefined,
    template_id: templateId ? String(templateId) : undefined,
    reachability: reach,
    stale: staleOnly ? '1' : undefined,
    failed: failedOnly ? '1' : undefined,
  };
  return { q, groupId, reach, staleOnly, failedOnly, templateId, order, staleHours, filter, params };
}

function listPage(c: WebContext) {
  const db = c.get('app').db;
  const p = c.get('principal');
  const tz = c.get('timezone');
  const page = intQuery(c, 'page', 1, 100_000);
  const { q, groupId, reach, staleOnly, failedOnly, templateId, order, staleHours, filter, params } = deviceListQuery(c);
  const exportQuery = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => Boolean(e[1]))).toString();
  const { items, total } = listDevices(db, p.scope, filter, page, PAGE_SIZE, order);
  const platforms = listPlatforms(db);
  const platformNames = new Map(platforms.map((t) => [t.id, t.name]));
  const sortParams = { ...params, sort: order.sort === 'name' ? undefined : order.sort, dir: order.desc ? 'desc' : undefined };
  const bulk = can(c, 'backups.run');
  const here = `/devices${new URL(c.req.url).search}`;
  const held = heldDevices(
    db,
    items.map((d) => d.id),
  );
  const stale = staleDevices(
    db,
    items.map((d) => d.id),
    staleHours,
  );
  const groups = groupOptions(db, p.scope);
  const paths = groupPaths(groups);
  return render(
    c,
    { title: 'Devices', active: '/devices' },
    <>
      <div class="title-row">
        <h1>Devices</h1>
        <div class="row">
          <a class="button" href={`/devices/export.csv${exportQuery ? `?${exportQuery}` : ''}`} id="export-csv">
            Export CSV
          </a>
          {can(c, 'devices.create') ? (
            <a class="button" href="/devices/import">
              Import
            </a>
          ) : null}
          {can(c, 'devices.create') ? (
            <a class="button primary" href="/devices/new">
              Add device
            </a>
          ) : null}
        </div>
      </div>
      <form method="get" action="/devices" class="row filters" role="search">
        <label>
          Search
          <input name="q" type="search" value={q} placeholder="name or address" />
        </label>
        <label>
          Group
          <select name="group_id">
            <option value="">All groups</option>
            {groups.map((g) => (
              <option value={String(g.id)} selected={g.id === groupId}>
                {g.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Platform
          <select name="template_id">
            <option value="">All platforms</option>
            {platforms.map((t) => (
              <option value={String(t.id)} selected={t.id === templateId}>
                {t.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Reachability
          <select name="reachability">
            <option value="">Any</option>
            {REACH.map((r) => (
              <option value={r} selected={r === reach}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" name="stale" value="1" checked={staleOnly} /> Stale only (no good backup for {staleHours} h)
        </label>
        <label>
          <input type="checkbox" name="failed" value="1" checked={failedOnly} /> Last backup failed
        </label>
        {order.sort !== 'name' || order.desc ? (
          <>
            <input type="hidden" name="sort" value={order.sort} />
            <input type="hidden" name="dir" value={order.desc ? 'desc' : 'asc'} />
          </>
        ) : null}
        <button type="submit">Filter</button>
      </form>
      {items.length === 0 ? (
        <p class="empty">No devices{q || groupId || templateId || reach || staleOnly || failedOnly ? ' match these filters' : ' yet'}.</p>
      ) : (
        <form method="post" action="/jobs" id="bulk-backup">
          {bulk ? <BulkActions c={c} groupId={groupId} groupLabel={groupId ? paths.get(groupId) : undefined} back={here} /> : null}
          <div class="table-wrap">
            <table class="list" id="devices">
              <thead>
                <tr>
                  {bulk ? <th>Select</th> : null}
                  <SortHeader label="Name" sort="name" order={order} params={params} />
                  <SortHeader label="Address" sort="address" order={order} params={params} />
                  <SortHeader label="Group" sort="group" order={order} params={params} />
                  <SortHeader label="Platform" sort="platform" order={order} params={params} />
                  <th>Reachability</th>
                  <SortHeader label="Last backup" sort="last_backup" order={order} params={params} />
                </tr>
              </thead>
              <tbody>
                {items.map((d) => (
                  <tr>
                    {bulk ? (
                      <td>
                        <input type="checkbox" name="device_id" value={String(d.id)} aria-label={`Select ${d.name}`} />
                      </td>
                    ) : null}
                    <td>
                      <a href={`/devices/${d.id}`}>{d.name}</a>
                      {d.enabled ? null : <span class="badge muted">disabled</span>}
                      {held.has(d.id) ? (
                        <span class="badge failed" title="backups held until an entitled user approves the address">
                          held
                        </span>
                      ) : null}
                      {stale.has(d.id) ? (
                        <span class="badge expired stale" title={`no successful backup for more than ${staleHours} h`}>
                          stale
                        </span>
                      ) : null}
                    </td>
                    <td class="mono">
                      {`${d.hostname}:${d.port}`} <span class="muted">{d.protocol}</span>
                    </td>
                    <td>{d.group_id ? (paths.get(d.group_id) ?? d.group_id) : '—'}</td>
                    <td>{platformNames.get(d.template_id) ?? d.template_id}</td>
                    <td>
                      <span class={`badge ${d.reachability.status}`} title={d.reachability.error ?? undefined}>
                        {d.reachability.status}
                      </span>
                    </td>
                    <td>
                      {d.last_backup ? (
                        <>
                          <span class={`badge ${d.last_backup.success ? 'ok' : 'failed'}`}>{d.last_backup.success ? 'ok' : 'failed'}</span>{' '}
                          {formatTime(d.last_backup.started_at, tz)}
                        </>
                      ) : (
                        'never'
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </form>
      )}
      <Pager base="/devices" params={sortParams} page={page} limit={PAGE_SIZE} total={total} />
    </>,
  );
}

/** A sortable column's header: a link to the list sorted by it (again: the other way), its state said to screen readers. */
function SortHeader(props: { label: string; sort: DeviceOrder['sort']; order: DeviceOrder; params: Record<string, string | undefined> }) {
  const { label, sort, order } = props;
  const active = order.sort === sort;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(props.params)) if (v) q.set(k, v);
  if (sort !== 'name') q.set('sort', sort);
  if (active && !order.desc) q.set('dir', 'desc');
  return (
    <th aria-sort={active ? (order.desc ? 'descending' : 'ascending') : undefined}>
      <a class="sort" href={`/devices?${q}`}>
        {label}
        {active ? (order.desc ? ' ▼' : ' ▲') : ''}
      </a>
    </th>
  );
}

/** Bulk backups from the list: the devices ticked, the group filtered on (with its subgroups), or every device in scope; one job each. */
function BulkActions({ c, groupId, groupLabel, back }: { c: WebContext; groupId: number; groupLabel?: string; back: string }) {
  return (
    <div class="actions bulk-actions">
      <Csrf token={c.get('session').csrfToken} />
      <input type="hidden" name="back" value={back} />
      <button type="submit" name="selection" value="devices">
        Back up selected
      </button>
      {groupId ? (
        <>
          <input type="hidden" name="group_id" value={String(groupId)} />
          <button type="submit" name="selection" value="group" title={`every enabled device of ${groupLabel ?? 'this group'} and its subgroups`}>
            Back up this group
          </button>
        </>
      ) : null}
      <button type="submit" name="selection" value="all" title="every enabled device you may see">
        Back up all
      </button>
      <a href="/jobs">Jobs</a>
    </div>
  );
}

function formPage(c: WebContext, id: number | null, values?: Record<string, string>, errors?: Record<string, string> | null) {
  const db = c.get('app').db;
  const scope = c.get('principal').scope;
  const device = id === null ? undefined : getDevice(db, scope, id);
  return render(
    c,
    { title: device ? `Edit ${device.name}` : 'Add device', active: '/devices', status: errors ? 422 : 200 },
    <>
      <h1>{device ? `Edit ${device.name}` : 'Add device'}</h1>
      <section class="card">
        <DeviceForm
          db={db}
          csrf={c.get('session').csrfToken}
          action={device ? `/devices/${device.id}/edit` : '/devices'}
          groups={groupOptions(db, scope)}
          scope={scope}
          device={device}
          values={values}
          errors={errors}
        />
      </section>
      {device ? <DeviceHold c={c} deviceId={device.id} /> : null}
      {device ? <HostKeyChange c={c} deviceId={device.id} /> : null}
      {device && can(c, 'devices.delete') ? (
        <form method="post" action={`/devices/${device.id}/delete`} class="inline" data-confirm={`Delete ${device.name} and all its backup records?`}>
          <Csrf token={c.get('session').csrfToken} />
          <button type="submit" class="danger">
            Delete device
          </button>
        </form>
      ) : null}
    </>,
  );
}

/** The changed host key a device offered: its fingerprint and an "Accept this key" button for exactly that key. */
export function HostKeyChange(props: { c: WebContext; deviceId: number }) {
  const { c, deviceId } = props;
  const offer = getHostKeyChange(c.get('app').db, c.get('principal').scope, deviceId);
  if (!offer) return null;
  const device = getDevice(c.get('app').db, c.get('principal').scope, deviceId);
  return (
    <section class="card" id="host-key-change">
      <h2>Changed SSH host key</h2>
      <p>
        The device presented a different host key at {formatTime(offer.seen_at, c.get('timezone'))}. Recorded: <code>{device.host_key ?? '—'}</code>; offered:{' '}
        <code class="fingerprint">{offer.fingerprint}</code>
      </p>
      {offer.approved_at !== null ? (
        <p>Accepted by {offer.approved_by ?? '?'}: the next backup accepts this key, and only this one.</p>
      ) : can(c, 'devices.update') ? (
        <form method="post" action={`/devices/${deviceId}/host-key/accept`} class="inline" data-confirm={`Accept host key ${offer.fingerprint}?`}>
          <Csrf token={c.get('session').csrfToken} />
          <input type="hidden" name="fingerprint" value={offer.fingerprint} />
          <button type="submit">Accept this key</button>
        </form>
      ) : null}
    </section>
  );
}
