// Dashboard: device and backup figures within the user's scope, 30-day charts (inline SVG), unreachable devices, recent failures.
import { STATS_OPS } from '../../features/policy';
import type { Hono } from 'hono';
import { staleBefore } from '../../features/notifications/notification-events.service';
import { listDevices } from '../../features/devices/devices.service';
import { getDashboard, type DayPoint } from '../../features/stats/stats.service';
import { render } from '../render';
import { can, formatTime, need, type WebContext, type WebEnv } from '../web-context';

export function registerDashboard(web: Hono<WebEnv>): void {
  web.get('/', (c) => {
    // Users without the dashboard go to the first page they may use.
    if (!can(c, 'dashboard.view')) return c.redirect(can(c, 'devices.view') ? '/devices' : can(c, 'api_keys.view') ? '/api-keys' : '/account', 303);
    return dashboardPage(c);
  });
  web.get('/dashboard', need(STATS_OPS.dashboard), (c) => dashboardPage(c));
}

function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

function dashboardPage(c: WebContext) {
  const db = c.get('app').db;
  const p = c.get('principal');
  const tz = c.get('timezone');
  const staleHours = c.get('app').config.backup.stale_after_hours;
  const d = getDashboard(db, p.scope, tz, { staleBefore: staleBefore(staleHours) });
  const unreachable = can(c, 'devices.view') ? listDevices(db, p.scope, { reachability: 'unreachable' }, 1, 10) : null;
  // "Never" apart from stale ones: a device added less than stale_after_hours ago is not stale yet, but may never have worked.
  const { stale, never } = d.stale ?? { stale: 0, never: 0 };
  return render(
    c,
    { title: 'Dashboard', active: '/' },
    <>
      <h1>Dashboard</h1>
      {d.devices.total + d.devices.retired === 0 && can(c, 'devices.create') ? <GettingStarted c={c} /> : null}
      <section class="tiles" id="stats">
        <Tile label="Devices in service" value={d.devices.total} id="stat-devices" />
        {d.devices.retired ? <Tile label="Retired (history kept)" value={d.devices.retired} id="stat-retired" /> : null}
        <Tile label="Enabled" value={d.devices.enabled} />
        <Tile label="Unreachable" value={d.devices.unreachable} warn={d.devices.unreachable > 0} id="stat-unreachable" />
        <Tile label={`Stale (no good backup in ${staleHours} h)`} value={stale} warn={stale > 0} id="stat-stale" />
        <Tile label="Never backed up" value={never} warn={never > 0} id="stat-never" />
        <Tile label="Backups ok (24 h)" value={d.last_24h.succeeded} />
        <Tile label="Backups failed (24 h)" value={d.last_24h.failed} warn={d.last_24h.failed > 0} />
        {d.system ? (
          <>
            <Tile label="Backup records" value={d.system.backups.total} />
            <Tile label="Stored" value={bytes(d.system.storage.bytes_stored)} />
            <Tile label="Storage saving (dedup + compression)" value={storageSaving(d.system.storage)} id="stat-saving" />
          </>
        ) : null}
      </section>
      <div class="charts">
        <section class="card">
          <h2>Backup outcomes per day (30 days)</h2>
          <BarChart
            days={d.days}
            series={[
              ['succeeded', 'ok'],
              ['failed', 'bad'],
            ]}
            label="Backup outcomes"
          />
        </section>
        <section class="card">
          <h2>Configuration changes per day</h2>
          <BarChart days={d.days} series={[['changes', 'chg']]} label="Configuration changes" />
        </section>
      </div>
      <div class="charts">
        {unreachable ? (
          <section class="card">
            <h2>Unreachable devices</h2>
            {unreachable.items.length === 0 ? (
              <p class="empty">None.</p>
            ) : (
              <ul class="plain">
                {unreachable.items.map((u) => (
                  <li>
                    <a href={`/devices/${u.id}`}>{u.name}</a> <span class="muted">{u.reachability.error}</span>
                  </li>
                ))}
                {unreachable.total > unreachable.items.length ? (
                  <li>
                    <a href="/devices?reachability=unreachable">All {unreachable.total} unreachable devices</a>
                  </li>
                ) : null}
              </ul>
            )}
          </section>
        ) : null}
        <section class="card">
          <h2>Recent failures (7 days)</h2>
          {d.failures.length === 0 ? (
            <p class="empty">None.</p>
          ) : (
            <ul class="plain" id="failures">
              {d.failures.map((f) => (
                <li>
                  <a href={`/devices/${f.device_id}`}>{f.device_name}</a> <span class="badge failed">{f.failure_type ?? 'failed'}</span>{' '}
                  <span class="muted">
                    {formatTime(f.started_at, tz)} — {f.error_message}
                  </span>
                </li>
              ))}
            </ul>
          )}
        </section>
      </div>
    </>,
  );
}

