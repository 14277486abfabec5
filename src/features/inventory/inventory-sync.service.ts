// The sync of an inventory source: read it whole, plan creates, updates (renames by the source's id), retirements and reactivations, and apply them in one transaction as the source.
import type { DB } from '../../db/open';
import { ApiError } from '../../errors';
import { inventoryActor, type Actor } from '../../identity/actor';
import { authorize, requireScopeAll } from '../../identity/policy';
import type { SecretBox } from '../../identity/secrets';
import { DestinationRefused, type DestinationPolicy } from '../../lib/destinations';
import { recordAudit } from '../audit/audit.service';
import { createDevice, updateDevice, type DevicePatch } from '../devices/devices.service';
import { reactivateDevice, retireDevice } from '../devices/devices-retire.service';
import { createGroup } from '../groups/groups.service';
import { fetchSourceDevices, SourceFetchError, type SourceDevice } from './inventory.fetch';
import { INVENTORY_OPS } from './inventory.policy';
import { FiltersSchema, MappingSchema, type Mapping, type Plan } from './inventory.schemas';
import { findSourceRow } from './inventory.service';
import { deviceIdByName, insertLink, listGroupNodes, listLinkedDeviceRows, recordSyncOutcome, templateIdsByName, type SourceRow } from './inventory.store';

type Templates = Map<string, { id: number; name: string }>;

/** What the source wants of one device. */
interface Wanted {
  external_id: string;
  name: string;
  hostname: string;
  template: { id: number; name: string };
  path: string[];
}

/** The group path of a device: the placeholders filled in, empty segments left out. */
function groupPath(template: string, d: SourceDevice): string[] {
  const filled = template.replace(/\{(\w+)\}/g, (_, k: string) => (d.place[k as keyof SourceDevice['place']] ?? '').replaceAll('/', '-'));
  return filled
    .split('/')
    .map((s) => s.trim().slice(0, 128))
    .filter((s) => s !== '');
}

/** The template of a device: its platform mapped, else the default, else none (why). */
function templateOf(m: Mapping, d: SourceDevice, templates: Templates): { id: number; name: string } | string {
  const mapped = d.platform.map((p) => m.platform_map[p]).find((t) => t !== undefined);
  const name = mapped ?? m.default_template;
  if (name === null)
    return d.platform.length ? `platform "${d.platform[0]}" is not in platform_map and there is no default_template` : 'no platform and no default_template';
  return templates.get(name.toLowerCase()) ?? `template "${name}" does not exist`;
}

/** Full path of every group, lower-cased ("site-a/rack-1"), by id. */
function groupPaths(db: DB): Map<number, string> {
  const nodes = new Map(listGroupNodes(db).map((n) => [n.id, n]));
  const out = new Map<number, string>();
  for (const n of nodes.values()) {
    const parts: string[] = [];
    for (let cur: typeof n | undefined = n, depth = 0; cur && depth < 1000; cur = cur.parent_id === null ? undefined : nodes.get(cur.parent_id), depth++)
      parts.unshift(cur.name.toLowerCase());
    out.set(n.id, parts.join('/'));
  }
  return out;
}

interface Planned {
  plan: Plan;
  wanted: Map<string, Wanted>;
}

/** Compare the source's devices with the devices linked to it. Reads only. */
function planSync(db: DB, row: SourceRow, devices: SourceDevice[], dryRun: boolean): Planned {
  const mapping = MappingSchema.parse(JSON.parse(row.mapping));
  const templates = templateIdsByName(db);
  const plan: Plan = {
    source: row.name,
    dry_run: dryRun,
    fetched: devices.length,
    creates: [],
    updates: [],
    retirements: [],
    reactivations: [],
    skipped: [],
    unchanged: 0,
  };
  const wanted = new Map<string, Wanted>();
  const names = new Set<string>();
  for (const d of devices) {
    const label = d.name ?? '';
    const skip = (reason: string) => plan.skipped.push({ external_id: d.external_id, name: label, reason });
    if (!d.name || !d.external_id) skip('no name in the source');
    else if (d.name.length > 128) skip('the name is longer than 128 characters');
    else if (wanted.has(d.external_id) || names.has(d.name.toLowerCase())) skip('listed twice by the source');
    else {
      const template = templateOf(mapping, d, templates);
      if (typeof template === 'string') skip(template);
      else {
        const hostname = mapping.hostname_from === 'primary_ip' ? (d.ip ?? d.name) : d.name;
        wanted.set(d.external_id, { external_id: d.external_id, name: d.name, hostname, template, path: groupPath(mapping.group_path, d) });
        names.add(d.name.toLowerCase());
      }
    }
  }
  const paths = groupPaths(db);
  const linked = new Map(listLinkedDeviceRows(db, row.id).map((l) => [l.external_id, l]));
  for (const l of linked.values()) {
    const w = wanted.get(l.external_id);
    if (!w) {
      if (l.retired_at === null) plan.retirements.push({ device_id: l.device_id, name: l.name });
      continue;
    }
    const changes: Plan['updates'][number]['changes'] = {};
    if (w.name !== l.name) changes.name = { before: l.name, after: w.name };
    if (w.hostname !== l.hostname) changes.hostname = { before: l.hostname, after: w.hostname };
    if (w.template.id !== l.template_id) changes.template = { before: l.template, after: w.template.name };
    const path = l.group_id === null ? '' : (paths.get(l.group_id) ?? '');
    if (w.path.join('/').toLowerCase() !== path) changes.group_path = { before: path, after: w.path.join('/') };
    if (l.retired_at !== null) plan.reactivations.push({ device_id: l.device_id, name: w.name });
    if (Object.keys(changes).length) plan.updates.push({ device_id: l.device_id, external_id: l.external_id, name: w.name, changes });
    else if (l.retired_at === null) plan.unchanged++;
  }
  for (const w of wanted.values()) {
    if (linked.has(w.external_id)) continue;
    const taken = deviceIdByName(db, w.name);
    if (taken !== undefined && !plan.updates.some((u) => u.device_id === taken)) {
      plan.skipped.push({ external_id: w.external_id, name: w.name, reason: `device ${taken} has this name and is not from this source` });
      wanted.delete(w.external_id);
      continue;
    }
    plan.creates.push({ external_id: w.external_id, name: w.name, hostname: w.hostname, template: w.template.name, group_path: w.path.join('/') });
  }
  return { plan, wanted };
}

