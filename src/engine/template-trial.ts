// "Try on device": run a template (stored, or as edited and unsaved) against one device and return raw and cleaned output; stores nothing. The web's Try button and `confvault template try` both call it.
import type { AppConfig } from '../config/config';
import type { DB } from '../db/open';
import { ApiError } from '../errors';
import type { Actor } from '../identity/actor';
import type { SecretBox } from '../identity/secrets';
import { loadBackupPlan } from '../features/backups/backup-engine.service';
import { getDevice } from '../features/devices/devices.service';
import { authorizeTemplateTrial, recordTemplateTrial } from '../features/templates/templates.service';
import { templateFieldsOf, validateTemplate } from '../templates/index';
import type { TemplateSpec } from '../templates/types';
import { collectConfig, redaction } from './collect';
import { applyTemplate } from './normalise';
import { limitsFromConfig } from './runner';
import type { CollectResult } from './types';

export interface TemplateTrialDeps {
  db: DB;
  secrets: SecretBox;
  config: Readonly<AppConfig>;
}

export interface TemplateTrial {
  deviceId: number;
  deviceName: string;
  result: CollectResult;
}

/**
 * Try `spec` (template `templateId` as stored or edited; null: a new template) on one device. Refused before
 * anything connects: a device outside the actor's scope (403), an invalid template (422), the rules of saving the
 * edit and backups.view (authorizeTemplateTrial), a device without a usable credential (422 on device_id). Nothing
 * is recorded but an audit row naming the device and how it went, never the output.
 */
export async function tryTemplateOnDevice(
  deps: TemplateTrialDeps,
  actor: Actor,
  templateId: number | null,
  spec: TemplateSpec,
  deviceId: number,
): Promise<TemplateTrial> {
  const { db, secrets, config } = deps;
  const device = getDevice(db, actor.principal.scope, deviceId);
  const problems = validateTemplate(templateFieldsOf(spec));
  if (problems.length) throw ApiError.validation(problems, 'Template validation failed');
  authorizeTemplateTrial(db, actor, templateId, spec);
  const plan = loadBackupPlan(db, secrets, device.id);
  if (!plan) throw ApiError.validation([{ field: 'device_id', message: 'this device has no usable credential' }]);

  // The same limits and redaction as a real backup, but nothing is recorded: no backup row, no host key, no reachability.
  const redact_key = config.backup.redact_secrets ? secrets.redactionKey : null;
  const collected = await collectConfig(plan.target, spec, limitsFromConfig(config), { redact_key });
  // The raw output is shown redacted too when redaction is on: otherwise Try would show what no stored version holds.
  const redact = redaction(spec, redact_key);
  const result =
    collected.ok && redact.redact
      ? { ...collected, raw: applyTemplate(collected.raw, { strip_patterns: [], redact_patterns: spec.redact_patterns }, redact) }
      : collected;
  recordTemplateTrial(db, actor, templateId, {
    device_id: device.id,
    device_name: device.name,
    ok: result.ok,
    failure: result.ok ? null : result.failure,
    duration_ms: result.duration_ms,
  });
  return { deviceId: device.id, deviceName: device.name, result };
}
