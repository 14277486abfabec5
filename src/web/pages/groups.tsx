// Groups as a tree: create, rename, move, set a schedule override, delete (only when empty), with the public API's validation.
import { GROUP_OPS } from '../../features/policy';
import type { Hono } from 'hono';
import { GroupCreateSchema } from '../../features/groups/groups.schemas';
import { createGroup, deleteGroup, getGroup, getGroupTree, listGroups, updateGroup, type GroupTreeNode } from '../../features/groups/groups.service';
import { zodFieldErrors } from '../../http/errors';
import { Csrf, FieldError, FormError } from '../components/layout';
import { redirectWith, render } from '../render';
import { actorOf } from '../../http/context';
import { can, fieldErrors, formFields, intParam, need, type WebContext, type WebEnv } from '../web-context';
import { groupOptions } from './groups-options';

function parseGroup(f: Record<string, string>) {
  const parent = (f.parent_id ?? '').trim();
  // An empty schedule field means "inherit" (the API's null); anything else goes through the API's cron check.
  const schedule = (f.schedule ?? '').trim();
  const r = GroupCreateSchema.safeParse({
    name: f.name ?? '',
    parent_id: parent === '' ? null : Number(parent),
    description: f.description ?? '',
    schedule: schedule === '' ? null : schedule,
  });
  if (r.success) return { ok: true as const, input: { ...r.data, schedule: r.data.schedule ?? null } };
  const errors: Record<string, string> = {};
  for (const e of zodFieldErrors(r.error, 'json')) errors[e.field] ??= e.message;
  return { ok: false as const, errors };
}

export function registerGroups(web: Hono<WebEnv>): void {
  web.get('/groups', need(GROUP_OPS.list), (c) => groupsPage(c));
  web.post('/groups', need(GROUP_OPS.create), async (c) => {
    const f = await formFields(c);
    const p = parseGroup(f);
    if (!p.ok) return groupsPage(c, { errors: p.errors, values: f });
    try {
      const g = createGroup(c.get('app').db, actorOf(c), p.input);
      return redirectWith(c, '/groups', `Group ${g.name} created.`);
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors) return groupsPage(c, { errors, values: f });
      throw err;
    }
  });
  web.post('/groups/:id/edit', need(GROUP_OPS.update), async (c) => {
    const id = intParam(c, 'id');
    const f = await formFields(c);
    const db = c.get('app').db;
    const p = parseGroup(f);
    if (!p.ok) return redirectWith(c, '/groups', Object.values(p.errors).join('; '), 'error');
    try {
      // A form without the field (an older page still open) leaves the description as it is.
      const description = f.description === undefined ? {} : { description: p.input.description };
      const g = updateGroup(db, actorOf(c), id, { name: p.input.name, parent_id: p.input.parent_id, schedule: p.input.schedule, ...description });
      return redirectWith(c, '/groups', `Group ${g.name} saved.`);
    } catch (err) {
      if (fieldErrors(err)) return redirectWith(c, '/groups', (err as Error).message, 'error');
      throw err;
    }
  });
  web.post('/groups/:id/delete', need(GROUP_OPS.delete), (c) => {
    const id = intParam(c, 'id');
    const db = c.get('app').db;
    const g = getGroup(db, c.get('principal').scope, id);
    try {
      deleteGroup(db, actorOf(c), id);
    } catch (err) {
      if (fieldErrors(err)) return redirectWith(c, '/groups', (err as Error).message, 'error');
      throw err;
    }
    return redirectWith(c, '/groups', `Group ${g.name} deleted.`);
  });
}

