// Inventory sources: list, read, add, change, remove (policy, destination check, token encrypted, audited); the sync is in inventory-sync.service.
import type { DB } from '../../db/open';
import { ApiError, isUniqueViolation, type FieldError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { authorize, requireScopeAll } from '../../identity/policy';
import type { SecretBox } from '../../identity/secrets';
import { DestinationRefused, type DestinationPolicy } from '../../lib/destinations';
import { recordAudit, type AuditChanges } from '../audit/audit.service';
import { INVENTORY_OPS } from './inventory.policy';
import { FiltersSchema, GROUP_PATH_FIELDS, MappingSchema, type Filters, type Mapping, type SourceInput, type SourcePatch } from './inventory.schemas';
import {
  credentialIdByName,
  credentialExistsById,
  deleteSourceRow,
  getSourceRow,
  getSourceRowByName,
  insertSourceRow,
  listSourceRows,
  templateIdsByName,
  updateSourceRow,
  type SourceRow,
  type SourceWrite,
} from './inventory.store';

/** A source as the doors show it: never its token. */
export interface SourceInfo extends Mapping {
  id: number;
  name: string;
  kind: SourceRow['kind'];
  url: string;
  has_token: boolean;
  credential_id: number | null;
  filters: Filters;
  interval_minutes: number | null;
  devices: number;
  last_sync_at: number | null;
  last_sync_error: string | null;
}

export function toSourceInfo(row: SourceRow): SourceInfo {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    url: row.url,
    has_token: row.token_enc !== null,
    credential_id: row.credential_id,
    filters: FiltersSchema.parse(JSON.parse(row.filters)),
    ...MappingSchema.parse(JSON.parse(row.mapping)),
    interval_minutes: row.interval_minutes,
    devices: row.devices,
    last_sync_at: row.last_sync_at,
    last_sync_error: row.last_sync_error,
  };
}

/** The id of the credential named `name` (the CLI names credentials), or a 404. */
export function credentialIdNamed(db: DB, name: string): number {
  const id = credentialIdByName(db, name);
  if (id === undefined) throw ApiError.notFound(`credential ${name}`);
  return id;
}

const MANAGE_SCOPE = 'Inventory sources create devices in any group with their credential: changing one needs device-group scope "all"';

export function listSources(db: DB, actor: Actor): SourceInfo[] {
  authorize(actor, INVENTORY_OPS.view);
  return listSourceRows(db).map(toSourceInfo);
}

export function findSourceRow(db: DB, idOrName: number | string): SourceRow {
  const row = typeof idOrName === 'number' ? getSourceRow(db, idOrName) : getSourceRowByName(db, idOrName);
  if (!row) throw ApiError.notFound(`inventory source ${idOrName}`);
  return row;
}

export function getSource(db: DB, actor: Actor, idOrName: number | string): SourceInfo {
  authorize(actor, INVENTORY_OPS.view);
  return toSourceInfo(findSourceRow(db, idOrName));
}

/** The references a source names must exist (credential, templates) and its group path use known placeholders: one 422. */
function checkSource(db: DB, s: { credential_id: number; kind: string; url: string } & Mapping): void {
  const errors: FieldError[] = [];
  if (!credentialExistsById(db, s.credential_id)) errors.push({ field: 'credential_id', message: `credential ${s.credential_id} does not exist` });
  const templates = templateIdsByName(db);
  for (const [platform, template] of Object.entries(s.platform_map))
    if (!templates.has(template.toLowerCase())) errors.push({ field: 'platform_map', message: `${platform}: template "${template}" does not exist` });
  if (s.default_template !== null && !templates.has(s.default_template.toLowerCase()))
    errors.push({ field: 'default_template', message: `template "${s.default_template}" does not exist` });
  for (const m of s.group_path.matchAll(/\{([^}]*)\}/g))
    if (!(GROUP_PATH_FIELDS as readonly string[]).includes(m[1])) errors.push({ field: 'group_path', message: `unknown placeholder {${m[1]}}` });
  if (s.fields && s.kind !== 'http') errors.push({ field: 'fields', message: 'fields apply to http sources only' });
  if (errors.length) throw ApiError.validation(errors, 'The source names records that do not exist or fields it cannot use');
}

