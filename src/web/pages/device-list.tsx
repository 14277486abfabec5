// The device list: in service or retired, filters (search, group, platform, reachability, stale, failed), sorting, numbered paging,
// bulk backup and bulk edit of the ticked devices, CSV export links.
import { staleBefore, staleDevices } from '../../features/notifications/notification-events.service';
import { listDevices, listPlatforms, DEVICE_SORTS, type DeviceFilter, type DeviceOrder } from '../../features/devices/devices.service';
import { heldDevices } from '../../features/devices/device-holds.service';
import { FilterSelect, GroupPlatformFilters } from '../components/filter-select';
import { Csrf, Pager } from '../components/layout';
import { render } from '../render';
import { can, formatTime, intQuery, type WebContext } from '../web-context';
import { DEVICE_OPS } from '../../features/policy';
import { groupOptions, groupPaths } from './groups-options';
import { ReachabilityBadge, collectorOfflineDevices } from './collectors';

const PAGE_SIZE = 50;
const REACH = ['reachable', 'unreachable', 'unknown'] as const;

/** The list's filters from the query string: the list and its CSV export (devices-import.tsx) read the same ones. */
export function deviceListQuery(c: WebContext) {
  const q = (c.req.query('q') ?? '').trim().slice(0, 128);
  const groupId = intQuery(c, 'group_id', 0);
  const reach = REACH.find((r) => r === c.req.query('reachability'));
  const staleOnly = c.req.query('stale') === '1';
  const failedOnly = c.req.query('failed') === '1';
  const templateId = intQuery(c, 'template_id', 0);
  const retired = c.req.query('retired') === '1';
  const order: DeviceOrder = { sort: DEVICE_SORTS.find((s) => s === c.req.query('sort')) ?? 'name', desc: c.req.query('dir') === 'desc' };
  const staleHours = c.get('app').config.backup.stale_after_hours;
  const filter: DeviceFilter = {
    q: q || undefined,
    group_id: groupId || undefined,
    reachability: reach,
    stale_before: staleOnly ? staleBefore(staleHours) : undefined,
    template_id: templateId || undefined,
    last_failed: failedOnly || undefined,
    retired,
  };
  const params = {
    q,
    group_id: groupId ? String(groupId) : undefined,
    template_id: templateId ? String(templateId) : undefined,
    reachability: reach,
    stale: staleOnly ? '1' : undefined,
    failed: failedOnly ? '1' : undefined,
    retired: retired ? '1' : undefined,
  };
  return { q, groupId, reach, staleOnly, failedOnly, templateId, retired, order, staleHours, filter, params };
}

export function listPage(c: WebContext) {
  const db = c.get('app').db;
  const p = c.get('principal');
  const tz = c.get('timezone');
  const page = intQuery(c, 'page', 1, 100_000);
  const { q, groupId, reach, staleOnly, failedOnly, templateId, retired, order, staleHours, filter, params } = deviceListQuery(c);
  const exportQuery = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => Boolean(e[1]))).toString();
  const { items, total } = listDevices(db, p.scope, filter, page, PAGE_SIZE, order);
  const platforms = listPlatforms(db);
  const platformNames = new Map(platforms.map((t) => [t.id, t.name]));
  const sortParams = { ...params, sort: order.sort === 'name' ? undefined : order.sort, dir: order.desc ? 'desc' : undefined };
  // The other tab's count, under the same filters: retired devices are counted apart from those in service.
  const other = listDevices(db, p.scope, { ...filter, retired: !retired }, 1, 1).total;
  const bulk = can(c, 'backups.run') && !retired;
  const edit = can(c, DEVICE_OPS.bulkEdit);
  const select = bulk || edit;
  const here = `/devices${new URL(c.req.url).search}`;
  const held = heldDevices(
    db,
    items.map((d) => d.id),
  );
  const collectorOffline = collectorOfflineDevices(
    c,
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
      <nav class="tabs" aria-label="Device state">
        <a href={tabHref(params, false)} aria-current={retired ? undefined : 'page'} id="tab-active">
          In service ({retired ? other : total})
        </a>
        <a href={tabHref(params, true)} aria-current={retired ? 'page' : undefined} id="tab-retired">
          Retired ({retired ? total : other})
        </a>
      </nav>
      <form method="get" action="/devices" class="row filters" role="search">
        {retired ? <input type="hidden" name="retired" value="1" /> : null}
        <label>
          Search
          <input name="q" type="search" value={q} placeholder="name or address" />
        </label>
        <GroupPlatformFilters groups={groups} platforms={platforms} groupId={groupId} templateId={templateId} />
        <FilterSelect label="Reachability" name="reachability" any="Any" choices={REACH.map((r) => ({ value: r, label: r }))} selected={reach} />
        <label class="check">
          <input type="checkbox" name="stale" value="1" checked={staleOnly} /> Stale only (no good backup for {staleHours} h)
        </label>
        <label class="check">
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
        <p class="empty">
          No {retired ? 'retired ' : ''}devices{q || groupId || templateId || reach || staleOnly || failedOnly ? ' match these filters' : ' yet'}.
        </p>
      ) : (
        <form method="post" action="/jobs" id="bulk-backup">
          {select ? <BulkActions c={c} backup={bulk} edit={edit} groupId={groupId} groupLabel={groupId ? paths.get(groupId) : undefined} back={here} /> : null}
          <div class="table-wrap">
            <table class="list" id="devices">
              <thead>
                <tr>
                  {select ? <th>Select</th> : null}
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
                    {select ? (
                      <td>
                        <input type="checkbox" name="device_id" value={String(d.id)} aria-label={`Select ${d.name}`} />
                        <input type="hidden" name="page_device_id" value={String(d.id)} />
                      </td>
                    ) : null}
                    <td>
                      <a href={`/devices/${d.id}`}>{d.name}</a>
                      {d.retired ? <span class="badge muted">retired</span> : d.enabled ? null : <span class="badge muted">disabled</span>}
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
                      <ReachabilityBadge status={d.reachability.status} error={d.reachability.error} offlineZone={collectorOffline.get(d.id)} />
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

/** The list with the other state's devices (in service / retired), its other filters kept. */
function tabHref(params: Record<string, string | undefined>, retired: boolean): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v && k !== 'retired') q.set(k, v);
  if (retired) q.set('retired', '1');
  return q.size ? `/devices?${q}` : '/devices';
}

/**
 * Bulk actions on the list: backups of the devices ticked, the group filtered on (with its subgroups), or every device in
 * scope (one job each); "Edit selected" opens the bulk edit of the ticked devices (every device of the page with "All on
 * this page", also without script).
 */
function BulkActions(props: { c: WebContext; backup: boolean; edit: boolean; groupId: number; groupLabel?: string; back: string }) {
  const { c, groupId, groupLabel, back } = props;
  return (
    <div class="actions bulk-actions">
      <Csrf token={c.get('session').csrfToken} />
      <input type="hidden" name="back" value={back} />
      {/* Above the table, not in its header: on a phone the header is hidden and the rows are cards. */}
      <label class="check">
        <input type="checkbox" name="all_on_page" value="1" data-select-all="device_id" /> All on this page
      </label>
      {props.edit ? (
        <button type="submit" formaction="/devices/bulk" id="bulk-edit-selected">
          Edit selected…
        </button>
      ) : null}
      {props.backup ? <BackupButtons groupId={groupId} groupLabel={groupLabel} /> : null}
    </div>
  );
}

function BackupButtons({ groupId, groupLabel }: { groupId: number; groupLabel?: string }) {
  return (
    <>
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
    </>
  );
}
