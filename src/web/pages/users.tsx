// Users: list, create (password to be changed at first login), edit role and device-group scope, disable/enable, reset password.
import { USER_OPS } from '../../features/policy';
import type { Hono } from 'hono';
import { ApiError } from '../../errors';
import { listRoles } from '../../features/roles/roles.service';
import { createUser, getUser, listUsers, setUserDisabled, setUserPassword, updateUserAccess, type User } from '../../features/users/users.service';
import { actorOf } from '../../http/context';
import { Csrf, FieldError, FormError } from '../components/layout';
import { redirectWith, render } from '../render';
import { can, fieldErrors, formFields, need, type WebContext, type WebEnv } from '../web-context';
import { groupOptions, groupPaths } from './groups-options';
import { hasTotp, resetUserTotp } from '../../features/users/totp.service';

/** A refused change keeps its form on screen: 403 for a policy refusal, 422 for bad input. */
function statusOf(err: unknown): number {
  if (err instanceof ApiError && err.code === 'CONFLICT') return 409;
  return err instanceof ApiError && err.code === 'PERMISSION_DENIED' ? 403 : 422;
}

/** The scope chosen in a form: "all", or the ticked groups (checkboxes named `groups`, several values). */
async function scopeOf(c: WebContext, f: Record<string, string>): Promise<number[] | null> {
  if (f.scope !== 'groups') return null;
  const body = await c.req.parseBody({ all: true });
  const raw = body.groups;
  const list = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter((v): v is string => typeof v === 'string');
  const ids = list.map(Number);
  if (ids.length === 0 || ids.some((n) => !Number.isSafeInteger(n) || n < 1)) {
    throw ApiError.validation([{ field: 'groups', message: 'tick at least one group, or choose "all groups"' }]);
  }
  return [...new Set(ids)];
}

function userOr404(c: WebContext): User {
  const username = c.req.param('username') ?? '';
  const u = getUser(c.get('app').db, username);
  if (!u) throw ApiError.notFound(`user "${username}"`);
  return u;
}

export function registerUsers(web: Hono<WebEnv>): void {
  web.get('/users', need(USER_OPS.list), (c) => listPage(c));
  web.get('/users/new', need(USER_OPS.create), (c) => createPage(c));
  web.post('/users', need(USER_OPS.create), async (c) => {
    const f = await formFields(c);
    try {
      const groups = await scopeOf(c, f);
      const u = await createUser(c.get('app').db, actorOf(c), {
        username: f.username ?? '',
        password: f.password ?? '',
        role: f.role ?? '',
        groups,
        timezone: (f.timezone ?? '').trim() || null,
        must_change_password: true,
      });
      return redirectWith(c, '/users', `User ${u.username} created; they must change the password at first login.`);
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors) return createPage(c, f, errors, statusOf(err));
      throw err;
    }
  });
  web.get('/users/:username/edit', need(USER_OPS.update), (c) => editPage(c, userOr404(c)));
  web.post('/users/:username/edit', need(USER_OPS.update), async (c) => {
    const before = userOr404(c);
    const f = await formFields(c);
    try {
      const groups = await scopeOf(c, f);
      updateUserAccess(c.get('app').db, actorOf(c), before.username, { role: f.role ?? '', groups });
      return redirectWith(c, '/users', `User ${before.username} saved.`);
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors) return editPage(c, before, f, errors, statusOf(err));
      throw err;
    }
  });
  web.post('/users/:username/disable', need(USER_OPS.update), (c) => toggle(c, true));
  web.post('/users/:username/enable', need(USER_OPS.update), (c) => toggle(c, false));
  web.post('/users/:username/password', need(USER_OPS.update), async (c) => {
    const u = userOr404(c);
    const f = await formFields(c);
    const db = c.get('app').db;
    if ((f.password ?? '') !== (f.confirm ?? '')) return editPage(c, u, f, { password: 'The two passwords differ.' });
    try {
      // Whoever held the old password (or a session opened with it) must log in with the new one.
      await setUserPassword(db, actorOf(c), u.username, f.password ?? '', { mustChange: true, keepSession: c.get('session').idHash });
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors) return editPage(c, u, f, errors, statusOf(err));
      throw err;
    }
    return redirectWith(c, '/users', `Password of ${u.username} reset; they must change it at the next login.`);
  });
  web.post('/users/:username/totp-reset', need(USER_OPS.update), (c) => {
    const u = userOr404(c);
    try {
      resetUserTotp(c.get('app').db, actorOf(c), u.username);
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) return redirectWith(c, '/users', err.message, 'error');
      throw err;
    }
    return redirectWith(c, '/users', `Second factor of ${u.username} removed; they sign in with the password alone, or enrol again.`);
  });
}

