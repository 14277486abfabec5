// Retire and reactivate a device from its page, and delete it with its history behind a typed confirmation (its name).
import type { Hono } from 'hono';
import { DEVICE_OPS } from '../../features/policy';
import { deleteDeviceConfirmed, deviceDeletionImpact, reactivateDevice, retireDevice } from '../../features/devices/devices-retire.service';
import type { Device } from '../../features/devices/devices.service';
import { actorOf } from '../../http/context';
import { Csrf, FieldError } from '../components/layout';
import { redirectWith, render } from '../render';
import { can, fieldErrors, formFields, formatTime, intParam, need, type WebContext, type WebEnv } from '../web-context';

export function registerDeviceRetire(web: Hono<WebEnv>): void {
  web.post('/devices/:id/retire', need(DEVICE_OPS.retire), (c) => {
    const d = retireDevice(c.get('app').db, actorOf(c), intParam(c, 'id'));
    return redirectWith(c, `/devices/${d.id}`, `Device ${d.name} retired: its history is kept, it is no longer backed up.`);
  });
  web.post('/devices/:id/reactivate', need(DEVICE_OPS.reactivate), (c) => {
    const d = reactivateDevice(c.get('app').db, actorOf(c), intParam(c, 'id'));
    return redirectWith(c, `/devices/${d.id}`, `Device ${d.name} is back in service and enabled.`);
  });
  web.get('/devices/:id/delete', need(DEVICE_OPS.delete), (c) => deletePage(c, intParam(c, 'id')));
  web.post('/devices/:id/delete', need(DEVICE_OPS.delete), async (c) => {
    const id = intParam(c, 'id');
    const f = await formFields(c);
    const db = c.get('app').db;
    const { device } = deviceDeletionImpact(db, actorOf(c), id);
    try {
      deleteDeviceConfirmed(db, actorOf(c), id, f.confirm_name ?? '');
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors) return deletePage(c, id, errors);
      throw err;
    }
    return redirectWith(c, '/devices', `Device ${device.name} and its backup records deleted.`);
  });
}

/** What deleting removes, and a field where the user types the device's name to go ahead; retiring offered first. */
function deletePage(c: WebContext, id: number, errors?: Record<string, string> | null) {
  const { device, backups } = deviceDeletionImpact(c.get('app').db, actorOf(c), id);
  const csrf = c.get('session').csrfToken;
  return render(
    c,
    { title: `Delete ${device.name}`, active: '/devices', status: errors ? 422 : 200 },
    <>
      <p class="crumbs">
        <a href="/devices">Devices</a> / <a href={`/devices/${id}`}>{device.name}</a> / Delete
      </p>
      <h1>Delete {device.name} and its history</h1>
      <section class="card">
        <p>
          Deleting removes the device and <strong>all {backups} of its backup records</strong>: its versions can no longer be read, searched or compared. This
          cannot be undone.
        </p>
        {!device.retired && can(c, DEVICE_OPS.retire) ? (
          <form method="post" action={`/devices/${id}/retire`} class="inline">
            <Csrf token={csrf} />
            <p>To stop backing it up and keep its history, retire it instead.</p>
            <button type="submit">Retire instead</button>
          </form>
        ) : null}
        <form method="post" action={`/devices/${id}/delete`} id="delete-device">
          <Csrf token={csrf} />
          <label>
            Type the device’s name, <span class="mono">{device.name}</span>, to delete it and its history
            <input
              name="confirm_name"
              autocomplete="off"
              required
              aria-invalid={errors?.confirm_name ? 'true' : undefined}
              aria-describedby={errors?.confirm_name ? 'confirm_name-error' : undefined}
            />
          </label>
          <FieldError errors={errors} name="confirm_name" />
          <button type="submit" class="danger">
            Delete device and history
          </button>
        </form>
      </section>
    </>,
  );
}

/** The device page's retire/reactivate button, and the note saying a retired device is kept for its history only. */
export function RetireControls({ c, device }: { c: WebContext; device: Device }) {
  const csrf = c.get('session').csrfToken;
  if (device.retired) {
    return can(c, DEVICE_OPS.reactivate) ? (
      <form method="post" action={`/devices/${device.id}/reactivate`} class="inline">
        <Csrf token={csrf} />
        <button type="submit">Reactivate</button>
      </form>
    ) : null;
  }
  return can(c, DEVICE_OPS.retire) ? (
    <form
      method="post"
      action={`/devices/${device.id}/retire`}
      class="inline"
      data-confirm={`Retire ${device.name}? Its history is kept; it is no longer backed up.`}
    >
      <Csrf token={csrf} />
      <button type="submit">Retire</button>
    </form>
  ) : null;
}

export function RetiredNote({ c, device }: { c: WebContext; device: Device }) {
  if (!device.retired) return null;
  return (
    <p class="flash info" id="retired-note">
      Retired {formatTime(device.retired.at, c.get('timezone'))}
      {device.retired.by ? ` by ${device.retired.by}` : ''}: its versions are kept and can be read, searched and compared; it is not backed up until it is
      reactivated.
    </p>
  );
}
