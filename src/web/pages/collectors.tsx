// Collectors page: each remote collector (zone, last seen, version, queue, backups in the last hour, state), one-time
// enrolment tokens (shown once) and revocation; and the "collector offline" badge the device pages show.
import type { Hono } from 'hono';
import { COLLECTOR_OPS } from '../../features/policy';
import {
  createEnrolToken,
  devicesWithCollectorOffline,
  listCollectors,
  listEnrolTokens,
  revokeCollector,
  revokeEnrolToken,
  type EnrolTokenView,
} from '../../features/collectors/collectors.service';
import type { DB } from '../../db/open';
import { actorOf } from '../../http/context';
import { ActionsHeader, Csrf, FieldError, FormError } from '../components/layout';
import { ShownOnce } from '../components/shown-once';
import { redirectWith, render } from '../render';
import { keepForOneShow, takeShownOnce } from '../session/shown-once';
import { can, fieldErrors, formFields, formatTime, need, type WebContext, type WebEnv } from '../web-context';

const STATE_BADGE = { online: 'ok', offline: 'expired', revoked: 'revoked' } as const;
const TOKEN_BADGE = { valid: 'ok', used: 'revoked', expired: 'expired' } as const;

export function registerCollectors(web: Hono<WebEnv>): void {
  // As with API keys: the token is shown by the GET the creation redirects to, once.
  web.get('/collectors', need(COLLECTOR_OPS.list), (c) => {
    const ref = c.req.query('created');
    if (!ref) return collectorsPage(c, {});
    const kept = takeShownOnce(c.get('session').idHash, ref);
    return collectorsPage(c, kept ? { created: JSON.parse(kept) as Created } : { shownAlready: true });
  });

  web.post('/collectors/tokens', need(COLLECTOR_OPS.createToken), async (c) => {
    const f = await formFields(c);
    const hours = (f.hours ?? '').trim() === '' ? 24 : Number(f.hours);
    try {
      const t = createEnrolToken(c.get('app').db, actorOf(c), (f.zone ?? '').trim(), hours);
      const created: Created = { zone: f.zone.trim(), token: t.token, expires_at: t.expires_at };
      return c.redirect(`/collectors?created=${keepForOneShow(c.get('session').idHash, JSON.stringify(created))}`, 303);
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors) return collectorsPage(c, { errors, values: f }, 422);
      throw err;
    }
  });

  web.post('/collectors/tokens/:id/revoke', need(COLLECTOR_OPS.revokeToken), (c) => {
    const id = c.req.param('id');
    revokeEnrolToken(c.get('app').db, actorOf(c), id);
    return redirectWith(c, '/collectors', `Enrolment token ${id} revoked: it enrols nothing.`);
  });

  web.post('/collectors/:name/revoke', need(COLLECTOR_OPS.revoke), (c) => {
    const name = c.req.param('name');
    revokeCollector(c.get('app').db, actorOf(c), name);
    return redirectWith(c, '/collectors', `Collector ${name} revoked: its key is refused from now on and its leased backups return to the queue.`);
  });
}

/** The devices of `deviceIds` whose zone has no collector online, for the reachability badge. */
export function collectorOfflineDevices(c: WebContext, db: DB, deviceIds: readonly number[]): Map<number, string> {
  return devicesWithCollectorOffline(db, deviceIds, c.get('app').config.collector.offline_after * 1000);
}

/** A device's reachability, or "collector offline" when its zone's collector is: the central never reaches it itself. */
export function ReachabilityBadge({ status, error, offlineZone }: { status: string; error?: string | null; offlineZone?: string }) {
  if (offlineZone !== undefined) {
    return (
      <span class="badge expired" title={`no collector of zone ${offlineZone} is online: its backups wait in the queue`}>
        collector offline
      </span>
    );
  }
  return (
    <span class={`badge ${status}`} title={error ?? undefined}>
      {status}
    </span>
  );
}

interface Created {
  zone: string;
  token: string;
  expires_at: number;
}

interface PageState {
  created?: Created;
  shownAlready?: boolean;
  errors?: Record<string, string> | null;
  values?: Record<string, string>;
}

