// The Jobs page: backup jobs (running, queued, retrying, recent) with who started them, progress, cancel and resume; starting bulk jobs; their internal JSON routes.
import { BACKUP_OPS } from '../../features/policy';
import type { Hono } from 'hono';
import type { Child } from 'hono/jsx';
import { ApiError } from '../../errors';
import { cancelBackupJob, getBackupJob, listBackupJobs, type JobItemView, type JobSelection, type JobView } from '../../features/backups/jobs.service';
import { actorOf } from '../../http/context';
import { resumeBackupJobHere, startBackupJob } from '../backup-jobs';
import { ActionsHeader, Csrf } from '../components/layout';
import { redirectWith, render } from '../render';
import { can, formatTime, need, type WebContext, type WebEnv } from '../web-context';

/** How often the page (with script) refreshes itself while a job it shows is open. */
const REFRESH_SECONDS = 2;

/** The selection a bulk form posts: selection=devices with device_id fields, selection=group with group_id, or selection=all. */
function selectionOf(body: Record<string, string | File | (string | File)[]>): JobSelection {
  const list = (v: unknown): string[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is string => typeof x === 'string');
  const id = (v: string, field: string): number => {
    if (!/^\d{1,15}$/.test(v)) throw ApiError.validation([{ field, message: 'must be a numeric id' }], `${field} must be a numeric id`);
    return Number(v);
  };
  const kind = list(body.selection)[0];
  if (kind === 'all') return { all: true };
  if (kind === 'group') return { groupId: id(list(body.group_id)[0] ?? '', 'group_id') };
  if (kind === 'devices') {
    const ids = list(body.device_id).map((v) => id(v, 'device_id'));
    if (ids.length === 0) throw ApiError.validation([{ field: 'device_id', message: 'select at least one device' }], 'Select at least one device');
    return { deviceIds: ids };
  }
  throw ApiError.validation([{ field: 'selection', message: 'must be devices, group or all' }], 'selection must be devices, group or all');
}

export function registerJobs(web: Hono<WebEnv>): void {
  web.get('/jobs', need(BACKUP_OPS.jobs), (c) => listPage(c));
  web.get('/jobs/:id', need(BACKUP_OPS.jobs), (c) => jobPage(c, c.req.param('id')));
  // Without script: start the job and go to its page, which follows it (a reload, or the page's own refresh).
  web.post('/jobs', need(BACKUP_OPS.run), async (c) => {
    const body = await c.req.parseBody({ all: true });
    const back = typeof body.back === 'string' && body.back.startsWith('/devices') ? body.back : '/devices';
    try {
      const job = startBackupJob(c.get('app'), actorOf(c), selectionOf(body));
      return redirectWith(c, `/jobs/${job.id}`, `Backup of ${job.label} started: ${job.deviceIds.length} device(s).`);
    } catch (err) {
      // Nothing selected, or nothing enabled in it: said on the list. Refusals (403, 404) are the error page.
      if (err instanceof ApiError && err.status === 422) return redirectWith(c, back, err.message, 'error');
      throw err;
    }
  });
  web.post('/jobs/:id/cancel', need(BACKUP_OPS.cancelJob), (c) => {
    const id = c.req.param('id');
    try {
      const r = cancelBackupJob(c.get('app').db, actorOf(c), id);
      return redirectWith(c, `/jobs/${id}`, `Cancelled: ${r.cancelled} queued backup(s) dropped, ${r.stopping} running backup(s) stopping.`);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) return redirectWith(c, `/jobs/${id}`, err.message, 'error');
      throw err;
    }
  });

  web.post('/jobs/:id/resume', need(BACKUP_OPS.resumeJob), (c) => {
    const id = c.req.param('id');
    try {
      const r = resumeBackupJobHere(c.get('app'), actorOf(c), id);
      return redirectWith(c, `/jobs/${id}`, `Resumed: ${r.resumed} interrupted backup(s) of ${r.label} queued again.`);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) return redirectWith(c, `/jobs/${id}`, err.message, 'error');
      throw err;
    }
  });

  // The same as JSON for scripts of the interface (same permissions, scope and services).
  web.get('/api/jobs', need(BACKUP_OPS.jobs), (c) => {
    c.header('Cache-Control', 'no-store');
    return c.json({ items: listBackupJobs(c.get('app').db, c.get('principal'), { openOnly: c.req.query('open') === '1' }) });
  });
  web.get('/api/jobs/:id', need(BACKUP_OPS.jobs), (c) => {
    c.header('Cache-Control', 'no-store');
    return c.json(getBackupJob(c.get('app').db, c.get('principal'), c.req.param('id')));
  });
  web.post('/api/jobs', need(BACKUP_OPS.run), async (c) => {
    const job = startBackupJob(c.get('app'), actorOf(c), selectionOf(await c.req.parseBody({ all: true })));
    return c.json(getBackupJob(c.get('app').db, c.get('principal'), job.id), 202);
  });
  web.post('/api/jobs/:id/cancel', need(BACKUP_OPS.cancelJob), (c) => {
    const id = c.req.param('id');
    cancelBackupJob(c.get('app').db, actorOf(c), id);
    return c.json(getBackupJob(c.get('app').db, c.get('principal'), id));
  });
  web.post('/api/jobs/:id/resume', need(BACKUP_OPS.resumeJob), (c) => {
    const id = c.req.param('id');
    resumeBackupJobHere(c.get('app'), actorOf(c), id);
    return c.json(getBackupJob(c.get('app').db, c.get('principal'), id), 202);
  });
}

