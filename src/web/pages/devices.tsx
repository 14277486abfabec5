// Devices: create, edit, retire and delete (device-retire.tsx), host-key acceptance and hold approval; the list itself is device-list.tsx.
import { DEVICE_OPS } from '../../features/policy';
import type { Hono } from 'hono';
import { ApiError } from '../../errors';
import { DEFAULT_PORT, acceptHostKey, createDevice, getDevice, getHostKeyChange, updateDevice } from '../../features/devices/devices.service';
import { approveDeviceHold, getDeviceHoldView } from '../../features/devices/device-holds.service';
import { actorOf } from '../../http/context';
import { DeviceHold } from '../components/device-hold';
import { Csrf } from '../components/layout';
import { redirectWith, render } from '../render';
import { can, fieldErrors, formFields, formatTime, intParam, need, type WebContext, type WebEnv } from '../web-context';
import { DeviceForm, parseDeviceForm } from './device-form';
import { owningSource } from '../../features/inventory/inventory-owned';
import { groupOptions } from './groups-options';
import { listPage } from './device-list';
import { autoFormFields } from './device-detect';
import { registerDeviceRetire } from './device-retire';
import { registerDeviceBulk } from './device-bulk';

export function registerDevices(web: Hono<WebEnv>): void {
  web.get('/devices', need(DEVICE_OPS.list), (c) => listPage(c));
  web.get('/devices/new', need(DEVICE_OPS.create), (c) => formPage(c, null));
  web.post('/devices', need(DEVICE_OPS.create), async (c) => {
    const f = await formFields(c);
    const auto = f.hostname?.trim() ? await autoFormFields(c, f) : { fields: f };
    if ('errors' in auto) return formPage(c, null, f, auto.errors);
    const parsed = parseDeviceForm(auto.fields);
    if (!parsed.ok) return formPage(c, null, f, parsed.errors);
    try {
      const d = createDevice(c.get('app').db, actorOf(c), parsed.input);
      return redirectWith(c, `/devices/${d.id}`, `Device ${d.name} created.${heldNote(c, d.id)}`);
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors)
        return formPage(
          c,
          null,
          f,
          err instanceof ApiError && typeof err.details.field === 'string' && err.details.field ? { [err.details.field]: err.message } : errors,
        );
      throw err;
    }
  });
  web.get('/devices/:id/edit', need(DEVICE_OPS.update), (c) => formPage(c, intParam(c, 'id')));
  web.post('/devices/:id/edit', need(DEVICE_OPS.update), async (c) => {
    const id = intParam(c, 'id');
    const f = await formFields(c);
    const db = c.get('app').db;
    getDevice(db, c.get('principal').scope, id); // 404/403 before anything is said about the form
    const parsed = parseDeviceForm(f);
    if (!parsed.ok) return formPage(c, id, f, parsed.errors);
    try {
      // The form shows every field, so an empty port means "the protocol's default", as on creation. A host key
      // is accepted by its own button (one fingerprint), never by saving the form.
      const { accept_host_key_change: _ignored, ...input } = parsed.input;
      const d = updateDevice(db, actorOf(c), id, { ...input, port: input.port ?? DEFAULT_PORT[input.protocol] });
      return redirectWith(c, `/devices/${id}`, `Device ${d.name} saved.${heldNote(c, id)}`);
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors)
        return formPage(
          c,
          id,
          f,
          err instanceof ApiError && typeof err.details.field === 'string' && err.details.field ? { [err.details.field]: err.message } : errors,
        );
      throw err;
    }
  });
  registerDeviceRetire(web);
  registerDeviceBulk(web);
  // The fingerprint posted is the one the page showed: a device offering another key since is refused (409).
  web.post('/devices/:id/host-key/accept', need(DEVICE_OPS.acceptHostKey), async (c) => {
    const id = intParam(c, 'id');
    const f = await formFields(c);
    try {
      acceptHostKey(c.get('app').db, actorOf(c), id, f.fingerprint ?? '');
    } catch (err) {
      if (err instanceof ApiError && err.status < 500 && err.status !== 404) return redirectWith(c, `/devices/${id}/edit`, err.message, 'error');
      throw err;
    }
    return redirectWith(c, `/devices/${id}`, `Host key ${f.fingerprint} accepted for the next backup.${heldNote(c, id)}`);
  });
  // The fields posted are the address the page showed: a device changed since is refused (409), nothing approved.
  web.post('/devices/:id/hold/approve', need(DEVICE_OPS.approveHold), async (c) => {
    const id = intParam(c, 'id');
    const f = await formFields(c);
    const shown = { hostname: f.hostname ?? '', port: Number(f.port), protocol: f.protocol ?? '', credential_id: Number(f.credential_id) };
    try {
      approveDeviceHold(c.get('app').db, actorOf(c), id, shown);
    } catch (err) {
      if (err instanceof ApiError && err.status < 500 && err.status !== 404) return redirectWith(c, `/devices/${id}`, err.message, 'error');
      throw err;
    }
    return redirectWith(c, `/devices/${id}`, `Address ${shown.protocol}://${shown.hostname}:${shown.port} approved: the next backup logs in.`);
  });
}

