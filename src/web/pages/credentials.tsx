// Credentials: list, create, edit, delete. Secrets are write-only: the page shows only whether each one is set.
import { CREDENTIAL_OPS } from '../../features/policy';
import type { Hono } from 'hono';
import { CredentialCreateSchema } from '../../features/credentials/credentials.schemas';
import {
  createCredential,
  deleteCredential,
  getCredential,
  listCredentialsFor,
  updateCredential,
  type Credential,
} from '../../features/credentials/credentials.service';
import { actorOf } from '../../http/context';
import { zodFieldErrors } from '../../http/errors';
import { SCOPE_ALL } from '../../identity/principal';
import { Csrf, FieldError, FormError } from '../components/layout';
import { groupOptions, groupPaths } from './groups-options';
import { redirectWith, render } from '../render';
import { can, fieldErrors, formFields, intParam, need, type WebContext, type WebEnv } from '../web-context';

const SECRETS = [
  ['password', 'Password'],
  ['private_key', 'SSH private key'],
  ['passphrase', 'Key passphrase'],
  ['enable_secret', 'Enable secret'],
] as const;

/** Form → the API's input: an empty secret field means "keep" (edit) or "none" (create); a ticked "clear" box clears it. */
function parseCredential(f: Record<string, string>, editing: boolean) {
  const body: Record<string, unknown> = { name: f.name ?? '', username: f.username ?? '', description: f.description ?? '' };
  // Usage scope: ticked groups; none ticked means "devices anywhere" on edit, and the service's default on create.
  const groups = Object.keys(f)
    .filter((k) => /^group_\d+$/.test(k) && f[k] === 'on')
    .map((k) => Number(k.slice(6)));
  body.group_ids = groups.length ? groups : editing ? null : undefined;
  for (const [k] of SECRETS) {
    if (f[`clear_${k}`] === 'on') body[k] = null;
    else if ((f[k] ?? '') !== '') body[k] = k === 'private_key' ? f[k].replace(/\r\n/g, '\n') : f[k];
    else if (!editing) body[k] = undefined;
  }
  const r = CredentialCreateSchema.safeParse(body);
  if (r.success) return { ok: true as const, input: r.data };
  const errors: Record<string, string> = {};
  for (const e of zodFieldErrors(r.error, 'json')) errors[e.field] ??= e.message;
  return { ok: false as const, errors };
}

export function registerCredentials(web: Hono<WebEnv>): void {
  web.get('/credentials', need(CREDENTIAL_OPS.list), (c) => listPage(c));
  web.get('/credentials/new', need(CREDENTIAL_OPS.create), (c) => formPage(c, null));
  web.post('/credentials', need(CREDENTIAL_OPS.create), async (c) => {
    const f = await formFields(c);
    const p = parseCredential(f, false);
    if (!p.ok) return formPage(c, null, f, p.errors);
    try {
      const cr = createCredential(c.get('app').db, actorOf(c), c.get('app').secrets, p.input);
      return redirectWith(c, '/credentials', `Credential ${cr.name} created.`);
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors) return formPage(c, null, f, errors);
      throw err;
    }
  });
  web.get('/credentials/:id/edit', need(CREDENTIAL_OPS.update), (c) => formPage(c, intParam(c, 'id')));
  web.post('/credentials/:id/edit', need(CREDENTIAL_OPS.update), async (c) => {
    const id = intParam(c, 'id');
    const f = await formFields(c);
    getCredential(c.get('app').db, id);
    const p = parseCredential(f, true);
    if (!p.ok) return formPage(c, id, f, p.errors);
    try {
      const cr = updateCredential(c.get('app').db, actorOf(c), c.get('app').secrets, id, p.input);
      return redirectWith(c, '/credentials', `Credential ${cr.name} saved.`);
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors) return formPage(c, id, f, errors);
      throw err;
    }
  });
  web.post('/credentials/:id/delete', need(CREDENTIAL_OPS.delete), (c) => {
    const id = intParam(c, 'id');
    const cr = getCredential(c.get('app').db, id);
    try {
      deleteCredential(c.get('app').db, actorOf(c), id);
    } catch (err) {
      if (fieldErrors(err)) return redirectWith(c, '/credentials', (err as Error).message, 'error');
      throw err;
    }
    return redirectWith(c, '/credentials', `Credential ${cr.name} deleted.`);
  });
}

function isSet(cr: Credential, k: (typeof SECRETS)[number][0]): boolean {
  return Boolean((cr as unknown as Record<string, unknown>)[`has_${k}`]);
}

