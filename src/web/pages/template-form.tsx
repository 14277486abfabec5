// The template page: form ⇄ TemplateSpec (lists as one-per-line textareas), built-ins shown read-only, "Try on device" results.
import { TemplateCreateSchema } from '../../features/templates/templates.schemas';
import { TEMPLATE_OPS } from '../../features/templates/templates.policy';
import { getTemplate, type Template } from '../../features/templates/templates.service';
import { listDevices, type Device } from '../../features/devices/devices.service';
import type { TemplateSpec } from '../../templates/types';
import type { CollectResult } from '../../engine/types';
import { zodFieldErrors } from '../../http/errors';
import { Csrf, FieldError, FormError } from '../components/layout';
import { render } from '../render';
import { can, type WebContext } from '../web-context';

const LIST_FIELDS = ['pre_commands', 'commands', 'strip_patterns', 'ignore_patterns', 'change_events'] as const;
const ARROW = ' => ';
/** Devices offered by "Try on device" (each list, alphabetical). */
const TRY_DEVICES_MAX = 1000;
/** Ends a redact rule's line when the rule applies only inside sections (`within`): "pattern @within ^config system snmp community". */
const WITHIN = ' @within ';

/** Lines of a textarea; blank lines are dropped, other lines kept as typed (a leading space can matter in a pattern). */
function lines(v: string | undefined): string[] {
  return (v ?? '').split(/\r?\n/).filter((l) => l.trim() !== '');
}

/**
 * A form's fields as a whole TemplateSpec, checked with the API's request schema (the engine's own checks follow in the
 * service). `enable`, `session`, `command_output`, `aliases` and `detect` are not on the form: they keep the stored values. Field errors are keyed by the top-level field.
 */
export function parseTemplateForm(
  f: Record<string, string>,
  base: TemplateSpec | null,
): { ok: true; spec: TemplateSpec } | { ok: false; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const redact_patterns = lines(f.redact_patterns).map((l) => {
    // A line without the arrow is the usual form: its (?<secret>...) group becomes a keyed token.
    const w = l.lastIndexOf(WITHIN);
    const rule = w < 0 ? l : l.slice(0, w);
    const within = w < 0 ? {} : { within: l.slice(w + WITHIN.length) };
    const at = rule.lastIndexOf(ARROW);
    return at < 0 ? { pattern: rule, ...within } : { pattern: rule.slice(0, at), replacement: rule.slice(at + ARROW.length), ...within };
  });
  const body = {
    name: (f.name ?? '').trim(),
    vendor: (f.vendor ?? '').trim(),
    description: f.description ?? '',
    mode: f.mode,
    prompt: (f.prompt ?? '').trim() === '' ? null : f.prompt,
    pre_commands: lines(f.pre_commands).map((l) => l.trim()),
    commands: lines(f.commands).map((l) => l.trim()),
    enable: base?.enable ?? null,
    // Not on the form either: kept from the stored template, so "try on device" runs with them too.
    ...(base?.session ? { session: base.session } : {}),
    ...(base?.command_output ? { command_output: base.command_output } : {}),
    ...(base?.aliases ? { aliases: base.aliases } : {}),
    ...(base?.detect ? { detect: base.detect } : {}),
    strip_patterns: lines(f.strip_patterns),
    ignore_patterns: lines(f.ignore_patterns),
    redact_patterns,
    change_events: lines(f.change_events),
    redact: f.redact === 'on',
    exit_command: (f.exit_command ?? '').trim() === '' ? null : (f.exit_command ?? '').trim(),
  };
  const r = TemplateCreateSchema.safeParse(body);
  if (!r.success) for (const e of zodFieldErrors(r.error, 'json')) errors[e.field.split('.')[0]] ??= e.message;
  if (Object.keys(errors).length || !r.success) return { ok: false, errors };
  return { ok: true, spec: r.data };
}

/** A spec as form values (the inverse of parseTemplateForm). */
export function specValues(t: TemplateSpec): Record<string, string> {
  const out: Record<string, string> = {
    name: t.name,
    vendor: t.vendor,
    description: t.description,
    mode: t.mode,
    prompt: t.prompt ?? '',
    redact_patterns: t.redact_patterns
      .map((r) => `${r.pattern}${r.replacement === undefined ? '' : ARROW + r.replacement}${r.within === undefined ? '' : WITHIN + r.within}`)
      .join('\n'),
    redact: t.redact ? 'on' : '',
    exit_command: t.exit_command ?? '',
  };
  for (const k of LIST_FIELDS) out[k] = (t[k] ?? []).join('\n');
  return out;
}

export interface Trial {
  deviceId: number;
  deviceName: string;
  result: CollectResult;
}

export interface TemplatePageState {
  values?: Record<string, string>;
  errors?: Record<string, string> | null;
  trial?: Trial;
  deviceId?: number;
}