function collectorsPage(c: WebContext, s: PageState, status = 200) {
  const app = c.get('app');
  const tz = c.get('timezone');
  const list = listCollectors(app.db, c.get('principal'), app.config.collector.offline_after * 1000);
  const csrf = c.get('session').csrfToken;
  const manage = can(c, COLLECTOR_OPS.revoke);
  const tokens = can(c, COLLECTOR_OPS.listTokens) ? listEnrolTokens(app.db, actorOf(c), 1, 20).items : null;
  return render(
    c,
    { title: 'Collectors', active: '/collectors', status },
    <>
      <h1>Collectors</h1>
      <p>
        A collector runs at a remote site, dials out to this appliance and backs up the devices of its zone. A collector not seen for{' '}
        {app.config.collector.offline_after} s counts as offline. Enrol one with <code>confvault collector enrol</code> and a one-time token.
      </p>
      <ShownOnce
        id="new-token"
        label="New enrolment token"
        value={s.created?.token ?? null}
        title={<>Enrolment token for zone “{s.created?.zone}”</>}
        warning={<>Copy this token now: it is shown only once, works once, and expires {s.created ? formatTime(s.created.expires_at, tz) : ''}.</>}
        shownAlready={s.shownAlready ? 'A token is shown only once, on the page its creation opened. If you did not copy it, create another.' : null}
      />
      {can(c, COLLECTOR_OPS.createToken) ? (
        <section class="card">
          <h2>Create an enrolment token</h2>
          <FormError errors={s.errors} />
          <form method="post" action="/collectors/tokens" class="row">
            <Csrf token={csrf} />
            <label>
              Zone
              <input name="zone" maxlength={64} required placeholder="branch-east" value={s.values?.zone ?? ''} />
              <FieldError errors={s.errors} name="zone" />
            </label>
            <label>
              Valid for (hours)
              <input name="hours" inputmode="numeric" pattern="[0-9]*" value={s.values?.hours ?? '24'} />
              <FieldError errors={s.errors} name="hours" />
            </label>
            <button type="submit" class="primary">
              Create token
            </button>
          </form>
        </section>
      ) : null}
      <section>
        <h2>Enrolled collectors</h2>
        {list.length === 0 ? (
          <p>No collectors yet.</p>
        ) : (
          <div class="table-wrap">
            <table class="list" id="collectors">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Zone</th>
                  <th>Last seen</th>
                  <th>Version</th>
                  <th>Queue (waiting / leased)</th>
                  <th>Backups, last hour</th>
                  <th>State</th>
                  {manage ? <ActionsHeader /> : null}
                </tr>
              </thead>
              <tbody>
                {list.map((k) => (
                  <tr data-collector={k.name}>
                    <td>{k.name}</td>
                    <td>{k.zone}</td>
                    <td>{k.last_seen_at ? formatTime(k.last_seen_at, tz) : 'never'}</td>
                    <td>{k.version ?? '—'}</td>
                    <td>{`${k.queued} / ${k.leased}`}</td>
                    <td>{k.stored_last_hour}</td>
                    <td>
                      <span class={`badge ${STATE_BADGE[k.state]}`}>{k.state}</span>
                    </td>
                    {manage ? (
                      <td>
                        {k.state !== 'revoked' ? (
                          <RevokeForm
                            action={`/collectors/${encodeURIComponent(k.name)}/revoke`}
                            what={`collector ${k.name}`}
                            confirm="Its key is refused from now on."
                            csrf={csrf}
                          />
                        ) : null}
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {tokens ? <TokenTable tokens={tokens} tz={tz} csrf={csrf} revoke={can(c, COLLECTOR_OPS.revokeToken)} /> : null}
    </>,
  );
}

/** The newest enrolment tokens, never the token itself: who made each, until when, whether it enrolled a collector. */
function TokenTable({ tokens, tz, csrf, revoke }: { tokens: EnrolTokenView[]; tz: string; csrf: string; revoke: boolean }) {
  return (
    <section>
      <h2>Enrolment tokens</h2>
      {tokens.length === 0 ? (
        <p>No enrolment tokens yet.</p>
      ) : (
        <div class="table-wrap">
          <table class="list" id="enrol-tokens">
            <caption class="visually-hidden">The 20 newest enrolment tokens</caption>
            <thead>
              <tr>
                <th>Id</th>
                <th>Zone</th>
                <th>Created by</th>
                <th>Expires</th>
                <th>State</th>
                {revoke ? <ActionsHeader /> : null}
              </tr>
            </thead>
            <tbody>
              {tokens.map((t) => (
                <tr data-token={t.id}>
                  <td class="mono">{t.id}</td>
                  <td>{t.zone}</td>
                  <td>{t.created_by}</td>
                  <td>{formatTime(t.expires_at, tz)}</td>
                  <td>
                    <span class={`badge ${TOKEN_BADGE[t.state]}`}>
                      {t.state === 'used' && t.collector_id !== null ? `used (collector ${t.collector_id})` : t.state}
                    </span>
                  </td>
                  {revoke ? (
                    <td>
                      {t.state !== 'used' ? (
                        <RevokeForm action={`/collectors/tokens/${t.id}/revoke`} what={`enrolment token ${t.id}`} confirm="It enrols nothing." csrf={csrf} />
                      ) : null}
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** A Revoke button in a list row, confirmed first, named for assistive technology by what it revokes. */
function RevokeForm({ action, what, confirm, csrf }: { action: string; what: string; confirm: string; csrf: string }) {
  return (
    <form method="post" action={action} class="inline" data-confirm={`Revoke ${what}? ${confirm}`}>
      <Csrf token={csrf} />
      <button type="submit" class="danger" aria-label={`Revoke ${what}`}>
        Revoke
      </button>
    </form>
  );
}
