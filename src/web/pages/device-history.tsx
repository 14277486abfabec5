// A device's page: details, "Back up now", backup history; viewing, downloading and comparing any two versions.
import type { Hono } from 'hono';
import { getDeviceBackupRow, listDeviceHistory } from '../../features/backups/backups.service';
import { getDevice } from '../../features/devices/devices.service';
import { getTemplateSpec } from '../../features/templates/templates.service';
import { deviceJobView, startBackupJob, type DeviceJobView } from '../backup-jobs';
import { ApiError } from '../../errors';
import { Csrf, Pager } from '../components/layout';
import { diffBackups, readBackupTextOffThread } from '../diff';
import { render } from '../render';
import { actorOf } from '../../http/context';
import { can, formatTime, intParam, intQuery, need, type WebContext, type WebEnv } from '../web-context';
import { DiffView } from './diff-view';
import { groupOptions, groupPaths } from './groups-options';
import { HostKeyChange } from './devices';
import { DeviceHold } from '../components/device-hold';

const HISTORY_PAGE = 20;

export function registerDeviceHistory(web: Hono<WebEnv>): void {
  web.get('/devices/:id', need('devices.view'), (c) => devicePage(c));

  // Without script: start the job and come back to the page, which shows its state.
  web.post('/devices/:id/backup', need('devices.view', 'backups.run'), (c) => {
    const id = intParam(c, 'id');
    const job = startBackupJob(c.get('app'), actorOf(c), { deviceIds: [id] });
    return c.redirect(`/devices/${id}?job=${job.id}`, 303);
  });

  web.get('/devices/:id/backups/:bid', need('devices.view', 'backups.view'), async (c) => {
    const id = intParam(c, 'id');
    const { device, row, text } = await loadVersion(c, id, c.req.param('bid'));
    const tz = c.get('timezone');
    return render(
      c,
      { title: `${device.name} · ${formatTime(row.started_at, tz)}`, active: '/devices' },
      <>
        <p class="crumbs">
          <a href="/devices">Devices</a> / <a href={`/devices/${id}`}>{device.name}</a>
        </p>
        <div class="title-row">
          <h1>Version of {formatTime(row.started_at, tz)}</h1>
          {text !== null ? (
            <a class="button" href={`/devices/${id}/backups/${row.id}/download`}>
              Download
            </a>
          ) : null}
        </div>
        {text === null ? (
          <p class="flash error">
            {row.success
              ? 'The stored text of this version cannot be read (see the appliance log).'
              : `This backup failed: ${row.error_message ?? row.failure_type}`}
          </p>
        ) : (
          <pre class="config" id="config-text">
            {text}
          </pre>
        )}
      </>,
    );
  });

  web.get('/devices/:id/backups/:bid/download', need('devices.view', 'backups.view'), async (c) => {
    const id = intParam(c, 'id');
    const { device, row, text } = await loadVersion(c, id, c.req.param('bid'));
    if (text === null) return c.text('This version has no configuration text.', 404);
    const stamp = new Date(row.started_at).toISOString().replace(/[:]/g, '').replace(/\..*$/, 'Z');
    const file = `${device.name}-${stamp}.txt`.replace(/[^A-Za-z0-9._-]/g, '_');
    c.header('Content-Disposition', `attachment; filename="${file}"`);
    c.header('Cache-Control', 'no-store');
    return c.body(text, 200, { 'Content-Type': 'text/plain; charset=utf-8' });
  });

  web.get('/devices/:id/diff', need('devices.view', 'backups.view'), async (c) => {
    const id = intParam(c, 'id');
    const a = await loadVersion(c, id, c.req.query('a') ?? '', { text: false });
    const b = await loadVersion(c, id, c.req.query('b') ?? '', { text: false });
    // Older on the left whatever order the two were picked in.
    const [older, newer] = a.row.started_at <= b.row.started_at ? [a, b] : [b, a];
    const ignore = c.req.query('ignore') === '1';
    const view = c.req.query('view') === 'unified' ? 'unified' : 'split';
    const patterns = ignore ? (getTemplateSpec(c.get('app').db, a.device.template_id)?.ignore_patterns ?? []) : [];
    const tz = c.get('timezone');
    const names = { a: formatTime(older.row.started_at, tz), b: formatTime(newer.row.started_at, tz) };
    const result = await diffBackups(c.get('app'), older.row, newer.row, names, patterns);
    const q = (over: Record<string, string>) =>
      `/devices/${id}/diff?${new URLSearchParams({ a: older.row.id, b: newer.row.id, view, ignore: ignore ? '1' : '0', ...over })}`;
    return render(
      c,
      { title: `${a.device.name} · diff`, active: '/devices' },
      <>
        <p class="crumbs">
          <a href="/devices">Devices</a> / <a href={`/devices/${id}`}>{a.device.name}</a>
        </p>
        <h1>Changes in {a.device.name}</h1>
        <p>
          From <a href={`/devices/${id}/backups/${older.row.id}`}>{names.a}</a> to <a href={`/devices/${id}/backups/${newer.row.id}`}>{names.b}</a>
        </p>
        <p class="muted">
          Newer version: {newer.row.trigger} backup{newer.row.changed_by ? `, after a change by ${newer.row.changed_by}` : ''}
        </p>
        <nav class="tabs" aria-label="Diff options">
          <a href={q({ view: 'split' })} class={view === 'split' ? 'active' : undefined}>
            Side by side
          </a>
          <a href={q({ view: 'unified' })} class={view === 'unified' ? 'active' : undefined}>
            Unified
          </a>
          <a href={q({ ignore: ignore ? '0' : '1' })}>{ignore ? 'Show ignored lines' : `Hide ignored lines (${patterns.length || 'template'} patterns)`}</a>
        </nav>
        {result ? <DiffView result={result} view={view} /> : <p class="flash error">One of the two versions has no stored text (a failed backup).</p>}
      </>,
    );
  });
}

