// The device form: parsing posted fields with the public API's own schema, and rendering it with errors next to each field.
import { zodFieldErrors } from '../../http/errors';
import { DeviceCreateSchema } from '../../features/devices/devices.schemas';
import { DEFAULT_PORT, type Device, type DeviceInput } from '../../features/devices/devices.service';
import { listCredentials } from '../../features/credentials/credentials.service';
import { usageInside } from '../../features/credentials/credentials.policy';
import type { Scope } from '../../identity/principal';
import { listTemplates } from '../../features/templates/templates.service';
import type { DB } from '../../db/open';
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
  };
  const r = DeviceCreateSchema.safeParse(candidate);
  if (!r.success) for (const e of zodFieldErrors(r.error, 'json')) errors[e.field.split('.')[0]] ??= e.message;
  if (Object.keys(errors).length || !r.success) return { ok: false, errors };
  return { ok: true, input: r.data };
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
}

export function DeviceForm(props: DeviceFormProps) {
  const d = props.device;
  const v = (k: string, dflt: string) => props.values?.[k] ?? dflt;
  // Only credentials the user may attach (and the device's own): another one would be refused on saving.
  const credentials = listCredentials(props.db, { page: 1, limit: 1000 }).items.filter(
    (c) => usageInside(props.scope, c.group_ids) || c.id === d?.credential_id,
  );
  const templates = listTemplates(props.db, { page: 1, limit: 1000 }).items;
  const e = props.errors;
  const checked = (k: string, dflt: boolean) => (props.values ? props.values[k] === 'on' : dflt);
  return (
    <form method="post" action={props.action} class="grid-form" novalidate>
      <Csrf token={props.csrf} />
      <FormError errors={e} full />
      <label>
        Name
        <input name="name" required maxlength={128} value={v('name', d?.name ?? '')} aria-invalid={e?.name ? 'true' : undefined} />
        <FieldError errors={e} name="name" />
      </label>
      <label>
        Address (IP or DNS name)
        <input name="hostname" required value={v('hostname', d?.hostname ?? '')} aria-invalid={e?.hostname ? 'true' : undefined} />
        <FieldError errors={e} name="hostname" />
      </label>
      <label>
        Protocol
        <select name="protocol">
          {(['ssh', 'telnet'] as const).map((p) => (
            <option value={p} selected={v('protocol', d?.protocol ?? 'ssh') === p}>
              {p.toUpperCase()}
            </option>
          ))}
        </select>
        <FieldError errors={e} name="protocol" />
      </label>
      <label>
        Port (empty: {DEFAULT_PORT.ssh} for SSH, {DEFAULT_PORT.telnet} for Telnet)
        <input name="port" inputmode="numeric" value={v('port', d ? String(d.port) : '')} aria-invalid={e?.port ? 'true' : undefined} />
        <FieldError errors={e} name="port" />
      </label>
      <label>
        Group
        <select name="group_id">
          <option value="">(ungrouped)</option>
          {props.groups.map((g) => (
            <option value={String(g.id)} selected={v('group_id', d?.group_id ? String(d.group_id) : '') === String(g.id)}>
              {g.label}
            </option>
          ))}
        </select>
        <FieldError errors={e} name="group_id" />
      </label>
      <label>
        Credential
        <select name="credential_id">
          <option value="">(choose)</option>
          {d ? null : (
            <option value="auto" selected={v('credential_id', '') === 'auto'}>
              auto (detect: the first that logs in)
            </option>
          )}
          {credentials.map((c) => (
            <option value={String(c.id)} selected={v('credential_id', d ? String(d.credential_id) : '') === String(c.id)}>
              {c.name}
            </option>
          ))}
        </select>
        <FieldError errors={e} name="credential_id" />
      </label>
      <label>
        Template
        <select name="template_id" aria-describedby="template-auto-hint">
          <option value="">(choose)</option>
          {d ? null : (
            <option value="auto" selected={v('template_id', '') === 'auto'}>
              auto (detect the platform)
            </option>
          )}
          {templates.map((t) => (
            <option value={String(t.id)} selected={v('template_id', d ? String(d.template_id) : '') === String(t.id)}>{`${t.name} — ${t.vendor}`}</option>
          ))}
        </select>
        <FieldError errors={e} name="template_id" />
        {d ? null : (
          <small id="template-auto-hint">
            auto: logs in (the chosen credential first, then the others you may use here, at most a few) and picks the template whose banner, prompt or show
            version matches.
          </small>
        )}
      </label>
      <label>
        Schedule (cron; empty: the group’s schedule, else the appliance’s {props.defaultSchedule})
        <input name="schedule" value={v('schedule', d?.schedule ?? '')} placeholder={props.defaultSchedule} />
        <FieldError errors={e} name="schedule" />
      </label>
      <label class="full">
        Description
        <input name="description" value={v('description', d?.description ?? '')} />
        <FieldError errors={e} name="description" />
      </label>
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