/** The id of the group at `path`, creating the missing groups (as the source, audited); null for an empty path. */
function ensureGroupPath(db: DB, actor: Actor, source: string, path: string[], known: Map<string, number>): number | null {
  let parent: number | null = null;
  for (let i = 0; i < path.length; i++) {
    const key = path
      .slice(0, i + 1)
      .join('/')
      .toLowerCase();
    let id = known.get(key);
    if (id === undefined) {
      id = createGroup(db, actor, { name: path[i], parent_id: parent, description: `Created by inventory source ${source}`, schedule: null }).id;
      known.set(key, id);
    }
    parent = id;
  }
  return parent;
}

/** Write the plan as the source: one transaction, every change through the devices and groups services (and their audit). */
function applyPlan(db: DB, row: SourceRow, planned: Planned, startedBy: string): void {
  if (row.credential_id === null) throw new ApiError('CONFLICT', `inventory source ${row.name} has no credential (it was deleted); set one first`);
  const actor = inventoryActor(row.name, startedBy);
  const known = new Map([...groupPaths(db)].map(([id, p]) => [p, id]));
  for (const r of planned.plan.retirements) retireDevice(db, actor, r.device_id);
  for (const r of planned.plan.reactivations) reactivateDevice(db, actor, r.device_id);
  for (const u of planned.plan.updates) {
    const w = planned.wanted.get(u.external_id)!;
    const patch: DevicePatch = {};
    if (u.changes.name) patch.name = w.name;
    if (u.changes.hostname) patch.hostname = w.hostname;
    if (u.changes.template) patch.template_id = w.template.id;
    if (u.changes.group_path) patch.group_id = ensureGroupPath(db, actor, row.name, w.path, known);
    updateDevice(db, actor, u.device_id, patch);
  }
  for (const c of planned.plan.creates) {
    const w = planned.wanted.get(c.external_id)!;
    const device = createDevice(db, actor, {
      name: w.name,
      hostname: w.hostname,
      protocol: 'ssh',
      group_id: ensureGroupPath(db, actor, row.name, w.path, known),
      credential_id: row.credential_id,
      template_id: w.template.id,
      enabled: true,
      description: '',
      schedule: null,
      accept_host_key_change: false,
    });
    insertLink(db, row.id, c.external_id, device.id);
  }
}

function counts(plan: Plan) {
  return {
    fetched: plan.fetched,
    created: plan.creates.length,
    updated: plan.updates.length,
    retired: plan.retirements.length,
    reactivated: plan.reactivations.length,
    skipped: plan.skipped.length,
    unchanged: plan.unchanged,
  };
}

function describeNetworkError(e: unknown): string {
  const err = e as { code?: string; message?: string };
  return err.code ? `${err.code} ${err.message ?? ''}`.trim() : (err.message ?? String(e));
}

/**
 * Read the source and plan; unless `dryRun`, apply the plan in one transaction (planned again inside it, so it
 * matches the database it writes) and record the outcome. A source that cannot be read whole changes nothing: 409.
 */
export async function runSync(db: DB, secrets: SecretBox, policy: DestinationPolicy, row: SourceRow, startedBy: string, dryRun: boolean): Promise<Plan> {
  let devices: SourceDevice[];
  try {
    devices = await fetchSourceDevices(policy, {
      kind: row.kind,
      url: row.url,
      token: row.token_enc ? secrets.decrypt(row.token_enc) : null,
      filters: FiltersSchema.parse(JSON.parse(row.filters)),
      mapping: MappingSchema.parse(JSON.parse(row.mapping)),
    });
  } catch (e) {
    // Unreadable whole (refused destination, network, HTTP status, bounds, shape): the sync changes nothing.
    const why = e instanceof SourceFetchError || e instanceof DestinationRefused ? e.message : describeNetworkError(e);
    const message = `inventory source ${row.name} could not be read: ${why}`;
    if (!dryRun) recordSyncOutcome(db, row.id, Date.now(), message);
    throw new ApiError('CONFLICT', message, { source: row.name });
  }
  if (dryRun) return planSync(db, row, devices, true).plan;
  return db
    .transaction(() => {
      const planned = planSync(db, row, devices, false);
      applyPlan(db, row, planned, startedBy);
      recordSyncOutcome(db, row.id, Date.now(), null);
      recordAudit(db, inventoryActor(row.name, startedBy), { action: 'inventory.sync', target: `inventory source ${row.id}`, details: counts(planned.plan) });
      return planned.plan;
    })
    .immediate();
}

/** A sync (or its dry run) started by a user or the CLI: inventory.sync and scope "all" (the source reaches every group). */
export async function syncSource(
  db: DB,
  actor: Actor,
  secrets: SecretBox,
  policy: DestinationPolicy,
  idOrName: number | string,
  dryRun: boolean,
): Promise<Plan> {
  authorize(actor, INVENTORY_OPS.sync);
  requireScopeAll(actor, 'A sync creates and retires devices in any group: it needs device-group scope "all"');
  return runSync(db, secrets, policy, findSourceRow(db, idOrName), actor.principal.username, dryRun);
}
