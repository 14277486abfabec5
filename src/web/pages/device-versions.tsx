// A device's stored versions: the configuration view (numbered, anchored lines, copy), a failed backup's details, downloads, and the diff of two versions.
import { BACKUP_OPS } from '../../features/policy';
import type { Hono } from 'hono';
import { raw } from 'hono/html';
import { SOURCE_ENCODING_WORDS } from '../../lib/decode';
import { describeBackupStart, getDeviceBackupRow, previousVersions } from '../../features/backups/backups.service';
import { getDevice } from '../../features/devices/devices.service';
import { getTemplateSpec } from '../../features/templates/templates.service';
import { diffBackups, readBackupTextOffThread, readBackupViewOffThread, unifiedText } from '../../features/configs/diff.service';
import { render } from '../render';
import { formatTime, intParam, need, type WebContext, type WebEnv } from '../web-context';
import { DiffView } from './diff-view';

export function registerDeviceVersions(web: Hono<WebEnv>): void {
  web.get('/devices/:id/backups/:bid', need(BACKUP_OPS.browse), (c) => versionPage(c));

  web.get('/devices/:id/backups/:bid/download', need(BACKUP_OPS.content), async (c) => {
    const id = intParam(c, 'id');
    const { device, row } = loadVersion(c, id, c.req.param('bid') ?? '');
    const text = await readBackupTextOffThread(c.get('app'), row);
    if (text === null) return c.text('This version has no configuration text.', 404);
    return attachment(c, `${device.name}-${stamp(row.started_at)}.txt`, text, 'text/plain; charset=utf-8');
  });

  web.get('/devices/:id/diff', need(BACKUP_OPS.browse), (c) => diffPage(c));
}

/** A version of a device, scope checked (its text is read separately, on a worker). */
export function loadVersion(c: WebContext, deviceId: number, backupId: string) {
  const app = c.get('app');
  const scope = c.get('principal').scope;
  return { device: getDevice(app.db, scope, deviceId), row: getDeviceBackupRow(app.db, scope, deviceId, backupId) };
}

/** A file the browser saves: the name kept to safe characters, never cached. */
export function attachment(c: WebContext, name: string, body: string, type: string): Response {
  c.header('Content-Disposition', `attachment; filename="${name.replace(/[^A-Za-z0-9._-]/g, '_')}"`);
  c.header('Cache-Control', 'no-store');
  return c.body(body, 200, { 'Content-Type': type });
}

/** A time for a file name: 20261124T130311Z. */
export function stamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\..*$/, 'Z');
}

async function versionPage(c: WebContext) {
  const id = intParam(c, 'id');
  const app = c.get('app');
  const scope = c.get('principal').scope;
  const { device, row } = loadVersion(c, id, c.req.param('bid') ?? '');
  const tz = c.get('timezone');
  const view = row.success ? await readBackupViewOffThread(app, row) : null;
  const previous = row.success ? previousVersions(app.db, scope, id, [row]).get(row.id) : undefined;
  const when = formatTime(row.started_at, tz);
  return render(
    c,
    { title: `${device.name} · ${when}`, active: '/devices' },
    <>
      <p class="crumbs">
        <a href="/devices">Devices</a> / <a href={`/devices/${id}`}>{device.name}</a>
      </p>
      <div class="title-row">
        <h1>{row.success ? `Version of ${when}` : `Failed backup of ${when}`}</h1>
        {view ? (
          <div class="actions">
            {previous ? (
              <a class="button" href={`/devices/${id}/diff?a=${previous}&b=${row.id}`} id="compare-previous">
                Compare with previous
              </a>
            ) : null}
            <button type="button" data-copy-text="#config-text" hidden>
              Copy
            </button>
            <a class="button" href={`/devices/${id}/backups/${row.id}/download`}>
              Download
            </a>
          </div>
        ) : null}
      </div>
      {row.success ? (
        view ? (
          <>
            <p class="muted">
              {view.lines} lines{view.numberedLines < view.lines ? ` (numbered up to line ${view.numberedLines})` : ''}. Select a line number to link to that
              line.
            </p>
            {row.source_encoding ? (
              <p class={row.source_encoding === 'windows-1252' ? 'flash error' : 'muted'} id="source-encoding">
                Not the device's bytes as they came: {SOURCE_ENCODING_WORDS[row.source_encoding]}.
              </p>
            ) : null}
            <pre class="config numbered" id="config-text">
              {raw(view.html)}
            </pre>
          </>
        ) : (
          <p class="flash error">The stored text of this version cannot be read (see the appliance log).</p>
        )
      ) : (
        <section class="card" id="failure">
          <h2>What happened</h2>
          <dl class="facts">
            <dt>Failure code</dt>
            <dd class="mono">{row.failure_type ?? (row.finished_at === null ? 'still running' : 'unknown')}</dd>
            <dt>Message</dt>
            <dd>{row.error_message ?? '—'}</dd>
            <dt>Attempts</dt>
            <dd class="muted">
              not recorded per backup: transient failures are retried ([backup] retries), each retry logged as "backup attempt failed, retrying"
            </dd>
            <dt>Trigger</dt>
            <dd>{row.trigger}</dd>
            <dt>Started by</dt>
            <dd id="started-by">{describeBackupStart(app.db, scope, row)}</dd>
            <dt>Started</dt>
            <dd>{when}</dd>
            <dt>Finished</dt>
            <dd>
              {formatTime(row.finished_at, tz)}
              {row.duration_ms !== null ? ` (${(row.duration_ms / 1000).toFixed(1)} s, retries included)` : ''}
            </dd>
          </dl>
        </section>
      )}
    </>,
  );
}