/** "Try on device" choices in the user's scope: the devices backed up with this template first, then the others. */
function tryDevices(c: WebContext, templateId: number | null): { own: Device[]; others: Device[] } {
  const db = c.get('app').db;
  const scope = c.get('principal').scope;
  const own = templateId === null ? [] : listDevices(db, scope, { template_id: templateId }, 1, TRY_DEVICES_MAX).items;
  const ownIds = new Set(own.map((d) => d.id));
  const others = listDevices(db, scope, {}, 1, TRY_DEVICES_MAX).items.filter((d) => !ownIds.has(d.id));
  return { own, others };
}

/** The new/edit/view page of a template (`id` null: a new one). Built-ins render read-only. */
export function templatePage(c: WebContext, id: number | null, s: TemplatePageState = {}) {
  const t: Template | null = id === null ? null : getTemplate(c.get('app').db, id);
  // Built-ins and file templates are edited elsewhere (a new release, the file): here they are read-only.
  const readOnly = (t !== null && t.source !== 'custom') || (t !== null && !can(c, 'templates.update'));
  const v = s.values ?? (t ? specValues(t) : { mode: 'shell', redact: 'on' });
  const e = s.errors;
  const csrf = c.get('session').csrfToken;
  const base = t ? `/templates/${t.id}` : '/templates/new';
  const title = t ? `Template ${t.name}` : 'New template';
  return render(
    c,
    { title, active: '/templates', status: e ? 422 : 200 },
    <>
      <h1>
        {title} {t ? <SourceBadge t={t} /> : null}
      </h1>
      {t ? <TemplateNotices c={c} t={t} readOnly={readOnly} /> : null}
      <section class="card">
        <form method="post" action={t ? `${base}/edit` : '/templates'} class="grid-form" novalidate>
          <Csrf token={csrf} />
          <FormError errors={e} full />
          <TemplateFields t={t} v={v} e={e} readOnly={readOnly} />
          {readOnly ? null : (
            <div class="full actions">
              <button type="submit" class="primary">
                {t ? 'Save template' : 'Create template'}
              </button>
              <a href="/templates">Cancel</a>
            </div>
          )}
          <TryControls c={c} templateId={t?.id ?? null} base={base} deviceId={s.deviceId} e={e} />
        </form>
      </section>
      {t && t.source === 'custom' && can(c, 'templates.delete') ? (
        <form method="post" action={`${base}/delete`} class="inline" data-confirm={`Delete template ${t.name}?`}>
          <Csrf token={csrf} />
          <button type="submit" class="danger">
            Delete template
          </button>
        </form>
      ) : null}
      {s.trial ? <TrialView trial={s.trial} /> : null}
    </>,
  );
}

/** What the page says above the form about where a template is managed, its actions, and what a limited scope may change. */
function TemplateNotices({ c, t, readOnly }: { c: WebContext; t: Template; readOnly: boolean }) {
  return (
    <>
      {t.builtin ? <p class="advice">Built-in templates are read-only; clone this one into a custom template to change these settings.</p> : null}
      {t.source === 'file' ? (
        <p class="advice" id="file-managed">
          Managed by file <code>{t.source_file}</code>: edit the file and reload (<code>confvault template reload</code>, or SIGHUP to confvault serve).
        </p>
      ) : null}
      <TemplateActions c={c} t={t} />
      {!readOnly && !c.get('principal').scope.all ? (
        <p class="advice">
          Your device-group scope is limited: changing what this template sends (commands, pre-commands, enable or exit command) needs scope all, and a template
          used by a device outside your scope cannot be changed or deleted.
        </p>
      ) : null}
    </>
  );
}

type Values = Record<string, string>;
type Errors = Record<string, string> | null | undefined;

/** A one-per-line list of the spec as a textarea. */
function Area({ name, label, hint, v, e, readOnly }: { name: string; label: string; hint: string; v: Values; e: Errors; readOnly: boolean }) {
  return (
    <label class="full">
      {label} <span class="muted small">{hint}</span>
      <textarea name={name} rows={4} class="mono" readonly={readOnly}>
        {v[name] ?? ''}
      </textarea>
      <FieldError errors={e} name={name} />
    </label>
  );
}

/** The spec's fields: one-line settings, then the lists. */
function TemplateFields({ t, v, e, readOnly }: { t: Template | null; v: Values; e: Errors; readOnly: boolean }) {
  const area = (name: string, label: string, hint: string) => <Area name={name} label={label} hint={hint} v={v} e={e} readOnly={readOnly} />;
  return (
    <>
      <SettingFields v={v} e={e} readOnly={readOnly} />
      {t !== null && !t.redact ? (
        <p class="redaction-off" id="redaction-off">
          Redaction is off: the secrets of the devices using this template are stored in clear.
        </p>
      ) : null}
      <label class="full">
        Description <input name="description" value={v.description ?? ''} readonly={readOnly} />
        <FieldError errors={e} name="description" />
      </label>
      {area('pre_commands', 'Pre-commands', 'one per line; output discarded')}
      {area('commands', 'Commands', 'one per line; their output is the configuration')}
      {area('strip_patterns', 'Strip patterns', 'one regex per line; matching lines are dropped')}
      {area('ignore_patterns', 'Ignore patterns', 'one regex per line; kept but not counted as a change')}
      {area(
        'redact_patterns',
        'Redact rules',
        `one per line: a pattern naming the secret (?<secret>...), stored as a keyed token; or pattern${ARROW}replacement; ending in${WITHIN}<regex of a section's opening line>, only inside such sections`,
      )}
      {area(
        'change_events',
        'Change events',
        'one regex per line; a syslog message from the device matching one queues a backup (named group "user": who changed it)',
      )}
    </>
  );
}