function toggle(c: WebContext, disabled: boolean) {
  const u = userOr404(c);
  try {
    setUserDisabled(c.get('app').db, actorOf(c), u.username, disabled);
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) return redirectWith(c, '/users', err.message, 'error');
    throw err;
  }
  return redirectWith(c, '/users', `User ${u.username} ${disabled ? 'disabled' : 'enabled'}.`);
}

function scopeLabel(u: User, paths: Map<number, string>): string {
  return u.scope === 'all' ? 'all groups' : u.scope.map((g) => paths.get(g) ?? `group ${g}`).join(', ');
}

function listPage(c: WebContext) {
  const db = c.get('app').db;
  const paths = groupPaths(groupOptions(db, c.get('principal').scope));
  const users = listUsers(db);
  const csrf = c.get('session').csrfToken;
  const tz = c.get('timezone');
  return render(
    c,
    { title: 'Users', active: '/users' },
    <>
      <div class="title-row">
        <h1>Users</h1>
        {can(c, USER_OPS.create) ? (
          <a class="button primary" href="/users/new">
            Add user
          </a>
        ) : null}
      </div>
      <div class="table-wrap">
        <table class="list" id="users">
          <thead>
            <tr>
              <th>Username</th>
              <th>Role</th>
              <th>Scope</th>
              <th>State</th>
              <th>Time zone</th>
              {can(c, USER_OPS.update) ? <th>Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <tr data-user={u.username}>
                <td>{can(c, USER_OPS.update) ? <a href={`/users/${encodeURIComponent(u.username)}/edit`}>{u.username}</a> : u.username}</td>
                <td>{u.role}</td>
                <td>{scopeLabel(u, paths)}</td>
                <td>
                  {u.disabled ? <span class="badge failed">disabled</span> : <span class="badge active">active</span>}
                  {u.must_change_password ? <span class="badge muted">must change password</span> : null}
                  {u.source !== 'local' ? <span class="badge muted">directory</span> : null}
                </td>
                <td>{u.timezone ?? `appliance (${tz})`}</td>
                {can(c, USER_OPS.update) ? (
                  <td>
                    <form method="post" action={`/users/${encodeURIComponent(u.username)}/${u.disabled ? 'enable' : 'disable'}`} class="inline">
                      <Csrf token={csrf} />
                      <button type="submit" class={u.disabled ? undefined : 'danger'}>
                        {u.disabled ? 'Enable' : 'Disable'}
                      </button>
                    </form>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>,
  );
}

/** Role select and scope choice, shared by the create and edit forms. */
function RoleAndScope(props: { c: WebContext; role: string; scope: 'all' | number[]; errors?: Record<string, string> | null }) {
  const db = props.c.get('app').db;
  const roles = listRoles(db);
  const options = groupOptions(db, props.c.get('principal').scope);
  const ticked = new Set(props.scope === 'all' ? [] : props.scope);
  return (
    <>
      <label>
        Role
        <select name="role" required>
          {roles.map((r) => (
            <option value={r.name} selected={r.name === props.role}>
              {r.name}
            </option>
          ))}
        </select>
        <FieldError errors={props.errors} name="role" />
      </label>
      <fieldset class="full">
        <legend>Device-group scope</legend>
        <label class="check">
          <input type="radio" name="scope" value="all" checked={props.scope === 'all'} /> All groups (and ungrouped devices)
        </label>
        <label class="check">
          <input type="radio" name="scope" value="groups" checked={props.scope !== 'all'} /> Only these groups and their subgroups:
        </label>
        {options.length === 0 ? (
          <p class="muted">No groups yet.</p>
        ) : (
          options.map((o) => (
            <label class="check">
              <input type="checkbox" name="groups" value={String(o.id)} checked={ticked.has(o.id)} /> {o.label}
            </label>
          ))
        )}
        <FieldError errors={props.errors} name="groups" />
      </fieldset>
    </>
  );
}

/** The scope a re-shown form had, so a refused submission keeps the ticks. */
async function scopeValues(c: WebContext, f?: Record<string, string>): Promise<'all' | number[] | undefined> {
  if (!f) return undefined;
  if (f.scope !== 'groups') return 'all';
  const raw = (await c.req.parseBody({ all: true })).groups;
  return (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map(Number).filter(Number.isSafeInteger);
}

async function createPage(c: WebContext, f?: Record<string, string>, errors?: Record<string, string> | null, status = 422) {
  const scope = (await scopeValues(c, f)) ?? 'all';
  return render(
    c,
    { title: 'Add user', active: '/users', status: errors ? status : 200 },
    <>
      <h1>Add user</h1>
      <section class="card">
        <form method="post" action="/users" class="grid-form" autocomplete="off">
          <Csrf token={c.get('session').csrfToken} />
          <FormError errors={errors} full />
          <label>
            Username <input name="username" required maxlength={64} value={f?.username ?? ''} />
            <FieldError errors={errors} name="username" />
          </label>
          <label>
            Initial password <input name="password" type="password" required minlength={10} autocomplete="new-password" />
            <span class="muted small">The user must change it at first login.</span>
            <FieldError errors={errors} name="password" />
          </label>
          <label>
            Time zone <input name="timezone" placeholder="appliance default" value={f?.timezone ?? ''} />
            <FieldError errors={errors} name="timezone" />
          </label>
          <RoleAndScope c={c} role={f?.role ?? ''} scope={scope} errors={errors} />
          <div class="full actions">
            <button type="submit" class="primary">
              Create user
            </button>
            <a href="/users">Cancel</a>
          </div>
        </form>
      </section>
    </>,
  );
}

async function editPage(c: WebContext, u: User, f?: Record<string, string>, errors?: Record<string, string> | null, status = 422) {
  const scope = (await scopeValues(c, f?.role !== undefined ? f : undefined)) ?? u.scope;
  const csrf = c.get('session').csrfToken;
  const base = `/users/${encodeURIComponent(u.username)}`;
  if (u.source !== 'local') return directoryUserPage(c, u, errors, status);
  return render(
    c,
    { title: `User ${u.username}`, active: '/users', status: errors ? status : 200 },
    <>
      <h1>User {u.username}</h1>
      <FormError errors={errors} />
      <section class="card">
        <h2>Role and scope</h2>
        <form method="post" action={`${base}/edit`} class="grid-form">
          <Csrf token={csrf} />
          <RoleAndScope c={c} role={f?.role ?? u.role} scope={scope} errors={errors} />
          <div class="full actions">
            <button type="submit" class="primary">
              Save
            </button>
            <a href="/users">Cancel</a>
          </div>
        </form>
      </section>
      <section class="card">
        <h2>Reset password</h2>
        <form method="post" action={`${base}/password`} class="grid-form" autocomplete="off">
          <Csrf token={csrf} />
          <label>
            New password <input name="password" type="password" required minlength={10} autocomplete="new-password" />
            <FieldError errors={errors} name="password" />
          </label>
          <label>
            Repeat <input name="confirm" type="password" required autocomplete="new-password" />
          </label>
          <div class="full actions">
            <button type="submit">Reset password</button>
            <span class="muted">The user's sessions end and they must choose a new password at the next login.</span>
          </div>
        </form>
      </section>
      <section class="card">
        <h2>Second factor</h2>
        {hasTotp(c.get('app').db, u.id) ? (
          <form method="post" action={`${base}/totp-reset`}>
            <Csrf token={csrf} />
            <p>{u.username} signs in with a code from an authenticator app. Reset it when they lost their phone.</p>
            <button type="submit">Reset second factor</button>
          </form>
        ) : (
          <p class="muted">{u.username} has no second factor.</p>
        )}
      </section>
    </>,
  );
}

/** A directory user: role and scope shown read-only (the [auth.ldap] mapping sets them at each sign-in and re-check). */
function directoryUserPage(c: WebContext, u: User, errors: Record<string, string> | null | undefined, status: number) {
  const paths = groupPaths(groupOptions(c.get('app').db, c.get('principal').scope));
  return render(
    c,
    { title: `User ${u.username}`, active: '/users', status: errors ? status : 200 },
    <>
      <h1>User {u.username}</h1>
      <FormError errors={errors} />
      <section class="card">
        <h2>Directory user</h2>
        <p>
          Role <strong>{u.role}</strong>, scope <strong>{scopeLabel(u, paths)}</strong>.
        </p>
        <p class="muted">
          {u.username} signs in through the {u.source === 'oidc' ? 'identity provider' : 'directory'}. Role and scope come from the [auth.{u.source}] mapping
          and are applied again at each sign-in and re-check; change the user's directory groups (or the mapping) instead. Disabling here still works.
        </p>
        <p>
          <a href="/users">Back to users</a>
        </p>
      </section>
    </>,
  );
}
