// Roles: list with their permissions, create one from the permission catalogue, edit a custom role (administrator is read-only).
import { ROLE_OPS } from '../../features/policy';
import type { Hono } from 'hono';
import { ApiError } from '../../errors';
import { createRole, getRole, listRoles, setRolePermissions, type Role } from '../../features/roles/roles.service';
import { actorOf } from '../../http/context';
import { ADMINISTRATOR_ROLE, PERMISSIONS } from '../../identity/permissions';
import { Csrf, FieldError, FormError } from '../components/layout';
import { redirectWith, render } from '../render';
import { can, fieldErrors, formFields, need, type WebContext, type WebEnv } from '../web-context';

/** A refused change keeps its form on screen: 403 for a policy refusal, 422 for bad input. */
function statusOf(err: unknown): number {
  return err instanceof ApiError && err.code === 'PERMISSION_DENIED' ? 403 : 422;
}

/** The ticked permission checkboxes (all named `permissions`). */
async function tickedPermissions(c: WebContext): Promise<string[]> {
  const raw = (await c.req.parseBody({ all: true })).permissions;
  return (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter((v): v is string => typeof v === 'string');
}

function roleOr404(c: WebContext): Role {
  const name = c.req.param('name') ?? '';
  const r = getRole(c.get('app').db, name);
  if (!r) throw ApiError.notFound(`role "${name}"`);
  return r;
}

export function registerRoles(web: Hono<WebEnv>): void {
  web.get('/roles', need(ROLE_OPS.list), (c) => listPage(c));
  web.get('/roles/new', need(ROLE_OPS.create), (c) => formPage(c, null));
  web.post('/roles', need(ROLE_OPS.create), async (c) => {
    const f = await formFields(c);
    const permissions = await tickedPermissions(c);
    try {
      const r = createRole(c.get('app').db, actorOf(c), { name: f.name ?? '', description: f.description ?? '', permissions });
      return redirectWith(c, '/roles', `Role ${r.name} created.`);
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors) return formPage(c, null, { name: f.name ?? '', description: f.description ?? '', permissions }, errors, statusOf(err));
      throw err;
    }
  });
  web.get('/roles/:name/edit', need(ROLE_OPS.update), (c) => formPage(c, roleOr404(c)));
  web.post('/roles/:name/edit', need(ROLE_OPS.update), async (c) => {
    const before = roleOr404(c);
    const permissions = await tickedPermissions(c);
    try {
      const r = setRolePermissions(c.get('app').db, actorOf(c), before.name, permissions);
      return redirectWith(c, '/roles', `Role ${r.name} saved.`);
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors) return formPage(c, before, { name: before.name, description: before.description, permissions }, errors, statusOf(err));
      throw err;
    }
  });
}

function listPage(c: WebContext) {
  const roles = listRoles(c.get('app').db);
  return render(
    c,
    { title: 'Roles', active: '/roles' },
    <>
      <div class="title-row">
        <h1>Roles</h1>
        {can(c, ROLE_OPS.create) ? (
          <a class="button primary" href="/roles/new">
            Add role
          </a>
        ) : null}
      </div>
      <div class="table-wrap">
        <table class="list" id="roles">
          <thead>
            <tr>
              <th>Name</th>
              <th>Description</th>
              <th>Permissions</th>
            </tr>
          </thead>
          <tbody>
            {roles.map((r) => (
              <tr data-role={r.name}>
                <td>
                  {can(c, ROLE_OPS.update) && !r.builtin ? <a href={`/roles/${encodeURIComponent(r.name)}/edit`}>{r.name}</a> : r.name}{' '}
                  {r.builtin ? <span class="badge muted">built-in</span> : null}
                </td>
                <td>{r.description || '—'}</td>
                <td class="mono">{r.builtin ? 'every permission' : r.permissions.join(', ') || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>,
  );
}

function formPage(
  c: WebContext,
  role: Role | null,
  values?: { name: string; description: string; permissions: string[] },
  errors?: Record<string, string> | null,
  status = 422,
) {
  const readOnly = role?.builtin === true;
  const ticked = new Set<string>(values?.permissions ?? role?.permissions ?? []);
  // Grouped by the noun before the dot, so the checkboxes read as a table of areas.
  const areas = new Map<string, string[]>();
  for (const p of PERMISSIONS) {
    const area = p.split('.')[0];
    areas.set(area, [...(areas.get(area) ?? []), p]);
  }
  const title = role ? `Role ${role.name}` : 'Add role';
  return render(
    c,
    { title, active: '/roles', status: errors ? status : 200 },
    <>
      <h1>{title}</h1>
      {readOnly ? (
        <p class="advice">
          {role?.name === ADMINISTRATOR_ROLE
            ? 'The built-in administrator role always holds every permission and cannot be changed.'
            : `The built-in role ${role?.name ?? ''} is defined by the appliance and cannot be changed.`}
        </p>
      ) : null}
      <section class="card">
        <form method="post" action={role ? `/roles/${encodeURIComponent(role.name)}/edit` : '/roles'} class="grid-form">
          <Csrf token={c.get('session').csrfToken} />
          <FormError errors={errors} full />
          {role ? null : (
            <>
              <label>
                Name <input name="name" required maxlength={64} value={values?.name ?? ''} />
                <FieldError errors={errors} name="name" />
              </label>
              <label>
                Description <input name="description" value={values?.description ?? ''} />
              </label>
            </>
          )}
          <fieldset class="full" disabled={readOnly}>
            <legend>Permissions</legend>
            {[...areas].map(([area, perms]) => (
              <div class="row">
                <strong>{area}</strong>
                {perms.map((p) => (
                  <label class="check">
                    <input type="checkbox" name="permissions" value={p} checked={readOnly || ticked.has(p)} /> {p.split('.')[1]}
                  </label>
                ))}
              </div>
            ))}
            <FieldError errors={errors} name="permissions" />
          </fieldset>
          {readOnly ? null : (
            <div class="full actions">
              <button type="submit" class="primary">
                {role ? 'Save role' : 'Create role'}
              </button>
              <a href="/roles">Cancel</a>
            </div>
          )}
        </form>
      </section>
    </>,
  );
}
