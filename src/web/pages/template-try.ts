// "Try on device": run a template (as edited, unsaved) against one in-scope device and show raw and cleaned output; stores nothing.
import type { Hono } from 'hono';
import { collectConfig, redaction } from '../../engine/collect';
import { loadBackupJob } from '../../features/backups/backup-jobs.service';
import { limitsFromConfig } from '../../engine/runner';
import { validateTemplate } from '../../templates/index';
import { applyTemplate } from '../../engine/normalise';
import type { TemplateSpec } from '../../templates/types';
import { ApiError } from '../../errors';
import { getDevice } from '../../features/devices/devices.service';
import { authorizeTemplateTrial, getTemplate, recordTemplateTrial } from '../../features/templates/templates.service';
import { actorOf } from '../../http/context';
import { fieldErrors, formFields, intParam, need, type WebContext, type WebEnv } from '../web-context';
import { parseTemplateForm, templatePage } from './template-form';

export function registerTemplateTry(web: Hono<WebEnv>): void {
  web.post('/templates/new/try', need('templates.update', 'backups.run', 'backups.view'), (c) => tryTemplate(c, null));
  web.post('/templates/:id/try', need('templates.update', 'backups.run', 'backups.view'), (c) => tryTemplate(c, intParam(c, 'id')));
}

async function tryTemplate(c: WebContext, id: number | null): Promise<Response> {
  const app = c.get('app');
  const stored = id === null ? null : getTemplate(app.db, id);
  const f = await formFields(c);
  const deviceId = Number(f.device_id);
  // A built-in cannot be edited, so it is tried as stored; any other template as the form shows it.
  const values = stored?.builtin ? undefined : f;
  const again = (errors: Record<string, string>) => templatePage(c, id, { values, errors, deviceId });
  if (!Number.isSafeInteger(deviceId) || deviceId < 1) return again({ device_id: 'choose a device' });
  // Refused (403) when the device is outside the user's scope, before anything connects.
  const device = getDevice(app.db, c.get('principal').scope, deviceId);

  let spec: TemplateSpec;
  if (stored?.builtin) spec = stored;
  else {
    const p = parseTemplateForm(f, stored);
    if (!p.ok) return again(p.errors);
    spec = p.spec;
    const problems = validateTemplate(spec);
    if (problems.length) return again(fieldErrors(ApiError.validation(problems, 'Template validation failed')) ?? {});
  }
  // Refused (403) before anything connects: the same rules as saving this edit, and backups.view.
  authorizeTemplateTrial(app.db, actorOf(c), id, spec);
  const job = loadBackupJob(app.db, app.secrets, device.id);
  if (!job) return again({ device_id: 'this device has no usable credential' });

  // The same limits and redaction as a real backup, but nothing is recorded: no backup row, no host key, no reachability.
  const redact_key = app.config.backup.redact_secrets ? app.secrets.redactionKey : null;
  const collected = await collectConfig(job.target, spec, limitsFromConfig(app.config), { redact_key });
  // The raw output is shown redacted too when redaction is on: otherwise Try would show what no stored version holds.
  const redact = redaction(spec, redact_key);
  const result =
    collected.ok && redact.redact
      ? { ...collected, raw: applyTemplate(collected.raw, { strip_patterns: [], redact_patterns: spec.redact_patterns }, redact) }
      : collected;
  // The output never goes into the audit log: it is configuration text and may hold secrets.
  recordTemplateTrial(app.db, actorOf(c), id, {
    device_id: device.id,
    device_name: device.name,
    ok: result.ok,
    failure: result.ok ? null : result.failure,
    duration_ms: result.duration_ms,
  });
  return templatePage(c, id, { values, deviceId, trial: { deviceId: device.id, deviceName: device.name, result } });
}