/** The flash text's tail when the change left the device held. */
function heldNote(c: WebContext, id: number): string {
  const view = getDeviceHoldView(c.get('app').db, actorOf(c), id);
  return view ? ` Its backups are held until a user entitled to credential ${view.hold.credential_name ?? view.hold.credential_id} approves its address.` : '';
}

function formPage(c: WebContext, id: number | null, values?: Record<string, string>, errors?: Record<string, string> | null) {
  const db = c.get('app').db;
  const scope = c.get('principal').scope;
  const device = id === null ? undefined : getDevice(db, scope, id);
  return render(
    c,
    { title: device ? `Edit ${device.name}` : 'Add device', active: '/devices', status: errors ? 422 : 200 },
    <>
      <h1>{device ? `Edit ${device.name}` : 'Add device'}</h1>
      <section class="card">
        <DeviceForm
          db={db}
          csrf={c.get('session').csrfToken}
          action={device ? `/devices/${device.id}/edit` : '/devices'}
          groups={groupOptions(db, scope)}
          scope={scope}
          device={device}
          values={values}
          errors={errors}
          defaultSchedule={c.get('app').config.backup.schedule}
          ownedBy={device ? owningSource(db, device.id) : null}
        />
      </section>
      {device ? <DeviceHold c={c} deviceId={device.id} /> : null}
      {device ? <HostKeyChange c={c} deviceId={device.id} /> : null}
      {device && can(c, 'devices.delete') ? (
        <p>
          <a class="button danger" href={`/devices/${device.id}/delete`}>
            Delete device and history…
          </a>
        </p>
      ) : null}
    </>,
  );
}

/** The changed host key a device offered: its fingerprint and an "Accept this key" button for exactly that key. */
export function HostKeyChange(props: { c: WebContext; deviceId: number }) {
  const { c, deviceId } = props;
  const offer = getHostKeyChange(c.get('app').db, c.get('principal').scope, deviceId);
  if (!offer) return null;
  const device = getDevice(c.get('app').db, c.get('principal').scope, deviceId);
  return (
    <section class="card" id="host-key-change">
      <h2>Changed SSH host key</h2>
      <p>
        The device presented a different host key at {formatTime(offer.seen_at, c.get('timezone'))}. Recorded: <code>{device.host_key ?? '—'}</code>; offered:{' '}
        <code class="fingerprint">{offer.fingerprint}</code>
      </p>
      {offer.approved_at !== null ? (
        <p>Accepted by {offer.approved_by ?? '?'}: the next backup accepts this key, and only this one.</p>
      ) : can(c, 'devices.update') ? (
        <form method="post" action={`/devices/${deviceId}/host-key/accept`} class="inline" data-confirm={`Accept host key ${offer.fingerprint}?`}>
          <Csrf token={c.get('session').csrfToken} />
          <input type="hidden" name="fingerprint" value={offer.fingerprint} />
          <button type="submit">Accept this key</button>
        </form>
      ) : null}
    </section>
  );
}
