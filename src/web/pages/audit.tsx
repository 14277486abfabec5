// Audit log page (audit.view): newest first, paged, filtered by actor, action, target and time range in the user's zone.
import { AUDIT_OPS } from '../../features/policy';
import type { Hono } from 'hono';
import { auditActions, auditNames, listAuditFor, type AuditFilter, type AuditNames } from '../../features/audit/audit.service';
import { describeChanges, describeDetails, describeDoor, describeTarget, parseAuditTime } from '../../features/audit/audit-view';
import { Pager } from '../components/layout';
import { render } from '../render';
import { formatTime, intQuery, need, type WebContext, type WebEnv } from '../web-context';

const PAGE = 100;

interface Filters {
  actor: string;
  action: string;
  target: string;
  from: string;
  to: string;
}

/** The filter fields as typed, the store filter they give, and a message per field that could not be read. */
function readFilters(c: WebContext, tz: string): { values: Filters; filter: AuditFilter; errors: Record<string, string> } {
  const q = (k: keyof Filters) => (c.req.query(k) ?? '').trim().slice(0, 200);
  const values: Filters = { actor: q('actor'), action: q('action'), target: q('target'), from: q('from'), to: q('to') };
  const filter: AuditFilter = { actor: values.actor || undefined, action: values.action || undefined, target: values.target || undefined };
  const errors: Record<string, string> = {};
  for (const k of ['from', 'to'] as const) {
    if (!values[k]) continue;
    const ms = parseAuditTime(values[k], tz);
    if (ms === null) errors[k] = `"${values[k]}" is not a date: use YYYY-MM-DD or YYYY-MM-DD HH:MM`;
    else if (k === 'from') filter.since = ms;
    else filter.until = endOf(values.to, ms, tz);
  }
  return { values, filter, errors };
}

/** "To" includes what it names: a whole day, a whole minute, or the second (ISO times are taken as exact). */
function endOf(text: string, ms: number, tz: string): number {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return (parseAuditTime(`${text} 23:59:59`, tz) ?? ms) + 1000;
  if (/^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}$/.test(text)) return ms + 60_000;
  return ms + 1000;
}

/** The row's target, named (a link to the record) while it exists, its id once deleted. */
function Target({ target, names }: { target: string; names: AuditNames }) {
  const t = describeTarget(target, names);
  return t.href ? (
    <a href={t.href} title={target}>
      {t.text}
    </a>
  ) : (
    <>{t.text}</>
  );
}

export function registerAudit(web: Hono<WebEnv>): void {
  web.get('/audit', need(AUDIT_OPS.list), (c) => {
    const db = c.get('app').db;
    const tz = c.get('timezone');
    const page = intQuery(c, 'page', 1, 100_000);
    const { values, filter, errors } = readFilters(c, tz);
    const { items: rows, total } = listAuditFor(db, c.get('principal'), filter, page, PAGE);
    const actions = auditActions(db);
    const names = auditNames(db, c.get('principal').scope, rows);
    const filtered = Object.values(values).some(Boolean);
    return render(
      c,
      { title: 'Audit log', active: '/audit' },
      <>
        <h1>Audit log</h1>
        <form method="get" action="/audit" class="row filters" role="search" id="audit-filters">
          <label>
            Actor
            <input name="actor" value={values.actor} placeholder="user name" />
          </label>
          <label>
            Action
            <input name="action" value={values.action} list="audit-actions" placeholder="e.g. group. or device.update" />
            <datalist id="audit-actions">
              {actions.map((a) => (
                <option value={a} />
              ))}
            </datalist>
          </label>
          <label>
            Target
            <input name="target" value={values.target} placeholder="e.g. device 12" />
          </label>
          <label>
            From
            <input name="from" value={values.from} placeholder="YYYY-MM-DD [HH:MM]" aria-invalid={errors.from ? 'true' : undefined} />
            {errors.from ? <span class="field-error">{errors.from}</span> : null}
          </label>
          <label>
            To
            <input name="to" value={values.to} placeholder="YYYY-MM-DD [HH:MM]" aria-invalid={errors.to ? 'true' : undefined} />
            {errors.to ? <span class="field-error">{errors.to}</span> : null}
          </label>
          <button type="submit">Filter</button>
        </form>
        <p class="muted">Times are in {tz}; each carries its zone's abbreviation.</p>
        {rows.length === 0 ? (
          <p class="empty">No audit rows{filtered ? ' match these filters' : ' yet'}.</p>
        ) : (
          <div class="table-wrap">
            <table class="list" id="audit">
              <thead>
                <tr>
                  <th>When</th>
                  <th>Who</th>
                  <th>Door</th>
                  <th>Action</th>
                  <th>Target</th>
                  <th>Changes</th>
                  <th>Details</th>
                  <th>Request</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr>
                    <td>{formatTime(r.at, tz)}</td>
                    <td>{r.actor}</td>
                    <td class="small">{describeDoor(r)}</td>
                    <td class="mono">{r.action}</td>
                    <td>
                      <Target target={r.target} names={names} />
                    </td>
                    <td class="small">
                      {describeChanges(r.changes, tz, { action: r.action, names }).map((l) => (
                        <div>{l}</div>
                      ))}
                    </td>
                    <td class="small">
                      {describeDetails(r.details, tz).map((l) => (
                        <div>{l}</div>
                      ))}
                    </td>
                    <td class="mono small">{r.request_id ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Pager base="/audit" params={{ ...values }} page={page} limit={PAGE} total={total} />
      </>,
    );
  });
}