function Tile({ label, value, warn, id }: { label: string; value: number | string; warn?: boolean; id?: string }) {
  return (
    <div class={`tile${warn ? ' warn' : ''}`} id={id}>
      <span class="value">{String(value)}</span>
      <span class="label">{label}</span>
    </div>
  );
}

/** Logical bytes over bytes on disk (identical versions stored once, files compressed); nothing to say before anything is stored. */
export function storageSaving(storage: { bytes_stored: number; bytes_before_dedup: number; dedup_ratio: number }): string {
  return storage.bytes_stored > 0 && storage.bytes_before_dedup > 0 ? `${storage.dedup_ratio}×` : '—';
}

/** On an appliance with no devices in view: the three steps to a first backup, each a link where the user may take it. */
function GettingStarted({ c }: { c: WebContext }) {
  const step = (perm: Parameters<typeof can>[1], href: string, text: string, after: string) => (
    <li>
      {can(c, perm) ? <a href={href}>{text}</a> : <strong>{text}</strong>} {after}
    </li>
  );
  return (
    <section class="card getting-started" id="getting-started">
      <h2>Getting started</h2>
      <p>No devices yet. Three steps to the first backup:</p>
      <ol>
        {step('credentials.create', '/credentials/new', 'Add a credential', '— the login the appliance uses on your devices.')}
        {step('devices.create', '/devices/new', 'Add a device', '— its address, the credential, and the template for its platform.')}
        {step('devices.view', '/devices', 'Back up', '— open the device and press “Back up now”; scheduled backups follow by themselves.')}
      </ol>
    </section>
  );
}

/** Stacked bars, one per day, with the same numbers in a table behind a toggle (readable without hovering, on a phone, by a screen reader). */
function BarChart({ days, series, label }: { days: DayPoint[]; series: [keyof DayPoint, string][]; label: string }) {
  return (
    <>
      <BarSvg days={days} series={series} label={label} />
      <details class="chart-table">
        <summary>{`${label} as a table`}</summary>
        <div class="table-wrap">
          <table class="list chart-data">
            <caption class="muted small">{`${label} per day`}</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                {series.map(([k]) => (
                  <th scope="col">{String(k)}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {days.map((d) => (
                <tr>
                  <th scope="row">{d.day}</th>
                  {series.map(([k]) => (
                    <td>{String(d[k])}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </>
  );
}

function BarSvg({ days, series, label }: { days: DayPoint[]; series: [keyof DayPoint, string][]; label: string }) {
  const W = 600;
  const H = 160;
  const pad = 24;
  const bw = (W - pad) / days.length;
  const total = (d: DayPoint) => series.reduce((s, [k]) => s + (d[k] as number), 0);
  const max = Math.max(1, ...days.map(total));
  return (
    <svg
      class="chart"
      viewBox={`0 0 ${W} ${H + 18}`}
      role="img"
      aria-label={`${label} per day over ${days.length} days, highest ${max}; the numbers are in the table below`}
    >
      <line x1={pad} y1={H} x2={W} y2={H} class="axis" />
      <text x={0} y={12} class="tick">
        {String(max)}
      </text>
      <text x={0} y={H} class="tick">
        0
      </text>
      {days.map((d, i) => {
        let y = H;
        return (
          <g>
            <title>{`${d.day}: ${series.map(([k]) => `${d[k]} ${String(k)}`).join(', ')}`}</title>
            {series.map(([k, cls]) => {
              const h = ((d[k] as number) / max) * (H - 16);
              y -= h;
              return h > 0 ? <rect x={pad + i * bw + 1} y={y} width={Math.max(1, bw - 2)} height={h} class={cls} /> : null;
            })}
            {/* A label every week, none so close to the right edge that it would be cut off. */}
            {i % 7 === 0 && pad + i * bw < W - 60 ? (
              <text x={pad + i * bw} y={H + 14} class="tick">
                {d.day.slice(5)}
              </text>
            ) : null}
          </g>
        );
      })}
    </svg>
  );
}
