// Settings → Notifications: channels (add, remove, "Send test"), rules (add, remove) and each channel's delivery log.
import { NOTIFICATION_OPS } from '../../features/policy';
import type { Hono } from 'hono';
import {
  createChannel,
  destinationPolicy,
  createRule,
  listChannels,
  listDeliveries,
  listRules,
  removeChannel,
  removeRule,
} from '../../features/notifications/notifications.service';
import { sendTestMessage } from '../../features/notifications/notifications.worker';
import { CHANNEL_TYPES, NOTIFICATION_EVENTS } from '../../features/notifications/notifications.types';
import { actorOf } from '../../http/context';
import { ActionsHeader, Csrf, FieldError, FormError } from '../components/layout';
import { redirectWith, render } from '../render';
import { can, fieldErrors, formFields, formatTime, need, type WebContext, type WebEnv } from '../web-context';

const BASE = '/settings/notifications';
const split = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function registerNotifications(web: Hono<WebEnv>): void {
  web.get(BASE, need(NOTIFICATION_OPS.view), (c) => notificationsPage(c, {}));

  web.post(`${BASE}/channels`, need(NOTIFICATION_OPS.addChannel), async (c) => {
    const f = await formFields(c);
    const app = c.get('app');
    try {
      await createChannel(app.db, actorOf(c), app.secrets, destinationPolicy(app.config), {
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
      });
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors) return notificationsPage(c, { channelErrors: errors, values: { ...f, secret: '' } }, 422);
      throw err;
    }
    return redirectWith(c, BASE, `Channel ${f.name} added.`);
  });

  web.post(`${BASE}/channels/:name/remove`, need(NOTIFICATION_OPS.removeChannel), (c) => {
    const name = c.req.param('name');
    removeChannel(c.get('app').db, actorOf(c), name);
    return redirectWith(c, BASE, `Channel ${name} removed.`);
  });

  web.post(`${BASE}/channels/:name/test`, need(NOTIFICATION_OPS.testChannel), async (c) => {
    const name = c.req.param('name');
    const app = c.get('app');
    const r = await sendTestMessage({ db: app.db, secrets: app.secrets, snapshots: app.snapshots, config: app.config, log: app.log }, actorOf(c), name);
    return r.error
      ? redirectWith(c, `${BASE}?channel=${encodeURIComponent(name)}`, `Test message to ${name} failed: ${r.error}`, 'error')
      : redirectWith(c, `${BASE}?channel=${encodeURIComponent(name)}`, `Test message delivered to ${name} (delivery ${r.delivery_id}).`);
  });

  web.post(`${BASE}/rules`, need(NOTIFICATION_OPS.addRule), async (c) => {
    const f = await formFields(c);
    const groups = split(f.groups);
    if (groups.some((g) => !/^\d+$/.test(g))) return notificationsPage(c, { ruleErrors: { groups: 'comma-separated group ids' }, values: f }, 422);
    try {
      createRule(c.get('app').db, actorOf(c), {
        name: (f.name ?? '').trim(),
        events: NOTIFICATION_EVENTS.filter((e) => f[`event_${e}`] === 'on'),
        channels: Object.keys(f)
          .filter((k) => k.startsWith('channel_') && f[k] === 'on')
          .map((k) => k.slice('channel_'.length)),
        groups: groups.map(Number),
        include_diff: f.include_diff === 'on',
      });
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors) return notificationsPage(c, { ruleErrors: errors, values: f }, 422);
      throw err;
    }
    return redirectWith(c, BASE, `Rule ${f.name} added.`);
  });

  web.post(`${BASE}/rules/:name/remove`, need(NOTIFICATION_OPS.removeRule), (c) => {
    const name = c.req.param('name');
    removeRule(c.get('app').db, actorOf(c), name);
    return redirectWith(c, BASE, `Rule ${name} removed.`);
  });
}

interface PageState {
  channelErrors?: Record<string, string> | null;
  ruleErrors?: Record<string, string> | null;
  values?: Record<string, string>;
}

