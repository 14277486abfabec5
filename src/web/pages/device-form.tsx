// The device form: parsing posted fields with the public API's own schema, and rendering it with errors next to each field.
import { zodFieldErrors } from '../../http/errors';
import { DeviceCreateSchema } from '../../features/devices/devices.schemas';
import { DEFAULT_PORT, type Device, type DeviceInput } from '../../features/devices/devices.service';
import { listCredentials } from '../../features/credentials/credentials.service';
import { usageInside } from '../../features/credentials/credentials.policy';
import type { Scope } from '../../identity/principal';
import { listTemplates } from '../../features/templates/templates.service';
import type { DB } from '../../db/open';
import type { Child } from 'hono/jsx';
import { Csrf, FieldError, FormError } from '../components/layout';
import type { GroupOption } from './groups-options';

type Parsed = { ok: true; input: DeviceInput } | { ok: false; errors: Record<string, string> };

const optionalInt = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : /^\d+$/.test(v.trim()) ? Number(v.trim()) : NaN);

/** Posted form → the same validated input /api/v1 builds from JSON (one rule for both). */
export function parseDeviceForm(f: Record<string, string>): Parsed {
  const errors: Record<string, string> = {};
  const num = (field: string, required: boolean) => {
    const n = optionalInt(f[field]);
    if (Number.isNaN(n)) errors[field] = 'must be a number';
    else if (n === undefined && required) errors[field] = 'choose one';
    return n;
  };
  const candidate = {
    name: f.name ?? '',
    hostname: f.hostname ?? '',
    port: num('port', false),
    protocol: f.protocol || 'ssh',
    group_id: num('group_id', false) ?? null,
    credential_id: num('credential_id', true),
    template_id: num('template_id', true),
    enabled: f.enabled === 'on',
    description: f.description ?? '',
    schedule: (f.schedule ?? '').trim() || null,
    zone: (f.zone ?? '').trim() || null,
  };
  const r = DeviceCreateSchema.safeParse(candidate);
  if (!r.success) for (const e of zodFieldErrors(r.error, 'json')) errors[e.field.split('.')[0]] ??= e.message;
  if (Object.keys(errors).length || !r.success) return { ok: false, errors };
  // A form without the field (posted from a page older than it) leaves the zone as it is.
  const { zone, ...input } = r.data;
  return { ok: true, input: f.zone === undefined ? input : { ...input, zone } };
}

export interface DeviceFormProps {
  db: DB;
  csrf: string;
  action: string;
  groups: GroupOption[];
  scope: Scope;
  device?: Device;
  values?: Record<string, string>;
  errors?: Record<string, string> | null;
  /** The appliance's schedule ([backup] schedule): what applies when neither the device nor its groups set one. */
  defaultSchedule: string;
  /** The inventory source that owns the device's name, address, template and group (read-only here), or null. */
  ownedBy?: string | null;
}

type Errors = Record<string, string> | null | undefined;

/** One labelled field: its caption, its control and the error next to it. */
function Field(props: { label: Child; name: string; errors: Errors; full?: boolean; children: Child }) {
  return (
    <label class={props.full ? 'full' : undefined}>
      {props.label}
      {props.children}
      <FieldError errors={props.errors} name={props.name} />
    </label>
  );
}

/** A text input in its field, flagged invalid when its error is shown. */
function TextField(props: {
  label: Child;
  name: string;
  value: string;
  errors: Errors;
  full?: boolean;
  flagInvalid?: boolean;
  required?: boolean;
  maxlength?: number;
  inputmode?: 'numeric';
  placeholder?: string;
  readonly?: boolean;
}) {
  const { label, name, errors, full, flagInvalid, ...attrs } = props;
  return (
    <Field label={label} name={name} errors={errors} full={full}>
      <input name={name} {...attrs} aria-invalid={flagInvalid && errors?.[name] ? 'true' : undefined} />
    </Field>
  );
}

interface Choice {
  value: string;
  label: string;
}

/** A select in its field: the blank choice first (when given), then each choice, the current value selected. */
function SelectField(props: {
  label: Child;
  name: string;
  errors: Errors;
  blank?: string;
  choices: Choice[];
  selected: string;
  hint?: string;
  /** Shown but not changeable (a field an inventory source owns): the value is posted as it is. */
  locked?: boolean;
}) {
  const hintId = props.hint ? `${props.name}-hint` : undefined;
  return (
    <Field label={props.label} name={props.name} errors={props.errors}>
      {props.locked ? <input type="hidden" name={props.name} value={props.selected} /> : null}
      <select name={props.locked ? undefined : props.name} aria-describedby={hintId} disabled={props.locked}>
        {props.blank !== undefined && <option value="">{props.blank}</option>}
        {props.choices.map((c) => (
          <option value={c.value} selected={props.selected === c.value}>
            {c.label}
          </option>
        ))}
      </select>
      {props.hint ? <small id={hintId}>{props.hint}</small> : null}
    </Field>
  );
}