/** A version of a device, its text read on a worker (up to [backup] max_output_mb; never on the event loop). */
async function loadVersion(c: WebContext, deviceId: number, backupId: string, opts: { text?: false } = {}) {
  const app = c.get('app');
  const scope = c.get('principal').scope;
  const device = getDevice(app.db, scope, deviceId);
  const row = getDeviceBackupRow(app.db, scope, deviceId, backupId);
  return { device, row, text: opts.text === false ? null : await readBackupTextOffThread(app, row) };
}

function devicePage(c: WebContext) {
  const id = intParam(c, 'id');
  const app = c.get('app');
  const p = c.get('principal');
  const tz = c.get('timezone');
  const device = getDevice(app.db, p.scope, id);
  const page = intQuery(c, 'page', 1, 1_000_000);
  const history = can(c, 'backups.view') ? listDeviceHistory(app.db, p.scope, id, page, HISTORY_PAGE) : null;
  const jv = jobOnPage(c, id);
  const group = device.group_id ? groupPaths(groupOptions(app.db, p.scope)).get(device.group_id) : null;
  const csrf = c.get('session').csrfToken;
  const successes = history?.items.filter((b) => b.success) ?? [];
  return render(
    c,
    { title: device.name, active: '/devices' },
    <>
      <p class="crumbs">
        <a href="/devices">Devices</a> / {device.name}
      </p>
      <div class="title-row">
        <h1>{device.name}</h1>
        <div class="actions">
          {can(c, 'backups.run') ? (
            <form method="post" action={`/devices/${id}/backup`} class="inline" data-backup-now={String(id)}>
              <Csrf token={csrf} />
              <button type="submit" class="primary">
                Back up now
              </button>
            </form>
          ) : null}
          {can(c, 'devices.update') ? (
            <a class="button" href={`/devices/${id}/edit`}>
              Edit
            </a>
          ) : null}
        </div>
      </div>
      <div id="backup-status" class={`job ${jv ? jv.state : 'idle'}`} aria-live="polite" data-job={jv?.state === 'running' ? jv.id : undefined}>
        {jv ? <JobMessage job={jv} /> : null}
        {jv && can(c, 'backups.view') ? (
          <>
            {' '}
            <a href={`/jobs/${jv.id}`}>Job details</a>
          </>
        ) : null}
      </div>
      <HostKeyChange c={c} deviceId={id} />
      <DeviceHold c={c} deviceId={id} />
      <dl class="facts">
        <dt>Address</dt>
        <dd class="mono">{`${device.protocol}://${device.hostname}:${device.port}`}</dd>
        <dt>Group</dt>
        <dd>{group ?? '(ungrouped)'}</dd>
        <dt>Reachability</dt>
        <dd>
          <span class={`badge ${device.reachability.status}`}>{device.reachability.status}</span>{' '}
          {device.reachability.checked_at ? `checked ${formatTime(device.reachability.checked_at, tz)}` : ''}
          {device.reachability.error ? <div class="muted">{device.reachability.error}</div> : null}
        </dd>
        <dt>State</dt>
        <dd>{device.enabled ? 'enabled' : 'disabled'}</dd>
        {device.description ? (
          <>
            <dt>Description</dt>
            <dd>{device.description}</dd>
          </>
        ) : null}
      </dl>
      {history ? (
        <section>
          <h2>Backup history</h2>
          {history.items.length === 0 ? (
            <p class="empty">No backups yet.</p>
          ) : (
            <form method="get" action={`/devices/${id}/diff`} id="history-form">
              <input type="hidden" name="ignore" value="0" />
              <div class="table-wrap">
                <table class="list" id="history">
                  <thead>
                    <tr>
                      <th title="Compare from">A</th>
                      <th title="Compare to">B</th>
                      <th>Started</th>
                      <th>Result</th>
                      <th>Trigger</th>
                      <th>Size</th>
                      <th></th>
                    </tr>
                  </thead>
                  <tbody>
                    {history.items.map((b) => (
                      <tr class={b.success ? undefined : 'failed-row'}>
                        <td>{b.success ? <input type="radio" name="a" value={b.id} aria-label="compare from" checked={b.id === successes[1]?.id} /> : null}</td>
                        <td>{b.success ? <input type="radio" name="b" value={b.id} aria-label="compare to" checked={b.id === successes[0]?.id} /> : null}</td>
                        <td>{formatTime(b.started_at, tz)}</td>
                        <td>
                          {b.finished_at === null ? (
                            <span class="badge unknown">running</span>
                          ) : b.success ? (
                            <>
                              <span class="badge ok">ok</span> {b.changed ? <span class="badge changed">changed</span> : null}
                            </>
                          ) : (
                            <>
                              <span class="badge failed">{b.failure_type ?? 'failed'}</span> <span class="muted">{b.error_message}</span>
                            </>
                          )}
                        </td>
                        <td>
                          {b.trigger}
                          {b.changed_by ? <span class="muted"> · changed by {b.changed_by}</span> : null}
                        </td>
                        <td>{b.config_size !== null ? `${b.config_size} B` : '—'}</td>
                        <td>{b.success ? <a href={`/devices/${id}/backups/${b.id}`}>View</a> : null}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {successes.length >= 2 || history.total > history.items.length ? (
                <div class="actions">
                  <button type="submit" name="view" value="split">
                    Compare A → B
                  </button>
                  <label class="check">
                    <input type="checkbox" name="ignore" value="1" /> hide lines the template ignores
                  </label>
                </div>
              ) : null}
            </form>
          )}
          <Pager base={`/devices/${id}`} params={{}} page={page} limit={HISTORY_PAGE} total={history.total} />
        </section>
      ) : null}
    </>,
  );
}

/** The job named by ?job= for this device, when the reader may see it (a stale or foreign link shows nothing). */
function jobOnPage(c: WebContext, deviceId: number): DeviceJobView | null {
  const jobId = c.req.query('job');
  if (!jobId) return null;
  try {
    return deviceJobView(c.get('app'), c.get('principal'), jobId, deviceId) ?? null;
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) return null;
    throw err;
  }
}

export function JobMessage({ job }: { job: DeviceJobView }) {
  if (job.state === 'running')
    return (
      <span>
        Backup running… {Math.round(job.elapsed_ms / 1000)} s{job.progress ? ` (${job.progress})` : ''}
      </span>
    );
  if (job.state === 'succeeded')
    return <span>Backup succeeded{job.first ? ': first version stored.' : job.changed ? ': the configuration changed.' : ': no change.'}</span>;
  return (
    <span>
      Backup {job.state}: {job.failure ? `${job.failure} — ` : ''}
      {job.message}
    </span>
  );
}
