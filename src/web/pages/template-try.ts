// "Try on device": run a template (as edited, unsaved) against one in-scope device and show raw and cleaned output; stores nothing.
import { TEMPLATE_OPS } from '../../features/policy';
import type { Hono } from 'hono';
import { tryTemplateOnDevice } from '../../engine/template-trial';
import { ApiError } from '../../errors';
import type { TemplateSpec } from '../../templates/types';
import { getDevice } from '../../features/devices/devices.service';
import { getTemplate } from '../../features/templates/templates.service';
import { actorOf } from '../../http/context';
import { fieldErrors, formFields, intParam, need, type WebContext, type WebEnv } from '../web-context';
import { parseTemplateForm, templatePage } from './template-form';

export function registerTemplateTry(web: Hono<WebEnv>): void {
  web.post('/templates/new/try', need(TEMPLATE_OPS.try), (c) => tryTemplate(c, null));
  web.post('/templates/:id/try', need(TEMPLATE_OPS.try), (c) => tryTemplate(c, intParam(c, 'id')));
}

async function tryTemplate(c: WebContext, id: number | null): Promise<Response> {
  const app = c.get('app');
  const stored = id === null ? null : getTemplate(app.db, id);
  const f = await formFields(c);
  const deviceId = Number(f.device_id);
  // A built-in or file template cannot be edited here, so it is tried as stored; any other template as the form shows it.
  const asStored = stored !== null && stored.source !== 'custom';
  const values = asStored ? undefined : f;
  const again = (errors: Record<string, string>) => templatePage(c, id, { values, errors, deviceId });
  if (!Number.isSafeInteger(deviceId) || deviceId < 1) return again({ device_id: 'choose a device' });
  // A device outside the user's scope is refused (403) before the form is even looked at.
  getDevice(app.db, c.get('principal').scope, deviceId);

  let spec: TemplateSpec;
  if (asStored) spec = stored;
  else {
    const p = parseTemplateForm(f, stored);
    if (!p.ok) return again(p.errors);
    spec = p.spec;
  }
  try {
    // Refused (403) before anything connects: a device outside the scope, the rules of saving this edit, backups.view.
    const trial = await tryTemplateOnDevice(app, actorOf(c), id, spec, deviceId);
    return templatePage(c, id, { values, deviceId, trial });
  } catch (err) {
    if (err instanceof ApiError && err.code === 'VALIDATION_ERROR') return again(fieldErrors(err) ?? {});
    throw err;
  }
}
