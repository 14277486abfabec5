// Audit log page (audit.view): newest first, paged.
import type { Hono } from 'hono';
import { listAudit } from '../../features/audit/audit.service';
import { Pager } from '../components/layout';
import { render } from '../render';
import { formatTime, intQuery, need, type WebEnv } from '../web-context';

const PAGE = 100;

export function registerAudit(web: Hono<WebEnv>): void {
  web.get('/audit', need('audit.view'), (c) => {
    const db = c.get('app').db;
    const page = intQuery(c, 'page', 1, 100_000);
    const { items: rows, total } = listAudit(db, {}, page, PAGE);
    const tz = c.get('timezone');
    return render(
      c,
      { title: 'Audit log', active: '/audit' },
      <>
        <h1>Audit log</h1>
        <div class="table-wrap">
          <table class="list" id="audit">
            <thead>
              <tr><th>When</th><th>Who</th><th>Action</th><th>Target</th><th>Details</th></tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr>
                  <td>{formatTime(r.at, tz)}</td>
                  <td>{r.actor}</td>
                  <td class="mono">{r.action}</td>
                  <td>{r.target}</td>
                  <td class="mono small">{r.details === '{}' ? '' : r.details}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <Pager base="/audit" params={{}} page={page} limit={PAGE} total={total} />
      </>,
    );
  });
}
