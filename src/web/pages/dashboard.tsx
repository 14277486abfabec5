// Dashboard: device and backup figures within the user's scope, 30-day charts (inline SVG), unreachable devices, recent failures.
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
  web.get('/dashboard', need('dashboard.view'), (c) => dashboardPage(c));
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
  const d = getDashboard(db, p.scope, tz);
  const unreachable = can(c, 'devices.view') ? listDevices(db, p.scope, { reachability: 'unreachable' }, 1, 10) : null;
  const stale = listDevices(db, p.scope, { stale_before: staleBefore(c.get('app').config.backup.stale_after_hours) }, 1, 1).total;
  return render(
    c,
    { title: 'Dashboard', active: '/' },
    <>
      <h1>Dashboard</h1>
      <section class="tiles" id="stats">
        <Tile label="Devices" value={d.devices.total} id="stat-devices" />
        <Tile label="Enabled" value={d.devices.enabled} />
        <Tile label="Unreachable" value={d.devices.unreachable} warn={d.devices.unreachable > 0} id="stat-unreachable" />
        <Tile label="Stale (no good backup)" value={stale} warn={stale > 0} id="stat-stale" />
        <Tile label="Backups ok (24 h)" value={d.last_24h.succeeded} />
        <Tile label="Backups failed (24 h)" value={d.last_24h.failed} warn={d.last_24h.failed > 0} />
        {d.system ? (
          <>
            <Tile label="Backup records" value={d.system.backups.total} />
            <Tile label="Stored" value={bytes(d.system.storage.bytes_stored)} />
            <Tile label="Dedup ratio" value={`${d.system.storage.dedup_ratio}×`} />
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
            label="backups"
          />
        </section>
        <section class="card">
          <h2>Configuration changes per day</h2>
          <BarChart days={d.days} series={[['changes', 'chg']]} label="changes" />
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

/** Stacked bars, one per day; each bar has a <title> so the numbers are readable on hover and by screen readers. */
function BarChart({ days, series, label }: { days: DayPoint[]; series: [keyof DayPoint, string][]; label: string }) {
  const W = 600;
  const H = 160;
  const pad = 24;
  const bw = (W - pad) / days.length;
  const total = (d: DayPoint) => series.reduce((s, [k]) => s + (d[k] as number), 0);
  const max = Math.max(1, ...days.map(total));
  return (
    <svg class="chart" viewBox={`0 0 ${W} ${H + 18}`} role="img" aria-label={`${label} per day, highest ${max}`}>
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
            {i % 7 === 0 ? (
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