function groupsPage(c: WebContext, s: { errors?: Record<string, string> | null; values?: Record<string, string> } = {}) {
  const db = c.get('app').db;
  const scope = c.get('principal').scope;
  const tree = getGroupTree(db, scope);
  const options = groupOptions(db, scope);
  const schedules = new Map(listGroups(db, scope, {}, 1, Math.max(1, options.length)).items.map((g) => [g.id, g.schedule]));
  const csrf = c.get('session').csrfToken;
  const editable = can(c, GROUP_OPS.update) || can(c, GROUP_OPS.delete);
  // The group's line (name, description, link to its devices) sits outside the toggle: a link inside a <summary> is
  // interactive content inside interactive content, which screen readers and keyboards handle badly.
  const Node = ({ n }: { n: GroupTreeNode }) => (
    <li>
      <div class="group-line">
        <strong>{n.name}</strong>
        {n.description ? <span class="group-description">{n.description}</span> : null}
        <span class="muted">{n.device_count} device(s)</span>
        <a href={`/devices?group_id=${n.id}`} aria-label={`Devices in ${n.name}`}>
          devices
        </a>
      </div>
      {editable ? (
        <details>
          <summary>
            Edit <span class="visually-hidden">{n.name}</span>
          </summary>
          {can(c, GROUP_OPS.update) ? (
            <form method="post" action={`/groups/${n.id}/edit`} class="row">
              <Csrf token={csrf} />
              <label>
                Name <input name="name" value={n.name} required maxlength={128} />
              </label>
              <label>
                Parent
                <select name="parent_id">
                  <option value="">(top level)</option>
                  {options
                    .filter((o) => o.id !== n.id)
                    .map((o) => (
                      <option value={String(o.id)} selected={tree && parentOf(tree, n.id) === o.id}>
                        {o.label}
                      </option>
                    ))}
                </select>
              </label>
              <label class="grow">
                Description <input name="description" maxlength={2000} value={n.description} />
              </label>
              <label>
                Schedule <input name="schedule" class="mono" maxlength={128} placeholder="inherit" value={schedules.get(n.id) ?? ''} />
              </label>
              <button type="submit">Save</button>
            </form>
          ) : null}
          {can(c, GROUP_OPS.delete) ? (
            <form method="post" action={`/groups/${n.id}/delete`} class="inline" data-confirm={`Delete group ${n.name}?`}>
              <Csrf token={csrf} />
              <button type="submit" class="danger">
                Delete
              </button>
            </form>
          ) : null}
        </details>
      ) : null}
      {n.children.length ? (
        <ul class="tree">
          {n.children.map((ch) => (
            <Node n={ch} />
          ))}
        </ul>
      ) : null}
    </li>
  );
  return render(
    c,
    { title: 'Groups', active: '/groups', status: s.errors ? 422 : 200 },
    <>
      <h1>Device groups</h1>
      {tree.length === 0 ? (
        <p class="empty">No groups yet.</p>
      ) : (
        <ul class="tree" id="group-tree">
          {tree.map((n) => (
            <Node n={n} />
          ))}
        </ul>
      )}
      {can(c, GROUP_OPS.create) ? (
        <section class="card">
          <h2>New group</h2>
          <FormError errors={s.errors} />
          <form method="post" action="/groups" class="row">
            <Csrf token={csrf} />
            <label>
              Name
              <input name="name" required maxlength={128} value={s.values?.name ?? ''} />
              <FieldError errors={s.errors} name="name" />
            </label>
            <label>
              Parent
              <select name="parent_id">
                <option value="">(top level)</option>
                {options.map((o) => (
                  <option value={String(o.id)} selected={s.values?.parent_id === String(o.id)}>
                    {o.label}
                  </option>
                ))}
              </select>
              <FieldError errors={s.errors} name="parent_id" />
            </label>
            <label>
              Description
              <input name="description" maxlength={2000} value={s.values?.description ?? ''} />
            </label>
            <label>
              Schedule (cron)
              <input name="schedule" class="mono" maxlength={128} placeholder="inherit" value={s.values?.schedule ?? ''} />
              <FieldError errors={s.errors} name="schedule" />
            </label>
            <button type="submit" class="primary">
              Create group
            </button>
          </form>
        </section>
      ) : null}
    </>,
  );
}

function parentOf(nodes: GroupTreeNode[], id: number, parent: number | null = null): number | null | undefined {
  for (const n of nodes) {
    if (n.id === id) return parent;
    const r = parentOf(n.children, id, n.id);
    if (r !== undefined) return r;
  }
  return undefined;
}