function listPage(c: WebContext) {
  const items = listCredentialsFor(c.get('app').db, c.get('principal'), { page: 1, limit: 1000 }).items;
  const paths = groupPaths(groupOptions(c.get('app').db, SCOPE_ALL));
  return render(
    c,
    { title: 'Credentials', active: '/credentials' },
    <>
      <div class="title-row">
        <h1>Credentials</h1>
        {can(c, CREDENTIAL_OPS.create) ? (
          <a class="button primary" href="/credentials/new">
            Add credential
          </a>
        ) : null}
      </div>
      {items.length === 0 ? (
        <p class="empty">No credentials yet.</p>
      ) : (
        <div class="table-wrap">
          <table class="list" id="credentials">
            <thead>
              <tr>
                <th>Name</th>
                <th>Username</th>
                <th>Secrets set</th>
                <th>Devices</th>
                <th>Usable by devices in</th>
              </tr>
            </thead>
            <tbody>
              {items.map((cr) => (
                <tr>
                  <td>{can(c, CREDENTIAL_OPS.update) ? <a href={`/credentials/${cr.id}/edit`}>{cr.name}</a> : cr.name}</td>
                  <td>{cr.username || '—'}</td>
                  <td>
                    {SECRETS.filter(([k]) => isSet(cr, k))
                      .map(([, l]) => l)
                      .join(', ') || 'none'}
                  </td>
                  <td>{String(cr.device_count)}</td>
                  <td>{cr.group_ids === null ? 'anywhere' : cr.group_ids.map((g) => paths.get(g) ?? `group ${g}`).join(', ') || 'nowhere'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>,
  );
}

function formPage(c: WebContext, id: number | null, values?: Record<string, string>, errors?: Record<string, string> | null) {
  const cr = id === null ? undefined : getCredential(c.get('app').db, id);
  const v = (k: string, d: string) => values?.[k] ?? d;
  const csrf = c.get('session').csrfToken;
  return render(
    c,
    { title: cr ? `Edit ${cr.name}` : 'Add credential', active: '/credentials', status: errors ? 422 : 200 },
    <>
      <h1>{cr ? `Edit ${cr.name}` : 'Add credential'}</h1>
      <section class="card">
        <form method="post" action={cr ? `/credentials/${cr.id}/edit` : '/credentials'} class="grid-form" novalidate autocomplete="off">
          <Csrf token={csrf} />
          <FormError errors={errors} full />
          <label>
            Name <input name="name" required maxlength={128} value={v('name', cr?.name ?? '')} />
            <FieldError errors={errors} name="name" />
          </label>
          <label>
            Username <input name="username" maxlength={128} value={v('username', cr?.username ?? '')} autocomplete="off" />
            <FieldError errors={errors} name="username" />
          </label>
          {SECRETS.map(([k, label]) => (
            <label class={k === 'private_key' ? 'full' : undefined}>
              {label} {cr ? <span class="muted">({isSet(cr, k) ? 'set — leave empty to keep' : 'not set'})</span> : null}
              {k === 'private_key' ? (
                <textarea name={k} rows={4} class="mono" autocomplete="off"></textarea>
              ) : (
                <input name={k} type="password" autocomplete="new-password" />
              )}
              {cr && isSet(cr, k) ? (
                <span class="check">
                  <input type="checkbox" name={`clear_${k}`} /> clear
                </span>
              ) : null}
              <FieldError errors={errors} name={k} />
            </label>
          ))}
          <label class="full">
            Description <input name="description" value={v('description', cr?.description ?? '')} />
          </label>
          <UsageGroups c={c} current={cr?.group_ids ?? null} values={values} errors={errors} />
          <div class="full actions">
            <button type="submit" class="primary">
              {cr ? 'Save credential' : 'Create credential'}
            </button>
            <a href="/credentials">Cancel</a>
          </div>
        </form>
      </section>
      {cr && can(c, CREDENTIAL_OPS.delete) ? (
        <form method="post" action={`/credentials/${cr.id}/delete`} class="inline" data-confirm={`Delete credential ${cr.name}?`}>
          <Csrf token={csrf} />
          <button type="submit" class="danger">
            Delete credential
          </button>
        </form>
      ) : null}
    </>,
  );
}

/**
 * The usage scope as one box per group of the user's scope; groups of the credential outside it are carried as
 * hidden fields, so saving other fields leaves them as they are (changing them is the service's refusal to give).
 */
function UsageGroups(props: { c: WebContext; current: number[] | null; values?: Record<string, string>; errors?: Record<string, string> | null }) {
  const options = groupOptions(props.c.get('app').db, props.c.get('principal').scope);
  const shown = new Set(options.map((o) => o.id));
  const ticked = (id: number) => (props.values ? props.values[`group_${id}`] === 'on' : (props.current?.includes(id) ?? false));
  return (
    <fieldset class="full">
      <legend>Usable by devices in (subgroups included; none ticked: devices anywhere, which needs scope "all")</legend>
      {options.map((o) => (
        <label class="check">
          <input type="checkbox" name={`group_${o.id}`} checked={ticked(o.id)} /> {o.label}
        </label>
      ))}
      {(props.current ?? [])
        .filter((g) => !shown.has(g))
        .map((g) => (
          <input type="hidden" name={`group_${g}`} value="on" />
        ))}
      <FieldError errors={props.errors} name="group_ids" />
    </fieldset>
  );
}
