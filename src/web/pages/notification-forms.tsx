// Settings → Notifications, the two forms: add a channel (the fields of each channel type in a fieldset of their own) and add a rule (events, channels, groups by name).
import type { ChannelInfo, ChannelInput } from '../../features/notifications/notifications.service';
import { CHANNEL_TYPES, NOTIFICATION_EVENTS } from '../../features/notifications/notifications.types';
import { Csrf, FieldError, FormError } from '../components/layout';
import type { GroupOption } from './groups-options';

type Fields = Record<string, string>;
type Errors = Record<string, string> | null | undefined;

const split = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** The ids of the keys `${prefix}<id>` ticked in a posted form (checkbox groups posted as name_<id>=on). */
export const ticked = (f: Fields, prefix: string): string[] =>
  Object.keys(f)
    .filter((k) => k.startsWith(prefix) && f[k] === 'on')
    .map((k) => k.slice(prefix.length));

/** The posted channel form as the service's input; fields left empty are absent. */
export function channelInput(f: Fields): ChannelInput {
  return {
    name: (f.name ?? '').trim(),
    type: f.type ?? '',
    url: f.url?.trim() || undefined,
    secret: f.secret || undefined,
    smtp_host: f.smtp_host?.trim() || undefined,
    smtp_port: f.smtp_port?.trim() ? Number(f.smtp_port) : undefined,
    smtp_tls: f.smtp_tls || undefined,
    smtp_user: f.smtp_user?.trim() || undefined,
    from: f.from?.trim() || undefined,
    to: f.to === undefined ? undefined : split(f.to),
  };
}

/** The posted rule form: events, channels and groups ticked by name. */
export function ruleInput(f: Fields) {
  return {
    name: (f.name ?? '').trim(),
    events: NOTIFICATION_EVENTS.filter((e) => f[`event_${e}`] === 'on'),
    channels: ticked(f, 'channel_'),
    groups: ticked(f, 'group_').map(Number),
    include_diff: f.include_diff === 'on',
  };
}

/**
 * One fieldset per set of fields, its legend naming the channel types it is for (data-types). Without script every
 * fieldset shows; app.js hides and disables those the chosen type does not use.
 */
function TypeFields({ types, legend, children }: { types: string[]; legend: string; children?: unknown }) {
  return (
    <fieldset class="channel-fields" data-types={types.join(' ')}>
      <legend>{legend}</legend>
      {children}
    </fieldset>
  );
}

function EmailFields({ v, e }: { v: Fields; e: Errors }) {
  return (
    <TypeFields types={['email']} legend="For e-mail">
      <label>
        SMTP host <input name="smtp_host" value={v.smtp_host ?? ''} />
        <FieldError errors={e} name="smtp_host" />
      </label>
      <label>
        Port <input name="smtp_port" inputmode="numeric" value={v.smtp_port ?? '587'} />
        <FieldError errors={e} name="smtp_port" />
      </label>
      <label>
        Security
        <select name="smtp_tls">
          <option value="starttls">STARTTLS (required)</option>
          <option value="tls" selected={v.smtp_tls === 'tls'}>
            TLS
          </option>
          <option value="none" selected={v.smtp_tls === 'none'}>
            none
          </option>
        </select>
      </label>
      <label>
        User <input name="smtp_user" value={v.smtp_user ?? ''} />
      </label>
      <label>
        From <input name="from" value={v.from ?? ''} />
        <FieldError errors={e} name="from" />
      </label>
      <label>
        To (comma-separated) <input name="to" value={v.to ?? ''} />
        <FieldError errors={e} name="to" />
      </label>
    </TypeFields>
  );
}

export function AddChannelForm({ csrf, values: v, errors: e, base }: { csrf: string; values: Fields; errors: Errors; base: string }) {
  return (
    <section class="card">
      <h2>Add a channel</h2>
      <FormError errors={e} />
      <form method="post" action={`${base}/channels`} class="stack" id="add-channel">
        <Csrf token={csrf} />
        <label>
          Name <input name="name" required maxlength={64} value={v.name ?? ''} />
          <FieldError errors={e} name="name" />
        </label>
        <label>
          Type
          <select name="type" id="channel-type">
            {CHANNEL_TYPES.map((t) => (
              <option value={t} selected={v.type === t}>
                {t}
              </option>
            ))}
          </select>
          <FieldError errors={e} name="type" />
        </label>
        <TypeFields types={['webhook', 'slack', 'teams', 'syslog']} legend="For webhook, Slack, Teams and syslog">
          <label>
            URL (webhook: where JSON is posted; Slack/Teams: the incoming-webhook URL, stored encrypted; syslog: udp://host:514 or tcp://host:514)
            <input name="url" value={v.type === 'slack' || v.type === 'teams' ? '' : (v.url ?? '')} />
            <FieldError errors={e} name="url" />
          </label>
        </TypeFields>
        <TypeFields types={['webhook', 'email']} legend="For webhook and e-mail">
          <label>
            Secret (webhook: HMAC key; e-mail: SMTP password; never shown again)
            <input name="secret" type="password" autocomplete="new-password" />
            <FieldError errors={e} name="secret" />
          </label>
        </TypeFields>
        <EmailFields v={v} e={e} />
        <button type="submit" class="primary">
          Add channel
        </button>
      </form>
    </section>
  );
}

/** Checkboxes named `${prefix}<value>`, ticked as posted. */
function CheckList({
  legend,
  prefix,
  items,
  v,
  e,
  field,
}: {
  legend: string;
  prefix: string;
  items: { value: string; label: string }[];
  v: Fields;
  e: Errors;
  field: string;
}) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {items.map((it) => (
        <label class="check">
          <input type="checkbox" name={`${prefix}${it.value}`} checked={v[`${prefix}${it.value}`] === 'on'} /> {it.label}
        </label>
      ))}
      <FieldError errors={e} name={field} />
    </fieldset>
  );
}

export function AddRuleForm(props: { csrf: string; values: Fields; errors: Errors; base: string; channels: ChannelInfo[]; groups: GroupOption[] }) {
  const { values: v, errors: e } = props;
  return (
    <section class="card">
      <h2>Add a rule</h2>
      <FormError errors={e} />
      <form method="post" action={`${props.base}/rules`} class="stack" id="add-rule">
        <Csrf token={props.csrf} />
        <label>
          Name <input name="name" required maxlength={64} value={v.name ?? ''} />
          <FieldError errors={e} name="name" />
        </label>
        <CheckList legend="Events" prefix="event_" items={NOTIFICATION_EVENTS.map((ev) => ({ value: ev, label: ev }))} v={v} e={e} field="events" />
        <CheckList legend="Channels" prefix="channel_" items={props.channels.map((ch) => ({ value: ch.name, label: ch.name }))} v={v} e={e} field="channels" />
        <CheckList
          legend="Device groups (subgroups included; none ticked: all devices)"
          prefix="group_"
          items={props.groups.map((g) => ({ value: String(g.id), label: g.path }))}
          v={v}
          e={e}
          field="groups"
        />
        <label class="check">
          <input type="checkbox" name="include_diff" checked={v.include_diff === 'on'} /> Include the configuration diff (redacted as the template redacts;
          configurations are sensitive)
        </label>
        <button type="submit" class="primary">
          Add rule
        </button>
      </form>
    </section>
  );
}