const STATE_BADGE: Record<string, string> = {
  queued: 'unknown',
  running: 'unknown',
  retrying: 'expired',
  succeeded: 'ok',
  finished: 'ok',
  failed: 'failed',
  skipped: 'muted',
  cancelled: 'muted',
  interrupted: 'failed',
};

/** A job's state as a badge: a finished job where backups failed says so, red when none succeeded. */
function JobState({ job, id, extra }: { job: JobView; id?: string; extra?: string }) {
  const p = job.progress;
  const worked = p.first + p.changed + p.unchanged;
  const failedAll = job.state === 'finished' && p.failed > 0 && worked === 0;
  const failedSome = job.state === 'finished' && p.failed > 0 && worked > 0;
  const tone = failedAll ? 'failed' : failedSome ? 'expired' : (STATE_BADGE[job.state] ?? 'unknown');
  const text = failedAll ? 'finished: every backup failed' : failedSome ? `finished, ${p.failed} failed` : job.state;
  return (
    <span class={`badge ${tone}${extra ? ` ${extra}` : ''}`} id={id}>
      {text}
    </span>
  );
}

function Progress({ job }: { job: JobView }) {
  const p = job.progress;
  const parts = [
    p.first ? `${p.first} first version${p.first === 1 ? '' : 's'} stored` : '',
    p.changed ? `${p.changed} changed` : '',
    p.unchanged ? `${p.unchanged} no change` : '',
    p.failed ? `${p.failed} failed` : '',
    p.retrying ? `${p.retrying} retrying` : '',
    p.skipped ? `${p.skipped} skipped` : '',
    p.cancelled ? `${p.cancelled} cancelled` : '',
    p.interrupted ? `${p.interrupted} interrupted` : '',
  ].filter(Boolean);
  return (
    <div class="job-progress">
      <progress max={p.total} value={p.done} aria-label={`${job.label}: ${p.done} of ${p.total} done`} />{' '}
      <span class="progress-count">
        {p.done}/{p.total}
      </span>
      {parts.length ? <span class="muted"> · {parts.join(', ')}</span> : null}
    </div>
  );
}

function CancelButton({ c, job }: { c: WebContext; job: JobView }) {
  if (!job.can_cancel) return null;
  return (
    <form method="post" action={`/jobs/${job.id}/cancel`} class="inline" data-confirm={`Cancel what is left of the backup of ${job.label}?`}>
      <Csrf token={c.get('session').csrfToken} />
      <button type="submit" class="danger">
        Cancel
      </button>
    </form>
  );
}

function ResumeButton({ c, job }: { c: WebContext; job: JobView }) {
  if (!job.can_resume) return null;
  return (
    <form method="post" action={`/jobs/${job.id}/resume`} class="inline">
      <Csrf token={c.get('session').csrfToken} />
      <button type="submit">Resume</button>
    </form>
  );
}

/** The part of a page that refreshes itself while a job is open (data-refresh; app.js), or on reload without script. */
function Live({ open, children }: { open: boolean; children?: Child }) {
  return (
    <div id="jobs-live" data-refresh={open ? String(REFRESH_SECONDS) : undefined} aria-live="polite">
      {children}
    </div>
  );
}