async function diffPage(c: WebContext) {
  const id = intParam(c, 'id');
  const a = loadVersion(c, id, c.req.query('a') ?? '');
  const b = loadVersion(c, id, c.req.query('b') ?? '');
  // Older on the left whatever order the two were picked in.
  const [older, newer] = a.row.started_at <= b.row.started_at ? [a, b] : [b, a];
  const ignore = c.req.query('ignore') === '1';
  const view = c.req.query('view') === 'unified' ? 'unified' : 'split';
  const patch = c.req.query('format') === 'patch';
  const patterns = ignore ? (getTemplateSpec(c.get('app').db, a.device.template_id)?.ignore_patterns ?? []) : [];
  const tz = c.get('timezone');
  const names = { a: formatTime(older.row.started_at, tz), b: formatTime(newer.row.started_at, tz) };
  if (patch) {
    const fileNames = { a: `a/${a.device.name} ${names.a}`, b: `b/${a.device.name} ${names.b}` };
    const r = await diffBackups(c.get('app'), older.row, newer.row, fileNames, patterns, { unified: true });
    if (!r) return c.text('One of the two versions has no stored text (a failed backup).', 404);
    const file = `${a.device.name}-${stamp(older.row.started_at)}-${stamp(newer.row.started_at)}.patch`;
    return attachment(c, file, unifiedText(r, fileNames), 'text/x-diff; charset=utf-8');
  }
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
        <a href={q({ view: 'split' })} class={view === 'split' ? 'active' : undefined} aria-current={view === 'split' ? 'true' : undefined}>
          Side by side
        </a>
        <a href={q({ view: 'unified' })} class={view === 'unified' ? 'active' : undefined} aria-current={view === 'unified' ? 'true' : undefined}>
          Unified
        </a>
        <a href={q({ ignore: ignore ? '0' : '1' })}>{ignore ? 'Show ignored lines' : `Hide ignored lines (${patterns.length || 'template'} patterns)`}</a>
        {result && !result.identical ? (
          <>
            <button type="button" data-copy-url={q({ format: 'patch' })} hidden>
              Copy patch
            </button>
            <a href={q({ format: 'patch' })} id="download-patch" download>
              Download .patch
            </a>
          </>
        ) : null}
        <a href={`/compare?da=${id}&a=${older.row.id}&db=${id}&b=${newer.row.id}`}>Compare with another device…</a>
      </nav>
      {result ? <DiffView result={result} view={view} /> : <p class="flash error">One of the two versions has no stored text (a failed backup).</p>}
    </>,
  );
}