/** Name, vendor, mode, prompt, exit command and the redact switch. */
function SettingFields({ v, e, readOnly }: { v: Values; e: Errors; readOnly: boolean }) {
  return (
    <>
      <label>
        Name <input name="name" required value={v.name ?? ''} readonly={readOnly} />
        <FieldError errors={e} name="name" />
      </label>
      <label>
        Vendor <input name="vendor" required value={v.vendor ?? ''} readonly={readOnly} />
        <FieldError errors={e} name="vendor" />
      </label>
      <label>
        Mode
        <select name="mode" disabled={readOnly}>
          <option value="shell" selected={v.mode !== 'exec'}>
            shell (interactive, prompt-driven)
          </option>
          <option value="exec" selected={v.mode === 'exec'}>
            exec (one SSH exec per command)
          </option>
        </select>
        <FieldError errors={e} name="mode" />
      </label>
      <label>
        Prompt <input name="prompt" class="mono" placeholder="detected after login" value={v.prompt ?? ''} readonly={readOnly} />
        <FieldError errors={e} name="prompt" />
      </label>
      <label>
        Exit command <input name="exit_command" class="mono" value={v.exit_command ?? ''} readonly={readOnly} />
        <FieldError errors={e} name="exit_command" />
      </label>
      <label class="check">
        <input type="checkbox" name="redact" checked={v.redact === 'on'} disabled={readOnly} /> Redact secrets (when the appliance's redact_secrets is on)
      </label>
    </>
  );
}

/** "Try on device": a device picker (this template's devices first) and the button, for whoever may run and read backups. */
function TryControls({ c, templateId, base, deviceId, e }: { c: WebContext; templateId: number | null; base: string; deviceId?: number; e: Errors }) {
  if (!can(c, TEMPLATE_OPS.try)) return null;
  const picker = tryDevices(c, templateId);
  const devices = [...picker.own, ...picker.others];
  const option = (d: Device) => <option value={String(d.id)} selected={deviceId === d.id}>{`${d.name} (${d.hostname})`}</option>;
  return (
    <div class="full row" id="try">
      <label>
        Device
        <select name="device_id">
          {picker.own.length > 0 ? (
            <>
              <optgroup label="Devices using this template">{picker.own.map(option)}</optgroup>
              {picker.others.length > 0 ? <optgroup label="Other devices">{picker.others.map(option)}</optgroup> : null}
            </>
          ) : (
            picker.others.map(option)
          )}
        </select>
        <FieldError errors={e} name="device_id" />
      </label>
      {picker.own.length === 0 && devices.length > 0 ? (
        <span class="muted small" id="try-no-device">
          No device in your scope uses this template yet: pick another device to try it on.
        </span>
      ) : null}
      <button type="submit" formaction={`${base}/try`} disabled={devices.length === 0} data-busy="Connecting to the device and collecting its configuration">
        Try on device
      </button>
      <span class="muted small">Runs the template as shown here; nothing is stored.</span>
    </div>
  );
}

/** "built-in" or "file" next to a template's name; nothing for a custom template made here or through the API. */
export function SourceBadge({ t }: { t: Template }) {
  if (t.source === 'builtin') return <span class="badge muted">built-in</span>;
  if (t.source === 'file')
    return (
      <span class="badge muted" title={t.source_file ?? ''}>
        file
      </span>
    );
  return null;
}

/** Export YAML (every template) and Clone (an editable custom copy, for whoever may create templates). */
function TemplateActions({ c, t }: { c: WebContext; t: Template }) {
  return (
    <div class="actions" id="template-actions">
      <a class="button" href={`/templates/${t.id}/export.yaml`} download={`${t.name}.yaml`}>
        Export YAML
      </a>
      {can(c, 'templates.create') ? (
        <form method="post" action={`/templates/${t.id}/clone`} class="inline">
          <Csrf token={c.get('session').csrfToken} />
          <button type="submit">Clone</button>
        </form>
      ) : null}
    </div>
  );
}

function TrialView({ trial }: { trial: Trial }) {
  const r = trial.result;
  return (
    <section class="card" id="trial">
      <h2>Try on {trial.deviceName}</h2>
      {r.ok ? (
        <>
          <p class="muted">Collected in {String(r.duration_ms)} ms. Nothing was stored.</p>
          <div class="charts">
            <div>
              <h3>Raw output</h3>
              <pre class="config" id="trial-raw">
                {r.raw}
              </pre>
            </div>
            <div>
              <h3>Cleaned (as it would be stored)</h3>
              <pre class="config" id="trial-text">
                {r.text}
              </pre>
            </div>
          </div>
        </>
      ) : (
        <p class="flash error" role="alert" id="trial-failure">
          <strong>{r.failure}</strong>: {r.message}
        </p>
      )}
    </section>
  );
}
