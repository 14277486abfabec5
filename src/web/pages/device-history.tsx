// A device's page: its facts (platform, credential, effective schedule and next run, last change, host key), "Back up now", backup history.
import { BACKUP_OPS, DEVICE_OPS } from '../../features/policy';
import type { Hono } from 'hono';
import { getLastChange, listDeviceHistory, previousVersions } from '../../features/backups/backups.service';
import { getCredential } from '../../features/credentials/credentials.service';
import { getDevice, getEffectiveSchedule, type Device } from '../../features/devices/devices.service';
import { getTemplate } from '../../features/templates/templates.service';
import { deviceJobView, startBackupJob, type DeviceJobView } from '../backup-jobs';
import { ApiError } from '../../errors';
import { ActionsHeader, Csrf, Pager } from '../components/layout';
import { render } from '../render';
import { actorOf } from '../../http/context';
import { can, formatTime, intParam, intQuery, need, type WebContext, type WebEnv } from '../web-context';
import { registerCompare } from './compare';
import { registerDeviceVersions } from './device-versions';
import { groupOptions, groupPaths } from './groups-options';
import { HostKeyChange } from './devices';
import { DeviceHold } from '../components/device-hold';
import { ReachabilityBadge, collectorOfflineDevices } from './collectors';
import { RetireControls, RetiredNote } from './device-retire';

const HISTORY_PAGE = 20;

export function registerDeviceHistory(web: Hono<WebEnv>): void {
  web.get('/devices/:id', need(DEVICE_OPS.get), (c) => devicePage(c));

  // Without script: start the job and come back to the page, which shows its state.
  web.post('/devices/:id/backup', need(BACKUP_OPS.run), (c) => {
    const id = intParam(c, 'id');
    const job = startBackupJob(c.get('app'), actorOf(c), { deviceIds: [id] });
    return c.redirect(`/devices/${id}?job=${job.id}`, 303);
  });

  registerDeviceVersions(web);
  registerCompare(web);
}

function devicePage(c: WebContext) {
  const id = intParam(c, 'id');
  const app = c.get('app');
  const p = c.get('principal');
  const device = getDevice(app.db, p.scope, id);
  const page = intQuery(c, 'page', 1, 1_000_000);
  const history = can(c, 'backups.view') ? listDeviceHistory(app.db, p.scope, id, page, HISTORY_PAGE) : null;
  return render(
    c,
    { title: device.name, active: '/devices' },
    <>
      <p class="crumbs">
        <a href="/devices">Devices</a> / {device.name}
      </p>
      <DeviceTitle c={c} device={device} />
      <RetiredNote c={c} device={device} />
      <BackupStatus c={c} deviceId={id} />
      <HostKeyChange c={c} deviceId={id} />
      <DeviceHold c={c} deviceId={id} />
      <FactsList c={c} device={device} />
      {history ? <HistorySection c={c} deviceId={id} history={history} page={page} /> : null}
    </>,
  );
}

/** The device's name with "Back up now" and "Edit", for those who may. */
function DeviceTitle({ c, device }: { c: WebContext; device: Device }) {
  const id = device.id;
  return (
    <div class="title-row">
      <h1>{device.name}</h1>
      <div class="actions">
        {can(c, 'backups.run') && !device.retired ? (
          <form method="post" action={`/devices/${id}/backup`} class="inline" data-backup-now={String(id)}>
            <Csrf token={c.get('session').csrfToken} />
            <button type="submit" class="primary">
              Back up now
            </button>
          </form>
        ) : null}
        {can(c, 'devices.update') ? (
          <form method="post" action={`/devices/${id}/detect`} class="inline">
            <Csrf token={c.get('session').csrfToken} />
            <button type="submit">Detect</button>
          </form>
        ) : null}
        {can(c, 'devices.update') ? (
          <a class="button" href={`/devices/${id}/edit`}>
            Edit
          </a>
        ) : null}
        {can(c, 'compliance.view') ? (
          <a class="button" href={`/devices/${id}/compliance`}>
            Compliance
          </a>
        ) : null}
        <RetireControls c={c} device={device} />
      </div>
    </div>
  );
}

/** The state of the backup job named by ?job= (app.js follows a running one). */
function BackupStatus({ c, deviceId }: { c: WebContext; deviceId: number }) {
  const jv = jobOnPage(c, deviceId);
  return (
    <div id="backup-status" class={`job ${jv ? jv.state : 'idle'}`} aria-live="polite" data-job={jv?.state === 'running' ? jv.id : undefined}>
      {jv ? <JobMessage job={jv} /> : null}
      {jv && can(c, 'backups.view') ? (
        <>
          {' '}
          <a href={`/jobs/${jv.id}`}>Job details</a>
        </>
      ) : null}
    </div>
  );
}