function notificationsPage(c: WebContext, s: PageState, status = 200) {
  const db = c.get('app').db;
  const actor = actorOf(c);
  const tz = c.get('timezone');
  const csrf = c.get('session').csrfToken;
  const channels = listChannels(db, actor);
  const rules = listRules(db, actor);
  const names = new Map(channels.map((ch) => [ch.id, ch.name]));
  const selected = c.req.query('channel');
  const logChannel = channels.find((ch) => ch.name === selected) ?? null;
  const deliveries = listDeliveries(db, actor, logChannel?.name ?? null, 50);
  const edit = can(c, 'settings.update');
  const v = s.values ?? {};
  return render(
    c,
    { title: 'Notifications', active: BASE, status },
    <>
      <h1>Notifications</h1>
      <p>
        Channels are where messages go; rules say which events, for which device groups, go to which channels. At most one message per channel per{' '}
        {c.get('app').config.notifications.min_interval_seconds} s: events in between arrive together as a digest.
      </p>
      <section>
        <h2>Channels</h2>
        {channels.length === 0 ? (
          <p>No channels yet.</p>
        ) : (
          <div class="table-wrap">
            <table class="list" id="channels">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Type</th>
                  <th>Destination</th>
                  <th>Secret</th>
                  <th>Last message</th>
                  <ActionsHeader />
                </tr>
              </thead>
              <tbody>
                {channels.map((ch) => (
                  <tr data-channel={ch.name}>
                    <td>
                      <a href={`${BASE}?channel=${encodeURIComponent(ch.name)}#log`}>{ch.name}</a>
                    </td>
                    <td>{ch.type}</td>
                    <td class="mono">
                      {ch.type === 'email'
                        ? `${ch.settings.smtp_host}:${ch.settings.smtp_port} (${ch.settings.smtp_tls}) → ${(ch.settings.to ?? []).join(', ')}`
                        : ch.type === 'slack' || ch.type === 'teams'
                          ? 'URL stored encrypted'
                          : ch.settings.url}
                    </td>
                    <td>{ch.has_secret ? 'set (not shown)' : '—'}</td>
                    <td>{ch.last_sent_at ? formatTime(ch.last_sent_at, tz) : 'never'}</td>
                    <td>
                      {edit ? (
                        <>
                          <form method="post" action={`${BASE}/channels/${encodeURIComponent(ch.name)}/test`} class="inline">
                            <Csrf token={csrf} />
                            <button type="submit">Send test</button>
                          </form>
                          <form method="post" action={`${BASE}/channels/${encodeURIComponent(ch.name)}/remove`} class="inline">
                            <Csrf token={csrf} />
                            <button type="submit" class="danger">
                              Remove
                            </button>
                          </form>
                        </>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {edit ? (
        <section class="card">
          <h2>Add a channel</h2>
          <FormError errors={s.channelErrors} />
          <form method="post" action={`${BASE}/channels`} class="stack" id="add-channel">
            <Csrf token={csrf} />
            <label>
              Name <input name="name" required maxlength={64} value={v.name ?? ''} />
              <FieldError errors={s.channelErrors} name="name" />
            </label>
            <label>
              Type
              <select name="type">
                {CHANNEL_TYPES.map((t) => (
                  <option value={t} selected={v.type === t}>
                    {t}
                  </option>
                ))}
              </select>
              <FieldError errors={s.channelErrors} name="type" />
            </label>
            <label>
              URL (webhook: where JSON is posted; Slack/Teams: the incoming-webhook URL, stored encrypted; syslog: udp://host:514 or tcp://host:514)
              <input name="url" value={v.type === 'slack' || v.type === 'teams' ? '' : (v.url ?? '')} />
              <FieldError errors={s.channelErrors} name="url" />
            </label>
            <label>
              Secret (webhook: HMAC key; e-mail: SMTP password; never shown again)
              <input name="secret" type="password" autocomplete="new-password" />
              <FieldError errors={s.channelErrors} name="secret" />
            </label>
            <fieldset>
              <legend>E-mail</legend>
              <label>
                SMTP host <input name="smtp_host" value={v.smtp_host ?? ''} />
                <FieldError errors={s.channelErrors} name="smtp_host" />
              </label>
              <label>
                Port <input name="smtp_port" inputmode="numeric" value={v.smtp_port ?? '587'} />
                <FieldError errors={s.channelErrors} name="smtp_port" />
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
                <FieldError errors={s.channelErrors} name="from" />
              </label>
              <label>
                To (comma-separated) <input name="to" value={v.to ?? ''} />
                <FieldError errors={s.channelErrors} name="to" />
              </label>
            </fieldset>
            <button type="submit" class="primary">
              Add channel
            </button>
          </form>
        </section>
      ) : null}
      <section>
        <h2>Rules</h2>
        {rules.length === 0 ? (
          <p>No rules yet: nothing is sent.</p>
        ) : (
          <div class="table-wrap">
            <table class="list" id="rules">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Events</th>
                  <th>Channels</th>
                  <th>Groups</th>
                  <th>Diff</th>
                  <ActionsHeader />
                </tr>
              </thead>
              <tbody>
                {rules.map((r) => (
                  <tr data-rule={r.name}>
                    <td>{r.name}</td>
                    <td>{r.events.join(', ')}</td>
                    <td>{r.channel_ids.map((id) => names.get(id) ?? String(id)).join(', ')}</td>
                    <td>{r.group_ids.length ? r.group_ids.join(', ') + ' (with subgroups)' : 'all devices'}</td>
                    <td>{r.include_diff ? 'yes' : 'no'}</td>
                    <td>
                      {edit ? (
                        <form method="post" action={`${BASE}/rules/${encodeURIComponent(r.name)}/remove`} class="inline">
                          <Csrf token={csrf} />
                          <button type="submit" class="danger">
                            Remove
                          </button>
                        </form>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {edit && channels.length ? (
        <section class="card">
          <h2>Add a rule</h2>
          <FormError errors={s.ruleErrors} />
          <form method="post" action={`${BASE}/rules`} class="stack" id="add-rule">
            <Csrf token={csrf} />
            <label>
              Name <input name="name" required maxlength={64} value={v.name ?? ''} />
              <FieldError errors={s.ruleErrors} name="name" />
            </label>
            <fieldset>
              <legend>Events</legend>
              {NOTIFICATION_EVENTS.map((e) => (
                <label>
                  <input type="checkbox" name={`event_${e}`} checked={v[`event_${e}`] === 'on'} /> {e}
                </label>
              ))}
              <FieldError errors={s.ruleErrors} name="events" />
            </fieldset>
            <fieldset>
              <legend>Channels</legend>
              {channels.map((ch) => (
                <label>
                  <input type="checkbox" name={`channel_${ch.name}`} checked={v[`channel_${ch.name}`] === 'on'} /> {ch.name}
                </label>
              ))}
              <FieldError errors={s.ruleErrors} name="channels" />
            </fieldset>
            <label>
              Device groups (ids, comma-separated, subgroups included; empty: all devices) <input name="groups" value={v.groups ?? ''} />
              <FieldError errors={s.ruleErrors} name="groups" />
            </label>
            <label>
              <input type="checkbox" name="include_diff" checked={v.include_diff === 'on'} /> Include the configuration diff (redacted as the template redacts;
              configurations are sensitive)
            </label>
            <button type="submit" class="primary">
              Add rule
            </button>
          </form>
        </section>
      ) : null}
      <section id="log">
        <h2>Delivery log{logChannel ? `: ${logChannel.name}` : ''}</h2>
        {deliveries.length === 0 ? (
          <p>No deliveries yet.</p>
        ) : (
          <div class="table-wrap">
            <table class="list" id="deliveries">
              <thead>
                <tr>
                  <th>Created</th>
                  <th>Channel</th>
                  <th>Delivery id</th>
                  <th>Events</th>
                  <th>Status</th>
                  <th>Attempts</th>
                  <th>Last error</th>
                </tr>
              </thead>
              <tbody>
                {deliveries.map((d) => (
                  <tr data-delivery={d.id} data-status={d.status}>
                    <td>{formatTime(d.created_at, tz)}</td>
                    <td>{names.get(d.channel_id) ?? String(d.channel_id)}</td>
                    <td class="mono">{d.id}</td>
                    <td>{d.event_count}</td>
                    <td>{d.status === 'dead' ? <strong class="badge failed">dead</strong> : d.status}</td>
                    <td>{d.attempts}</td>
                    <td>{d.last_error ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>,
  );
}
