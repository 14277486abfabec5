// The device page's "Detect" button and the Add device form's "auto" template or credential: platform and credential detection from the web.
import type { Hono } from 'hono';
import { detectAt, detectDevice } from '../../engine/device-detect';
import { DEVICE_OPS } from '../../features/policy';
import { DEFAULT_PORT } from '../../features/devices/devices.service';
import { actorOf } from '../../http/context';
import { redirectWith } from '../render';
import { intParam, need, type WebContext, type WebEnv } from '../web-context';

export const AUTO = 'auto';

export function registerDeviceDetect(web: Hono<WebEnv>): void {
  // Detection's pick becomes the device's template and credential; nothing picked leaves the device as it was.
  web.post('/devices/:id/detect', need(DEVICE_OPS.detect), async (c) => {
    const id = intParam(c, 'id');
    const r = await detectDevice(c.get('app'), actorOf(c), id, { apply: true });
    if (r.template === null) return redirectWith(c, `/devices/${id}`, `Detection left the device as it was: ${r.reason}.`, 'error');
    return redirectWith(c, `/devices/${id}`, `Detected ${r.reason}. Template and credential set.`);
  });
}

/**
 * The Add device form with "auto" as its template and/or credential: detection at the form's address (a chosen
 * credential tried first) fills them in, or the form comes back with the reason on the field.
 */
export async function autoFormFields(
  c: WebContext,
  f: Record<string, string>,
): Promise<{ fields: Record<string, string> } | { errors: Record<string, string> }> {
  if (f.template_id !== AUTO && f.credential_id !== AUTO) return { fields: f };
  const protocol = f.protocol === 'telnet' ? 'telnet' : 'ssh';
  const port = /^\d{1,5}$/.test(f.port ?? '') ? Number(f.port) : DEFAULT_PORT[protocol];
  const group_id = /^\d+$/.test(f.group_id ?? '') ? Number(f.group_id) : null;
  const first = /^\d+$/.test(f.credential_id ?? '') ? Number(f.credential_id) : null;
  const r = await detectAt(c.get('app'), actorOf(c), { host: (f.hostname ?? '').trim(), port, protocol, group_id }, first);
  if (r.template_id === null || r.credential_id === null) return { errors: { [f.template_id === AUTO ? 'template_id' : 'credential_id']: r.reason } };
  return {
    fields: {
      ...f,
      template_id: f.template_id === AUTO ? String(r.template_id) : f.template_id,
      credential_id: f.credential_id === AUTO ? String(r.credential_id) : f.credential_id,
    },
  };
}