function FactsList({ c, device }: { c: WebContext; device: Device }) {
  const app = c.get('app');
  const tz = c.get('timezone');
  const group = device.group_id ? groupPaths(groupOptions(app.db, c.get('principal').scope)).get(device.group_id) : null;
  return (
    <dl class="facts">
      <dt>Address</dt>
      <dd class="mono">{`${device.protocol}://${device.hostname}:${device.port}`}</dd>
      <dt>Group</dt>
      <dd>{group ?? '(ungrouped)'}</dd>
      <dt>Reachability</dt>
      <dd>
        <ReachabilityBadge status={device.reachability.status} offlineZone={collectorOfflineDevices(c, app.db, [device.id]).get(device.id)} />{' '}
        {device.reachability.checked_at ? `checked ${formatTime(device.reachability.checked_at, tz)}` : ''}
        {device.reachability.error ? <div class="muted">{device.reachability.error}</div> : null}
      </dd>
      <dt>State</dt>
      <dd>{device.retired ? 'retired' : device.enabled ? 'enabled' : 'disabled'}</dd>
      <DeviceFacts c={c} device={device} />
      {device.description ? (
        <>
          <dt>Description</dt>
          <dd>{device.description}</dd>
        </>
      ) : null}
    </dl>
  );
}

type History = ReturnType<typeof listDeviceHistory>;
type HistoryItem = History['items'][number];

/** The backup history: a table whose radio buttons pick two versions to compare, a pager, a link to compare with another device. */
function HistorySection({ c, deviceId: id, history, page }: { c: WebContext; deviceId: number; history: History; page: number }) {
  const successes = history.items.filter((b) => b.success);
  const previous = previousVersions(c.get('app').db, c.get('principal').scope, id, history.items);
  return (
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
                  <ActionsHeader />
                </tr>
              </thead>
              <tbody>
                {history.items.map((b) => (
                  <HistoryRow c={c} deviceId={id} b={b} from={successes[1]?.id} to={successes[0]?.id} previous={previous.get(b.id)} />
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
      {successes.length > 0 ? (
        <p>
          <a href={`/compare?da=${id}`}>Compare with another device…</a>
        </p>
      ) : null}
    </section>
  );
}

/** One backup: radio buttons A/B (ticked for `from` and `to`), when, result, trigger, size, links. */
function HistoryRow(props: { c: WebContext; deviceId: number; b: HistoryItem; from?: string; to?: string; previous?: string }) {
  const { b, deviceId: id } = props;
  return (
    <tr class={b.success ? undefined : 'failed-row'}>
      <td>{b.success ? <input type="radio" name="a" value={b.id} aria-label="compare from" checked={b.id === props.from} /> : null}</td>
      <td>{b.success ? <input type="radio" name="b" value={b.id} aria-label="compare to" checked={b.id === props.to} /> : null}</td>
      <td>{formatTime(b.started_at, props.c.get('timezone'))}</td>
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
      <td>
        {b.success ? (
          <>
            <a href={`/devices/${id}/backups/${b.id}`}>View</a>
            {props.previous ? (
              <>
                {' · '}
                <a href={`/devices/${id}/diff?a=${props.previous}&b=${b.id}`} class="compare-previous">
                  Compare with previous
                </a>
              </>
            ) : null}
          </>
        ) : b.finished_at !== null ? (
          <a href={`/devices/${id}/backups/${b.id}`} class="failure-details">
            Details
          </a>
        ) : null}
      </td>
    </tr>
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

/** The facts the page states about how the device is backed up (dt/dd pairs of the facts list). */
function DeviceFacts({ c, device }: { c: WebContext; device: Device }) {
  const app = c.get('app');
  const scope = c.get('principal').scope;
  const tz = c.get('timezone');
  const sched = getEffectiveSchedule(app.db, scope, device.id, { schedule: app.config.backup.schedule, timezone: app.config.server.timezone });
  const change = can(c, 'backups.view') ? getLastChange(app.db, scope, device.id) : undefined;
  const from = sched.source === 'device' ? 'set on the device' : sched.source === 'group' ? `from group ${sched.group_name ?? ''}` : 'the appliance default';
  return (
    <>
      <dt>Platform</dt>
      <dd>{getTemplate(app.db, device.template_id).name}</dd>
      <dt>Credential</dt>
      <dd>{can(c, 'credentials.view') ? getCredential(app.db, device.credential_id).name : `credential ${device.credential_id}`}</dd>
      <dt>Schedule</dt>
      <dd id="schedule">
        <code>{sched.expr}</code> <span class="muted">({from})</span>
        <div>
          {device.enabled ? (sched.next_run !== null ? `next run ${formatTime(sched.next_run, tz)}` : 'no next run') : 'no runs: the device is disabled'}
        </div>
      </dd>
      {change !== undefined ? (
        <>
          <dt>Last change</dt>
          <dd id="last-change">{change ? <a href={`/devices/${device.id}/backups/${change.id}`}>{formatTime(change.started_at, tz)}</a> : 'none recorded'}</dd>
        </>
      ) : null}
      <dt>Host key</dt>
      <dd id="host-key">
        {device.protocol === 'ssh' ? (
          device.host_key ? (
            <code class="fingerprint">{device.host_key}</code>
          ) : (
            'not recorded yet (first SSH contact records it)'
          )
        ) : (
          '— (Telnet)'
        )}
      </dd>
    </>
  );
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
