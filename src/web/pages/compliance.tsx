// Compliance fleet view (devices × rules, filters, counts, a daily trend), its CSV export and its printable report.
import type { Hono } from 'hono';
import { COMPLIANCE_OPS } from '../../features/policy';
import { SEVERITIES, type Severity } from '../../features/compliance/compliance-rule.schemas';
import { complianceTrend, fleetCompliance, summarize, type FleetFilter } from '../../features/compliance/compliance-fleet.service';
import { reportCsv, reportRows } from '../../features/compliance/compliance-report';
import type { DeviceCompliance, ShownStatus } from '../../features/compliance/compliance.service';
import type { TrendRow } from '../../features/compliance/compliance.store';
import { listPlatforms } from '../../features/devices/devices.service';
import { actorOf } from '../../http/context';
import { formatTimestamp } from '../../lib/time';
import { FilterSelect } from '../components/filter-select';
import { render } from '../render';
import { can, formatTime, intQuery, need, type WebContext, type WebEnv } from '../web-context';
import { groupOptions } from './groups-options';
import { stamp } from './device-versions';

export function registerCompliance(web: Hono<WebEnv>): void {
  web.get('/compliance', need(COMPLIANCE_OPS.summary), (c) => fleetPage(c));
  web.get('/compliance/report', need(COMPLIANCE_OPS.summary), (c) => reportPage(c));
  web.get('/compliance/report.csv', need(COMPLIANCE_OPS.summary), async (c) => {
    const devices = await fleetCompliance(c.get('app').db, c.get('app').snapshots, actorOf(c), filterOf(c));
    return c.body(reportCsv(reportRows(devices)), 200, {
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="compliance-${stamp(Date.now())}.csv"`,
    });
  });
}

function filterOf(c: WebContext): FleetFilter {
  const severity = c.req.query('severity');
  const group = intQuery(c, 'group_id', 0);
  return {
    groupId: group || null,
    template: c.req.query('template') || undefined,
    severity: (SEVERITIES as readonly string[]).includes(severity ?? '') ? (severity as Severity) : undefined,
  };
}

/** The filter as a query string, for the export and report links. */
function filterQuery(f: FleetFilter): string {
  const q = new URLSearchParams();
  if (f.groupId) q.set('group_id', String(f.groupId));
  if (f.template) q.set('template', f.template);
  if (f.severity) q.set('severity', f.severity);
  const s = q.toString();
  return s ? `?${s}` : '';
}

const STATUS_MARK: Record<ShownStatus, string> = { pass: '✓', fail: '✗', waived: 'W', not_applicable: '' };

async function fleetPage(c: WebContext) {
  const { db, snapshots } = c.get('app');
  const filter = filterOf(c);
  const devices = await fleetCompliance(db, snapshots, actorOf(c), filter);
  const summary = summarize(devices);
  const trend = complianceTrend(db, actorOf(c), { groupId: filter.groupId }, 30);
  const rules = summary.by_rule;
  const groups = groupOptions(db, c.get('principal').scope);
  const qs = filterQuery(filter);
  return render(
    c,
    { title: 'Compliance', active: '/compliance' },
    <>
      <div class="title-row">
        <h1>Compliance</h1>
        <div class="actions">
          <a class="button" href="/compliance/rules">
            Rules
          </a>
          <a class="button" href={`/compliance/report.csv${qs}`} id="export-csv">
            Export CSV
          </a>
          <a class="button" href={`/compliance/report${qs}`} id="printable-report">
            Printable report
          </a>
        </div>
      </div>
      <form method="get" action="/compliance" class="row filters" role="search">
        <FilterSelect
          label="Group"
          name="group_id"
          any="All groups"
          choices={groups.map((g) => ({ value: g.id, label: g.label }))}
          selected={filter.groupId ?? undefined}
        />
        <FilterSelect
          label="Platform"
          name="template"
          any="All platforms"
          choices={listPlatforms(db).map((p) => ({ value: p.name, label: p.name }))}
          selected={filter.template}
        />
        <FilterSelect label="Severity" name="severity" any="Any" choices={SEVERITIES.map((s) => ({ value: s, label: s }))} selected={filter.severity} />
        <button type="submit">Filter</button>
      </form>
      <dl class="facts" id="compliance-counts">
        <dt>Devices judged</dt>
        <dd>{String(summary.devices.judged)}</dd>
        <dt>Compliant</dt>
        <dd>{String(summary.devices.compliant)}</dd>
        <dt>Not compliant</dt>
        <dd>{String(summary.devices.non_compliant)}</dd>
        <dt>Failures by severity</dt>
        <dd>{summary.by_severity.map((s) => `${s.severity} ${s.fail}${s.waived ? ` (+${s.waived} waived)` : ''}`).join(' · ')}</dd>
      </dl>
      <Trend rows={trend} tz={c.get('timezone')} />
      {devices.length === 0 ? (
        <p class="muted">No device in your scope has a stored version {qs ? 'that matches the filter' : 'yet'}.</p>
      ) : (
        <div class="table-wrap">
          <table class="list compliance-matrix" id="compliance-matrix">
            <caption class="muted small">✓ pass · ✗ fail · W waived · empty: the rule does not apply</caption>
            <thead>
              <tr>
                <th scope="col">Device</th>
                <th scope="col">Failing</th>
                {rules.map((r) => (
                  <th scope="col" class={`severity-${r.severity}`}>
                    <a href={`/compliance/rules/${encodeURIComponent(r.rule_id)}`} title={`${r.title} (${r.severity})`}>
                      {r.rule_id}
                    </a>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {devices.map((d) => (
                <DeviceRow d={d} ruleIds={rules.map((r) => r.rule_id)} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {can(c, COMPLIANCE_OPS.createRule) ? (
        <p>
          <a href="/compliance/rules/new">Add a rule</a>
        </p>
      ) : null}
    </>,
  );
}

function DeviceRow({ d, ruleIds }: { d: DeviceCompliance; ruleIds: string[] }) {
  const by = new Map(d.results.map((r) => [r.rule_id, r.status]));
  const failing = d.results.filter((r) => r.status === 'fail').length;
  return (
    <tr>
      <th scope="row">
        <a href={`/devices/${d.device_id}/compliance`}>{d.device_name}</a>
      </th>
      <td class={failing ? 'status-fail' : 'status-pass'}>{String(failing)}</td>
      {ruleIds.map((id) => {
        const s = by.get(id) ?? 'not_applicable';
        return (
          <td class={`status-${s}`} title={s.replace('_', ' ')}>
            {STATUS_MARK[s]}
          </td>
        );
      })}
    </tr>
  );
}

/** Daily counts as a small server-drawn bar chart (non-compliant devices of those judged), with the figures in a table beside it. */
function Trend({ rows, tz }: { rows: TrendRow[]; tz: string }) {
  const max = Math.max(1, ...rows.map((r) => r.devices));
  const w = 12;
  const h = 60;
  const day = (r: TrendRow) => formatTimestamp(r.day_end - 1, tz).slice(0, 10);
  return (
    <section class="card" id="compliance-trend">
      <h2>Last 30 days</h2>
      <svg role="img" aria-label="Devices not compliant per day" width={rows.length * w} height={h} viewBox={`0 0 ${rows.length * w} ${h}`} class="trend">
        {rows.map((r, i) => {
          const all = Math.round((r.devices / max) * h);
          const bad = Math.round((r.failing_devices / max) * h);
          return (
            <g>
              <title>{`${day(r)}: ${r.failing_devices} of ${r.devices} devices not compliant, ${r.violations} failures`}</title>
              <rect x={i * w + 1} y={h - all} width={w - 2} height={all} class="bar-judged" />
              <rect x={i * w + 1} y={h - bad} width={w - 2} height={bad} class="bar-failing" />
            </g>
          );
        })}
      </svg>
      <details>
        <summary>Daily figures</summary>
        <table class="list" id="trend-table">
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col">Devices judged</th>
              <th scope="col">Not compliant</th>
              <th scope="col">Failures</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr>
                <td>{day(r)}</td>
                <td>{String(r.devices)}</td>
                <td>{String(r.failing_devices)}</td>
                <td>{String(r.violations)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
      <p class="muted small">Each day counts each device's newest version stored by its end, as it was judged (waivers are not applied to the past).</p>
    </section>
  );
}

/** Every device's failing and waived rules with their lines and remediation, for paper (print CSS hides the frame). */
async function reportPage(c: WebContext) {
  const { db, snapshots } = c.get('app');
  const filter = filterOf(c);
  const devices = await fleetCompliance(db, snapshots, actorOf(c), filter);
  const summary = summarize(devices);
  const tz = c.get('timezone');
  return render(
    c,
    { title: 'Compliance report', active: '/compliance' },
    <article class="report" id="compliance-report">
      <h1>Compliance report</h1>
      <p class="muted">
        {formatTime(Date.now(), tz)} · {summary.devices.judged} devices judged, {summary.devices.compliant} compliant, {summary.devices.non_compliant} not
        {filter.groupId || filter.template || filter.severity ? ' · filtered' : ''}
      </p>
      <p class="no-print">
        <a href={`/compliance${filterQuery(filter)}`}>Back to the fleet view</a> · use the browser's Print command.
      </p>
      {devices.map((d) => {
        const open = d.results.filter((r) => r.status === 'fail' || r.status === 'waived');
        return (
          <section class="report-device">
            <h2>
              {d.device_name} <span class="muted small">{d.group_path || '(ungrouped)'}</span>
            </h2>
            <p class="muted small">
              Version of {formatTime(d.backed_up_at, tz)} · {open.length ? `${open.filter((r) => r.status === 'fail').length} failing` : 'compliant'}
            </p>
            {open.map((r) => (
              <div class="report-rule">
                <h3>
                  {r.rule_id}: {r.title} <span class={`badge severity-${r.severity}`}>{r.severity}</span> <span class="badge">{r.status}</span>
                </h3>
                {r.waiver ? (
                  <p class="small">
                    Waived until {formatTime(r.waiver.expires_at, tz)} by {r.waiver.owner}: {r.waiver.reason}
                  </p>
                ) : null}
                <ul class="mono small">
                  {r.failing.map((f) => (
                    <li>
                      {f.line === null ? 'missing' : `line ${f.line}`}: {f.text} ({f.message})
                    </li>
                  ))}
                </ul>
                {r.remediation ? <pre class="config">{r.remediation}</pre> : null}
              </div>
            ))}
          </section>
        );
      })}
    </article>,
  );
}
