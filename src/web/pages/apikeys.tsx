// API Key page: create a key for oneself (shown once, with a copy button), list own keys, revoke; data-safety advice.
import { APIKEY_OPS } from '../../features/policy';
import type { Hono } from 'hono';
import { ApiError } from '../../errors';
import { createApiKey, listApiKeys, revokeApiKey, type ApiKeyInfo } from '../../features/apikeys/apikeys.service';
import { actorOf } from '../../http/context';
import { ActionsHeader, Csrf, FieldError, FormError } from '../components/layout';
import { ShownOnce } from '../components/shown-once';
import { redirectWith, render } from '../render';
import { keepForOneShow, takeShownOnce } from '../session/shown-once';
import { can, fieldErrors, formFields, formatTime, intParam, need, type WebContext, type WebEnv } from '../web-context';

export function registerApiKeys(web: Hono<WebEnv>): void {
  // The key is shown by the GET the creation redirects to, once: reloading that page shows it no more and creates nothing.
  web.get('/api-keys', need(APIKEY_OPS.list), (c) => {
    const ref = c.req.query('created');
    if (!ref) return keysPage(c, {});
    const kept = takeShownOnce(c.get('session').idHash, ref);
    const [id, key] = kept ? [Number(kept.slice(0, kept.indexOf(':'))), kept.slice(kept.indexOf(':') + 1)] : [0, ''];
    const info = kept ? listApiKeys(c.get('app').db, c.get('principal').username).find((k) => k.id === id) : undefined;
    return keysPage(c, info ? { created: { key, info } } : { shownAlready: true });
  });

  web.post('/api-keys', need(APIKEY_OPS.create), async (c) => {
    const f = await formFields(c);
    const days = (f.expires_in_days ?? '').trim();
    const expiresInDays = days === '' ? null : Number(days);
    if (expiresInDays !== null && !Number.isInteger(expiresInDays)) {
      return keysPage(c, { errors: { expires_in_days: 'must be a whole number of days, 1-3650' }, values: f }, 422);
    }
    try {
      const { key, info } = createApiKey(c.get('app').db, actorOf(c), { username: c.get('principal').username, name: f.name, expiresInDays });
      return c.redirect(`/api-keys?created=${keepForOneShow(c.get('session').idHash, `${info.id}:${key}`)}`, 303);
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors) return keysPage(c, { errors, values: f }, 422);
      throw err;
    }
  });

  web.post('/api-keys/:id/revoke', need(APIKEY_OPS.revoke), (c) => {
    const id = intParam(c, 'id');
    const db = c.get('app').db;
    // Only one's own keys: the list below shows no one else's, and a forged id must not reach them either.
    const own = listApiKeys(db, c.get('principal').username).find((k) => k.id === id);
    if (!own) throw ApiError.notFound(`API key ${id}`);
    const info = revokeApiKey(db, actorOf(c), id);
    return redirectWith(c, '/api-keys', `Key ${info.prefix}… revoked: it is refused from now on.`);
  });
}

interface KeysPageState {
  created?: { key: string; info: ApiKeyInfo };
  /** The page of a created key, reloaded: the key is not shown again. */
  shownAlready?: boolean;
  errors?: Record<string, string> | null;
  values?: Record<string, string>;
}

function keysPage(c: WebContext, s: KeysPageState, status = 200) {
  const p = c.get('principal');
  const tz = c.get('timezone');
  const keys = listApiKeys(c.get('app').db, p.username).reverse();
  const csrf = c.get('session').csrfToken;
  return render(
    c,
    { title: 'API keys', active: '/api-keys', status },
    <>
      <h1>API keys</h1>
      <p>
        Keys let scripts and monitoring use the public API as <strong>{p.username}</strong>, with your permissions and device groups. Send a key in the{' '}
        <code>X-API-Key</code> header. <a href="/api/v1/docs">API documentation</a>
      </p>
      <aside class="advice" aria-label="Data safety">
        <strong>Data safety.</strong> Backup configuration text may contain public addresses, account references, SNMP strings and other sensitive data. For
        reading backups, use a key whose user holds only the <code>backups.view</code> permission, and keep configuration text out of logs, monitoring labels
        and tickets.
      </aside>
      <ShownOnce
        id="new-key"
        label="New API key"
        value={s.created?.key ?? null}
        title={<>New key “{s.created?.info.name || s.created?.info.prefix}”</>}
        warning="Copy this key now. It is shown only once and cannot be recovered; if you lose it, revoke it and create another."
        shownAlready={
          s.shownAlready
            ? 'A new key is shown only once, on the page its creation opened; it is listed below by its prefix. If you did not copy it, revoke it and create another.'
            : null
        }
      />
      {can(c, APIKEY_OPS.create) ? (
        <section class="card">
          <h2>Create a key</h2>
          <FormError errors={s.errors} />
          <form method="post" action="/api-keys" class="row">
            <Csrf token={csrf} />
            <label>
              Name
              <input name="name" maxlength={128} placeholder="monitoring" value={s.values?.name ?? ''} />
              <FieldError errors={s.errors} name="name" />
            </label>
            <label>
              Expires in (days, empty: never)
              <input name="expires_in_days" inputmode="numeric" pattern="[0-9]*" value={s.values?.expires_in_days ?? '90'} />
              <FieldError errors={s.errors} name="expires_in_days" />
            </label>
            <button type="submit" class="primary">
              Create key
            </button>
          </form>
        </section>
      ) : null}
      <section>
        <h2>Your keys</h2>
        {keys.length === 0 ? (
          <p>No keys yet.</p>
        ) : (
          <div class="table-wrap">
            <table class="list" id="keys">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Prefix</th>
                  <th>Created</th>
                  <th>Last used</th>
                  <th>Expires</th>
                  <th>State</th>
                  <ActionsHeader />
                </tr>
              </thead>
              <tbody>
                {keys.map((k) => (
                  <tr data-key-id={String(k.id)}>
                    <td>{k.name || '—'}</td>
                    <td class="mono">{k.prefix}…</td>
                    <td>{formatTime(k.created_at, tz)}</td>
                    <td>{k.last_used_at ? formatTime(k.last_used_at, tz) : 'never'}</td>
                    <td>{k.expires_at ? formatTime(k.expires_at, tz) : 'never'}</td>
                    <td>
                      <span
                        class={`badge ${k.state}`}
                        title={
                          k.state === 'exposed'
                            ? 'Revoked: the key was sent in a URL query string, so it is in proxy and browser logs. Create a new key and send it only in the X-API-Key header.'
                            : undefined
                        }
                      >
                        {k.state}
                      </span>
                    </td>
                    <td>
                      {k.state === 'active' && can(c, APIKEY_OPS.revoke) ? (
                        <form
                          method="post"
                          action={`/api-keys/${k.id}/revoke`}
                          class="inline"
                          data-confirm={`Revoke key ${k.prefix}…? Scripts using it will stop working.`}
                        >
                          <Csrf token={csrf} />
                          <button type="submit" class="danger">
                            Revoke
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
    </>,
  );
}