/** The source's host must be inside `[notifications] allowed_destinations` (the appliance's one outbound policy). */
export async function checkSourceUrl(policy: DestinationPolicy, url: string): Promise<void> {
  const u = new URL(url);
  try {
    await policy.resolve(u.hostname.replace(/^\[|\]$/g, ''), Number(u.port || (u.protocol === 'https:' ? 443 : 80)));
  } catch (e) {
    if (e instanceof DestinationRefused)
      throw ApiError.validation(
        [{ field: 'url', message: `${e.message}; ask the administrator of the appliance to allow it` }],
        'The source is not an allowed destination',
      );
    // A name that does not resolve now is checked again at every sync.
  }
}

/** The row of a source as given (its token already sealed or kept). */
function toWrite(s: Omit<SourceInput, 'name' | 'token'>, tokenEnc: Buffer | null): SourceWrite {
  const mapping: Mapping = {
    platform_map: s.platform_map,
    default_template: s.default_template,
    group_path: s.group_path,
    hostname_from: s.hostname_from,
    fields: s.fields,
  };
  return {
    kind: s.kind,
    url: s.url,
    token_enc: tokenEnc,
    filters: JSON.stringify(s.filters),
    mapping: JSON.stringify(mapping),
    credential_id: s.credential_id,
    interval_minutes: s.interval_minutes,
  };
}

function auditedView(info: Omit<SourceInfo, 'id' | 'devices' | 'last_sync_at' | 'last_sync_error' | 'has_token'>) {
  const { name: _name, ...rest } = info;
  return rest;
}

function changesOf(before: object | null, after: object): AuditChanges {
  const out: AuditChanges = {};
  for (const [k, v] of Object.entries(after)) {
    const old = before ? (before as Record<string, unknown>)[k] : null;
    if (JSON.stringify(old ?? null) !== JSON.stringify(v ?? null)) out[k] = { before: old ?? null, after: v ?? null };
  }
  return out;
}

export async function createSource(db: DB, actor: Actor, secrets: SecretBox, policy: DestinationPolicy, input: SourceInput): Promise<SourceInfo> {
  authorize(actor, INVENTORY_OPS.create);
  requireScopeAll(actor, MANAGE_SCOPE);
  checkSource(db, input);
  await checkSourceUrl(policy, input.url);
  const write = toWrite(input, input.token ? secrets.encrypt(input.token) : null);
  return db
    .transaction(() => {
      let id: number;
      try {
        id = insertSourceRow(db, input.name, write);
      } catch (err) {
        if (isUniqueViolation(err)) throw new ApiError('CONFLICT', `An inventory source named "${input.name}" already exists`);
        throw err;
      }
      const created = toSourceInfo(findSourceRow(db, id));
      const changes = changesOf(null, auditedView(created));
      if (input.token) changes.token = 'changed';
      recordAudit(db, actor, { action: 'inventory_source.create', target: `inventory source ${id}`, changes, details: { name: input.name } });
      return created;
    })
    .immediate();
}

export async function updateSource(db: DB, actor: Actor, secrets: SecretBox, policy: DestinationPolicy, id: number, patch: SourcePatch): Promise<SourceInfo> {
  authorize(actor, INVENTORY_OPS.update);
  requireScopeAll(actor, MANAGE_SCOPE);
  const row = findSourceRow(db, id);
  const before = toSourceInfo(row);
  const { token, ...rest } = patch;
  const merged = { ...before, ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) } as SourceInfo & { credential_id: number };
  checkSource(db, merged);
  if (merged.url !== before.url) await checkSourceUrl(policy, merged.url);
  const write = toWrite(merged, token === undefined ? row.token_enc : token === null ? null : secrets.encrypt(token));
  return db
    .transaction(() => {
      findSourceRow(db, id);
      updateSourceRow(db, id, write);
      const after = toSourceInfo(findSourceRow(db, id));
      const changes = changesOf(auditedView(before), auditedView(after));
      if (token !== undefined) changes.token = 'changed';
      if (Object.keys(changes).length)
        recordAudit(db, actor, { action: 'inventory_source.update', target: `inventory source ${id}`, changes, details: { name: after.name } });
      return after;
    })
    .immediate();
}

/** Removes the source; its devices stay (in service or retired), managed by hand from then on. */
export function deleteSource(db: DB, actor: Actor, id: number): void {
  authorize(actor, INVENTORY_OPS.delete);
  requireScopeAll(actor, MANAGE_SCOPE);
  db.transaction(() => {
    const row = findSourceRow(db, id);
    deleteSourceRow(db, id);
    recordAudit(db, actor, { action: 'inventory_source.delete', target: `inventory source ${id}`, details: { name: row.name, devices: row.devices } });
  }).immediate();
}