function listPage(c: WebContext) {
  const tz = c.get('timezone');
  const mine = c.req.query('mine') === '1';
  const jobs = listBackupJobs(c.get('app').db, c.get('principal'), { mine });
  const open = jobs.some((j) => j.state === 'queued' || j.state === 'running');
  return render(
    c,
    { title: 'Jobs', active: '/jobs' },
    <>
      <div class="title-row">
        <h1>Backup jobs</h1>
        <div class="actions">
          <a href={mine ? '/jobs' : '/jobs?mine=1'}>{mine ? 'Everyone’s jobs' : 'My jobs only'}</a>
          <a class="button" href={mine ? '/jobs?mine=1' : '/jobs'}>
            Refresh
          </a>
        </div>
      </div>
      <Live open={open}>
        {jobs.length === 0 ? (
          <p class="empty">No backup jobs yet. Start one from the device list (“Back up selected”, “Back up this group”, “Back up all”).</p>
        ) : (
          <div class="table-wrap">
            <table class="list" id="jobs">
              <thead>
                <tr>
                  <th>Backup of</th>
                  <th>State</th>
                  <th>Progress</th>
                  <th>Started by</th>
                  <th>Requested</th>
                  <ActionsHeader />
                </tr>
              </thead>
              <tbody>
                {jobs.map((j) => (
                  <tr data-job={j.id}>
                    <td>
                      <a href={`/jobs/${j.id}`}>{j.label}</a>
                    </td>
                    <td>
                      <JobState job={j} extra="job-state" />
                    </td>
                    <td>
                      <Progress job={j} />
                    </td>
                    <td>
                      {j.requested_by} <span class="muted">({j.door})</span>
                    </td>
                    <td>{formatTime(j.created_at, tz)}</td>
                    <td>
                      <CancelButton c={c} job={j} />
                      <ResumeButton c={c} job={j} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Live>
    </>,
  );
}

function ItemResult({ item }: { item: JobItemView }) {
  if (item.state === 'succeeded') return <span class={`badge ${item.outcome === 'changed' ? 'changed' : 'ok'}`}>{item.result}</span>;
  if (item.state === 'retrying' || (item.state === 'running' && item.progress))
    return (
      <span>
        attempt {item.attempt}
        {item.progress ? ` (${item.progress})` : ''}
      </span>
    );
  if (item.state === 'running') return <span class="muted">backing up…</span>;
  if (item.state === 'failed')
    return (
      <span>
        <strong>{item.failure ?? 'failed'}</strong> <span class="muted">{item.message}</span>
      </span>
    );
  return item.message ? <span class="muted">{item.message}</span> : null;
}

function jobPage(c: WebContext, id: string) {
  const tz = c.get('timezone');
  const job = getBackupJob(c.get('app').db, c.get('principal'), id);
  const open = job.state === 'queued' || job.state === 'running';
  return render(
    c,
    { title: `Backup of ${job.label}`, active: '/jobs' },
    <>
      <p class="crumbs">
        <a href="/jobs">Jobs</a> / {job.label}
      </p>
      <div class="title-row">
        <h1>Backup of {job.label}</h1>
        <a class="button" href={`/jobs/${job.id}`}>
          Refresh
        </a>
      </div>
      <Live open={open}>
        {/* In the live part, so Cancel goes (and Resume comes) when the job ends without a reload. */}
        {job.can_cancel || job.can_resume ? (
          <div class="actions" id="job-actions">
            <CancelButton c={c} job={job} />
            <ResumeButton c={c} job={job} />
          </div>
        ) : null}
        <p>
          <JobState job={job} id="job-state" /> Requested by {job.requested_by} ({job.door}) at {formatTime(job.created_at, tz)}
          {job.finished_at ? `, ended ${formatTime(job.finished_at, tz)}` : ''}
          {job.cancelled_by ? `; cancelled by ${job.cancelled_by}` : ''}.
        </p>
        <Progress job={job} />
        <div class="table-wrap">
          <table class="list" id="job-items">
            <thead>
              <tr>
                <th>Device</th>
                <th>State</th>
                <th>Result</th>
                <th>Backup</th>
              </tr>
            </thead>
            <tbody>
              {job.items.map((i) => (
                <tr data-device={String(i.device_id)} class={i.state === 'failed' ? 'failed-row' : undefined}>
                  <td>{can(c, 'devices.view') ? <a href={`/devices/${i.device_id}`}>{i.device_name}</a> : i.device_name}</td>
                  <td>
                    <span class={`badge ${STATE_BADGE[i.state] ?? 'unknown'} item-state`}>{i.state}</span>
                  </td>
                  <td class="item-result">
                    <ItemResult item={i} />
                  </td>
                  <td>
                    {i.backup_id ? <a href={`/devices/${i.device_id}/backups/${i.backup_id}`}>{i.state === 'succeeded' ? 'View' : 'Failed backup'}</a> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Live>
    </>,
  );
}
