// The hold on a device's backups (who changed what, when) with an "Approve" button for a user entitled to its credential.
import { getDeviceHoldView } from '../../features/devices/device-holds.service';
import { actorOf } from '../../http/context';
import { Csrf } from './layout';
import { formatTime, type WebContext } from '../web-context';

const FIELD_LABEL: Record<string, string> = {
  created: 'device created',
  hostname: 'hostname',
  port: 'port',
  protocol: 'protocol',
  credential_id: 'credential',
  host_key: 'host key accepted',
  template_id: 'custom template',
};

/** Renders nothing for a device that is not held. The approve form posts the address shown, so a stale approval is refused. */
export function DeviceHold(props: { c: WebContext; deviceId: number }) {
  const { c, deviceId } = props;
  const view = getDeviceHoldView(c.get('app').db, actorOf(c), deviceId);
  if (!view) return null;
  const { hold } = view;
  const credential = hold.credential_name ?? `#${hold.credential_id}`;
  const address = `${hold.protocol}://${hold.hostname}:${hold.port}`;
  const prior = hold.prior ? `${hold.prior.protocol}://${hold.prior.hostname}:${hold.prior.port} (credential #${hold.prior.credential_id})` : null;
  return (
    <section class="card" id="device-hold">
      <h2>Backups held</h2>
      <p>
        Changed by <strong>{hold.held_by}</strong> at {formatTime(hold.held_at, c.get('timezone'))}: {hold.changed.map((f) => FIELD_LABEL[f] ?? f).join(', ')}.
        No backup logs in until a user entitled to credential <strong>{credential}</strong> approves this address.
      </p>
      <dl class="facts">
        <dt>Held address</dt>
        <dd class="mono">{address}</dd>
        <dt>Credential</dt>
        <dd>{credential}</dd>
        {prior ? (
          <>
            <dt>Last approved</dt>
            <dd class="mono">{prior}</dd>
          </>
        ) : null}
        <dt>Why</dt>
        <dd>{hold.reason}</dd>
      </dl>
      {view.approvable ? (
        <form method="post" action={`/devices/${deviceId}/hold/approve`} class="inline" data-confirm={`Send credential ${credential} to ${address}?`}>
          <Csrf token={c.get('session').csrfToken} />
          <input type="hidden" name="hostname" value={hold.hostname} />
          <input type="hidden" name="port" value={String(hold.port)} />
          <input type="hidden" name="protocol" value={hold.protocol} />
          <input type="hidden" name="credential_id" value={String(hold.credential_id)} />
          <button type="submit" class="primary">
            Approve
          </button>
        </form>
      ) : (
        <p class="muted">You cannot approve it: {view.notApprovable}.</p>
      )}
    </section>
  );
}
