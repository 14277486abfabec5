// Comparing two devices: a device and one of its versions on each side (both in the user's scope), the diff, and its .patch.
import { BACKUP_OPS } from '../../features/policy';
import type { Hono } from 'hono';
import { ApiError } from '../../errors';
import { getDeviceBackupRow, listDeviceHistory } from '../../features/backups/backups.service';
import { getDevice, listDevices, type Device } from '../../features/devices/devices.service';
import { getTemplateSpec } from '../../features/templates/templates.service';
import { diffBackups, unifiedText } from '../../features/configs/diff.service';
import { render } from '../render';
import { formatTime, intQuery, need, type WebContext, type WebEnv } from '../web-context';
import { DiffView } from './diff-view';
import { attachment, loadVersion, stamp } from './device-versions';

/** Devices offered in each picker (by name); past it, the device is given by its id in the address. */
const MAX_PICK_DEVICES = 1_000;
/** Versions offered per device, newest first. */
const MAX_PICK_VERSIONS = 50;

export function registerCompare(web: Hono<WebEnv>): void {
  web.get('/compare', need(BACKUP_OPS.browse), (c) => comparePage(c));
}

interface Side {
  device: Device | null;
  versions: { id: string; started_at: number }[];
  backupId: string;
}

/** One side as picked: the device (scope checked: 403/404 as its page), its newest versions, the version chosen (default newest). */
function pickSide(c: WebContext, deviceKey: string, versionKey: string): Side {
  const app = c.get('app');
  const scope = c.get('principal').scope;
  const id = intQuery(c, deviceKey, 0);
  if (!id) return { device: null, versions: [], backupId: '' };
  const device = getDevice(app.db, scope, id);
  const versions = listDeviceHistory(app.db, scope, id, 1, MAX_PICK_VERSIONS).items.filter((b) => b.success && b.config_snapshot_hash);
  let asked = c.req.query(versionKey) ?? '';
  // A version left over from the device picked before (the form sends both) gives way to this device's newest.
  if (asked && !versions.some((v) => v.id === asked) && !belongsTo(c, id, asked)) asked = '';
  return { device, versions, backupId: asked || versions[0]?.id || '' };
}

function belongsTo(c: WebContext, deviceId: number, backupId: string): boolean {
  try {
    getDeviceBackupRow(c.get('app').db, c.get('principal').scope, deviceId, backupId);
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.code === 'BACKUP_NOT_FOUND') return false;
    throw err;
  }
}

async function comparePage(c: WebContext) {
  const app = c.get('app');
  const tz = c.get('timezone');
  const left = pickSide(c, 'da', 'a');
  const right = pickSide(c, 'db', 'b');
  const ignore = c.req.query('ignore') === '1';
  const view = c.req.query('view') === 'unified' ? 'unified' : 'split';
  const ready = left.device && right.device && left.backupId && right.backupId;
  let result: Awaited<ReturnType<typeof diffBackups>> = null;
  let names = { a: '', b: '' };
  if (ready) {
    const a = loadVersion(c, left.device!.id, left.backupId);
    const b = loadVersion(c, right.device!.id, right.backupId);
    names = { a: `${a.device.name} ${formatTime(a.row.started_at, tz)}`, b: `${b.device.name} ${formatTime(b.row.started_at, tz)}` };
    const patterns = ignore ? [...new Set([a.device.template_id, b.device.template_id].flatMap((t) => getTemplateSpec(app.db, t)?.ignore_patterns ?? []))] : [];
    if (c.req.query('format') === 'patch') {
      const files = { a: `a/${names.a}`, b: `b/${names.b}` };
      const r = await diffBackups(app, a.row, b.row, files, patterns, { unified: true });
      if (!r) return c.text('One of the two versions has no stored text (a failed backup).', 404);
      return attachment(
        c,
        `${a.device.name}-${stamp(a.row.started_at)}-${b.device.name}-${stamp(b.row.started_at)}.patch`,
        unifiedText(r, files),
        'text/x-diff; charset=utf-8',
      );
    }
    result = await diffBackups(app, a.row, b.row, names, patterns);
  }
  const devices = listDevices(app.db, c.get('principal').scope, {}, 1, MAX_PICK_DEVICES).items;
  const params = new URLSearchParams({
    da: String(left.device?.id ?? ''),
    a: left.backupId,
    db: String(right.device?.id ?? ''),
    b: right.backupId,
    ignore: ignore ? '1' : '0',
    view,
  });
  const q = (over: Record<string, string>) => `/compare?${new URLSearchParams({ ...Object.fromEntries(params), ...over })}`;
  return render(
    c,
    { title: 'Compare devices', active: '/devices' },
    <>
      <p class="crumbs">
        <a href="/devices">Devices</a> / Compare
      </p>
      <h1>Compare two devices</h1>
      <form method="get" action="/compare" class="row filters" id="compare-form">
        <SidePicker label="Left" deviceKey="da" versionKey="a" side={left} devices={devices} tz={tz} />
        <SidePicker label="Right" deviceKey="db" versionKey="b" side={right} devices={devices} tz={tz} />
        <label class="check">
          <input type="checkbox" name="ignore" value="1" checked={ignore} /> hide lines the templates ignore
        </label>
        <button type="submit" class="primary">
          Compare
        </button>
      </form>
      <p class="muted">Pick the devices, then their versions (the newest is taken until you pick another).</p>
      {ready ? (
        <>
          <p>
            From <a href={`/devices/${left.device!.id}/backups/${left.backupId}`}>{names.a}</a> to{' '}
            <a href={`/devices/${right.device!.id}/backups/${right.backupId}`}>{names.b}</a>
          </p>
          <nav class="tabs" aria-label="Diff options">
            <a href={q({ view: 'split' })} class={view === 'split' ? 'active' : undefined}>
              Side by side
            </a>
            <a href={q({ view: 'unified' })} class={view === 'unified' ? 'active' : undefined}>
              Unified
            </a>
            {result && !result.identical ? (
              <a href={q({ format: 'patch' })} id="download-patch" download>
                Download .patch
              </a>
            ) : null}
          </nav>
          {result ? <DiffView result={result} view={view} /> : <p class="flash error">One of the two versions has no stored text (a failed backup).</p>}
        </>
      ) : null}
    </>,
  );
}

function SidePicker(props: { label: string; deviceKey: string; versionKey: string; side: Side; devices: Device[]; tz: string }) {
  const { side } = props;
  return (
    <fieldset>
      <legend>{props.label}</legend>
      <label>
        Device
        <select name={props.deviceKey}>
          <option value="">Choose…</option>
          {side.device && !props.devices.some((d) => d.id === side.device!.id) ? (
            <option value={String(side.device.id)} selected>
              {side.device.name}
            </option>
          ) : null}
          {props.devices.map((d) => (
            <option value={String(d.id)} selected={d.id === side.device?.id}>
              {d.name}
            </option>
          ))}
        </select>
      </label>
      {side.device ? (
        <label>
          Version
          <select name={props.versionKey}>
            {side.versions.map((v) => (
              <option value={v.id} selected={v.id === side.backupId}>
                {formatTime(v.started_at, props.tz)}
              </option>
            ))}
            {side.backupId && !side.versions.some((v) => v.id === side.backupId) ? (
              <option value={side.backupId} selected>
                {side.backupId}
              </option>
            ) : null}
          </select>
        </label>
      ) : null}
    </fieldset>
  );
}
