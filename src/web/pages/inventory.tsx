// Inventory sources page: the sources, a dry-run preview of a sync (creates, updates, retirements) and the button that applies it.
import type { Hono } from 'hono';
import { syncSource } from '../../features/inventory/inventory-sync.service';
import type { Plan } from '../../features/inventory/inventory.schemas';
import { findSourceRow, listSources, type SourceInfo } from '../../features/inventory/inventory.service';
import { destinationPolicy } from '../../features/notifications/notifications.service';
import { INVENTORY_OPS } from '../../features/policy';
import { ApiError } from '../../errors';
import { actorOf } from '../../http/context';
import { Csrf } from '../components/layout';
import { redirectWith, render } from '../render';
import { can, formatTime, need, type WebContext, type WebEnv } from '../web-context';

const BASE = '/inventory';

/** The source of `:id`, or the 404 page. */
function sourceOf(c: WebContext): { id: number; name: string } {
  const id = Number(c.req.param('id'));
  if (!Number.isSafeInteger(id) || id < 1) throw ApiError.notFound(`inventory source ${c.req.param('id')}`);
  return findSourceRow(c.get('app').db, id);
}

export function registerInventory(web: Hono<WebEnv>): void {
  web.get(BASE, need(INVENTORY_OPS.view), (c) => inventoryPage(c, null));

  web.post(`${BASE}/:id/preview`, need(INVENTORY_OPS.sync), async (c) => {
    const app = c.get('app');
    const source = sourceOf(c);
    try {
      return inventoryPage(c, await syncSource(app.db, actorOf(c), app.secrets, destinationPolicy(app.config), source.id, true));
    } catch (err) {
      if (err instanceof ApiError && err.code === 'CONFLICT') return redirectWith(c, BASE, err.message, 'error');
      throw err;
    }
  });

  web.post(`${BASE}/:id/sync`, need(INVENTORY_OPS.sync), async (c) => {
    const app = c.get('app');
    const source = sourceOf(c);
    try {
      const p = await syncSource(app.db, actorOf(c), app.secrets, destinationPolicy(app.config), source.id, false);
      const text = `${p.source} synced: ${p.creates.length} created, ${p.updates.length} updated, ${p.reactivations.length} reactivated, ${p.retirements.length} retired, ${p.skipped.length} skipped.`;
      return redirectWith(c, BASE, text);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'CONFLICT') return redirectWith(c, BASE, err.message, 'error');
      throw err;
    }
  });
}

function inventoryPage(c: WebContext, preview: Plan | null) {
  const sources = listSources(c.get('app').db, actorOf(c));
  return render(
    c,
    { title: 'Inventory sources', active: BASE },
    <>
      <h1>Inventory sources</h1>
      <p>
        Devices follow NetBox, Nautobot or an HTTP JSON list (Oxidized's layout). A sync creates and updates devices, and retires (never deletes) those that
        vanished from the source; the fields a source owns (name, hostname, template, group) change only there. Sources are added with{' '}
        <code>confvault inventory add</code> or the API (docs/inventory.md).
      </p>
      <SourcesTable c={c} sources={sources} />
      {preview ? <Preview c={c} plan={preview} sourceId={sources.find((s) => s.name === preview.source)?.id ?? 0} /> : null}
    </>,
  );
}

function ButtonForm({ csrf, action, label }: { csrf: string; action: string; label: string }) {
  return (
    <form method="post" action={action} class="inline">
      <Csrf token={csrf} />
      <button type="submit">{label}</button>
    </form>
  );
}

function SourcesTable({ c, sources }: { c: WebContext; sources: SourceInfo[] }) {
  const tz = c.get('timezone');
  const csrf = c.get('session').csrfToken;
  const sync = can(c, INVENTORY_OPS.sync);
  if (sources.length === 0) return <p>No inventory sources yet.</p>;
  return (
    <div class="table-wrap">
      <table class="list" id="sources">
        <thead>
          <tr>
            <th>Name</th>
            <th>Kind</th>
            <th>URL</th>
            <th>Devices</th>
            <th>Schedule</th>
            <th>Last sync</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
          {sources.map((s) => (
            <tr data-source={s.name}>
              <td>{s.name}</td>
              <td>{s.kind}</td>
              <td class="mono">{s.url}</td>
              <td>{s.devices}</td>
              <td>{s.interval_minutes ? `every ${s.interval_minutes} min` : 'on demand'}</td>
              <td>
                {s.last_sync_at ? formatTime(s.last_sync_at, tz) : 'never'}
                {s.last_sync_error ? <div class="error">{s.last_sync_error}</div> : null}
              </td>
              <td>{sync ? <ButtonForm csrf={csrf} action={`${BASE}/${s.id}/preview`} label="Preview sync" /> : null}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Preview({ c, plan, sourceId }: { c: WebContext; plan: Plan; sourceId: number }) {
  const rows: { change: string; name: string; what: string }[] = [
    ...plan.creates.map((x) => ({ change: 'create', name: x.name, what: `${x.hostname}, ${x.template}, ${x.group_path || 'ungrouped'}` })),
    ...plan.updates.map((x) => ({
      change: 'update',
      name: x.name,
      what: Object.entries(x.changes)
        .map(([k, v]) => `${k}: ${String(v.before)} → ${String(v.after)}`)
        .join('; '),
    })),
    ...plan.reactivations.map((x) => ({ change: 'reactivate', name: x.name, what: 'back in the source' })),
    ...plan.retirements.map((x) => ({ change: 'retire', name: x.name, what: 'gone from the source: retired, history kept' })),
    ...plan.skipped.map((x) => ({ change: 'skip', name: x.name || x.external_id, what: x.reason })),
  ];
  return (
    <section id="preview">
      <h2>Preview of {plan.source}</h2>
      <p>
        {plan.fetched} listed by the source: {plan.creates.length} to create, {plan.updates.length} to update, {plan.reactivations.length} to reactivate,{' '}
        {plan.retirements.length} to retire, {plan.skipped.length} skipped, {plan.unchanged} unchanged. Nothing has been written yet.
      </p>
      {rows.length ? (
        <div class="table-wrap">
          <table class="list" id="plan">
            <thead>
              <tr>
                <th>Change</th>
                <th>Device</th>
                <th>Details</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr data-change={r.change}>
                  <td>{r.change}</td>
                  <td>{r.name}</td>
                  <td>{r.what}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <ButtonForm csrf={c.get('session').csrfToken} action={`${BASE}/${sourceId}/sync`} label="Apply sync" />
    </section>
  );
}
