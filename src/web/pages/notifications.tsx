// Settings → Notifications: channels (add, remove, "Send test"), rules (add, remove) and each channel's delivery log; the forms are notification-forms.tsx.
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
  type ChannelInfo,
} from '../../features/notifications/notifications.service';
import { sendTestMessage } from '../../features/notifications/notifications.worker';
import { actorOf } from '../../http/context';
import { ActionsHeader, Csrf } from '../components/layout';
import { redirectWith, render } from '../render';
import { can, fieldErrors, formFields, formatTime, need, type WebContext, type WebEnv } from '../web-context';
import { AddChannelForm, AddRuleForm, channelInput, ruleInput } from './notification-forms';
import { groupOptions } from './groups-options';

const BASE = '/settings/notifications';

export function registerNotifications(web: Hono<WebEnv>): void {
  web.get(BASE, need(NOTIFICATION_OPS.view), (c) => notificationsPage(c, {}));
  // The menu says "Notifications": the short address a person types leads to the page (which checks permission).
  web.get('/notifications', (c) => c.redirect(BASE, 301));

  web.post(`${BASE}/channels`, need(NOTIFICATION_OPS.addChannel), async (c) => {
    const f = await formFields(c);
    const app = c.get('app');
    try {
      await createChannel(app.db, actorOf(c), app.secrets, destinationPolicy(app.config), channelInput(f));
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
    try {
      createRule(c.get('app').db, actorOf(c), ruleInput(f));
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
  const csrf = c.get('session').csrfToken;
  const channels = listChannels(db, actor);
  const names = new Map(channels.map((ch) => [ch.id, ch.name]));
  const edit = can(c, 'settings.update');
  const groups = groupOptions(db, c.get('principal').scope);
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
      <ChannelsTable c={c} channels={channels} edit={edit} />
      {edit ? <AddChannelForm csrf={csrf} values={v} errors={s.channelErrors} base={BASE} /> : null}
      <RulesTable c={c} names={names} groups={new Map(groups.map((g) => [g.id, g.path]))} edit={edit} />
      {edit && channels.length ? <AddRuleForm csrf={csrf} values={v} errors={s.ruleErrors} base={BASE} channels={channels} groups={groups} /> : null}
      <DeliveryLog c={c} channels={channels} names={names} />
    </>,
  );
}

/** A form with one button, posted to `action` (Send test, Remove). */
function ButtonForm({ csrf, action, label, danger }: { csrf: string; action: string; label: string; danger?: boolean }) {
  return (
    <form method="post" action={action} class="inline">
      <Csrf token={csrf} />
      <button type="submit" class={danger ? 'danger' : undefined}>
        {label}
      </button>
    </form>
  );
}

function destination(ch: ChannelInfo): string | undefined {
  if (ch.type === 'email') return `${ch.settings.smtp_host}:${ch.settings.smtp_port} (${ch.settings.smtp_tls}) → ${(ch.settings.to ?? []).join(', ')}`;
  return ch.type === 'slack' || ch.type === 'teams' ? 'URL stored encrypted' : ch.settings.url;
}

function ChannelsTable({ c, channels, edit }: { c: WebContext; channels: ChannelInfo[]; edit: boolean }) {
  const tz = c.get('timezone');
  const csrf = c.get('session').csrfToken;
  const at = (ch: ChannelInfo, what: string) => `${BASE}/channels/${encodeURIComponent(ch.name)}/${what}`;
  return (
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
                  <td class="mono">{destination(ch)}</td>
                  <td>{ch.has_secret ? 'set (not shown)' : '—'}</td>
                  <td>{ch.last_sent_at ? formatTime(ch.last_sent_at, tz) : 'never'}</td>
                  <td>
                    {edit ? (
                      <>
                        <ButtonForm csrf={csrf} action={at(ch, 'test')} label="Send test" />
                        <ButtonForm csrf={csrf} action={at(ch, 'remove')} label="Remove" danger />
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
  );
}

function RulesTable({ c, names, groups, edit }: { c: WebContext; names: Map<number, string>; groups: Map<number, string>; edit: boolean }) {
  const rules = listRules(c.get('app').db, actorOf(c));
  const csrf = c.get('session').csrfToken;
  return (
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
                  <td>{r.group_ids.length ? r.group_ids.map((id) => groups.get(id) ?? `group ${id}`).join(', ') + ' (with subgroups)' : 'all devices'}</td>
                  <td>{r.include_diff ? 'yes' : 'no'}</td>
                  <td>{edit ? <ButtonForm csrf={csrf} action={`${BASE}/rules/${encodeURIComponent(r.name)}/remove`} label="Remove" danger /> : null}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function DeliveryLog({ c, channels, names }: { c: WebContext; channels: ChannelInfo[]; names: Map<number, string> }) {
  const tz = c.get('timezone');
  const selected = c.req.query('channel');
  const logChannel = channels.find((ch) => ch.name === selected) ?? null;
  const deliveries = listDeliveries(c.get('app').db, actorOf(c), logChannel?.name ?? null, 50);
  return (
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
  );
}