/** The credentials and templates a device may be given, as choices. */
function deviceChoices(props: DeviceFormProps): { credentials: Choice[]; templates: Choice[] } {
  const d = props.device;
  // Only credentials the user may attach (and the device's own): another one would be refused on saving.
  const credentials = listCredentials(props.db, { page: 1, limit: 1000 }).items.filter(
    (c) => usageInside(props.scope, c.group_ids) || c.id === d?.credential_id,
  );
  const templates = listTemplates(props.db, { page: 1, limit: 1000 }).items;
  return {
    credentials: credentials.map((c) => ({ value: String(c.id), label: c.name })),
    templates: templates.map((t) => ({ value: String(t.id), label: `${t.name} — ${t.vendor}` })),
  };
}

/** A new device may leave its credential and template to detection (src/features/devices/detect.service.ts). */
const AUTO_CREDENTIAL: Choice = { value: 'auto', label: 'auto (detect: the first that logs in)' };
const AUTO_TEMPLATE: Choice = { value: 'auto', label: 'auto (detect the platform)' };
const AUTO_HINT =
  'auto: logs in (the chosen credential first, then the others you may use here, at most a few) and picks the template whose banner, prompt or show version matches.';

const PROTOCOLS: Choice[] = (['ssh', 'telnet'] as const).map((p) => ({ value: p, label: p.toUpperCase() }));

export function DeviceForm(props: DeviceFormProps) {
  const d = props.device;
  const v = (k: string, dflt: string) => props.values?.[k] ?? dflt;
  const { credentials, templates } = deviceChoices(props);
  const e = props.errors;
  const checked = (k: string, dflt: boolean) => (props.values ? props.values[k] === 'on' : dflt);
  /** The posted id, else the device's (an id is never 0). */
  const chosen = (k: 'group_id' | 'credential_id' | 'template_id') => v(k, d?.[k] ? String(d[k]) : '');
  const groups = props.groups.map((g) => ({ value: String(g.id), label: g.label }));
  const owned = Boolean(props.ownedBy);
  return (
    <form method="post" action={props.action} class="grid-form" novalidate>
      <Csrf token={props.csrf} />
      <FormError errors={e} full />
      {props.ownedBy ? (
        <p class="full" id="source-owned">
          Name, address, template and group come from inventory source {props.ownedBy}: they change there.
        </p>
      ) : null}
      <TextField label="Name" name="name" errors={e} flagInvalid required maxlength={128} value={v('name', d?.name ?? '')} readonly={owned} />
      <TextField label="Address (IP or DNS name)" name="hostname" errors={e} flagInvalid required value={v('hostname', d?.hostname ?? '')} readonly={owned} />
      <SelectField label="Protocol" name="protocol" errors={e} choices={PROTOCOLS} selected={v('protocol', d?.protocol ?? 'ssh')} />
      <TextField
        label={`Port (empty: ${DEFAULT_PORT.ssh} for SSH, ${DEFAULT_PORT.telnet} for Telnet)`}
        name="port"
        errors={e}
        flagInvalid
        inputmode="numeric"
        value={v('port', d ? String(d.port) : '')}
      />
      <SelectField label="Group" name="group_id" errors={e} blank="(ungrouped)" choices={groups} selected={chosen('group_id')} locked={owned} />
      <SelectField
        label="Credential"
        name="credential_id"
        errors={e}
        blank="(choose)"
        choices={d ? credentials : [AUTO_CREDENTIAL, ...credentials]}
        selected={chosen('credential_id')}
      />
      <SelectField
        label="Template"
        name="template_id"
        errors={e}
        blank="(choose)"
        choices={d ? templates : [AUTO_TEMPLATE, ...templates]}
        selected={chosen('template_id')}
        hint={d ? undefined : AUTO_HINT}
        locked={owned}
      />
      <TextField
        label={`Schedule (cron; empty: the group’s schedule, else the appliance’s ${props.defaultSchedule})`}
        name="schedule"
        errors={e}
        value={v('schedule', d?.schedule ?? '')}
        placeholder={props.defaultSchedule}
      />
      <TextField
        label="Zone (empty: the central appliance, or the zone of its group; changing it needs collectors.manage)"
        name="zone"
        errors={e}
        flagInvalid
        maxlength={64}
        value={v('zone', d?.zone ?? '')}
        placeholder="central"
      />
      <TextField label="Description" name="description" errors={e} full value={v('description', d?.description ?? '')} />
      <label class="check">
        <input type="checkbox" name="enabled" checked={checked('enabled', d?.enabled ?? true)} /> Enabled (backed up on schedule)
      </label>
      <div class="full actions">
        <button type="submit" class="primary">
          {d ? 'Save device' : 'Create device'}
        </button>
        <a href={d ? `/devices/${d.id}` : '/devices'}>Cancel</a>
      </div>
    </form>
  );
}
