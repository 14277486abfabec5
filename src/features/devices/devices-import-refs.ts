// Groups, credentials and templates as inventory files name them: resolving a name (or path, or id) to an id, and back.
import type { DB } from '../../db/open';
import { nameKey } from '../../lib/names';
import { templateAliases } from '../templates/templates.service';
import { listCredentialRefs, listGroupRefs, listTemplateRefs, type GroupRefRow, type RefRow } from './devices-import.store';

export type Resolved = { id: number } | { error: string };

export interface InventoryRefs {
  group(value: string): Resolved;
  credential(value: string): Resolved;
  template(value: string): Resolved;
  /** How export writes a group: its name, or its path (`Parent/Child`) when the name is not unique. */
  groupLabel(id: number): string;
  credentialName(id: number): string;
  templateName(id: number): string;
  /** Oxidized models and RANCID types to template names, from the templates' aliases (read on first use). */
  modelAliases(): ReadonlyMap<string, string>;
}

/**
 * A name first (the names' uniqueness rule, case folded), then an all-digit value as an id: a record named
 * "42" is found by its name, as export writes it.
 */
function byName(kind: string, rows: readonly RefRow[]): (value: string) => Resolved {
  const byKey = new Map(rows.map((r) => [nameKey(r.name), r.id]));
  const ids = new Set(rows.map((r) => r.id));
  return (value) => {
    const id = byKey.get(nameKey(value.trim()));
    if (id !== undefined) return { id };
    if (/^\d+$/.test(value) && ids.has(Number(value))) return { id: Number(value) };
    return { error: `${kind} "${value}" does not exist` };
  };
}

function groupResolver(rows: readonly GroupRefRow[]) {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const path = (g: GroupRefRow): string => {
    const parts: string[] = [];
    for (let cur: GroupRefRow | undefined = g; cur && parts.length <= rows.length; cur = cur.parent_id === null ? undefined : byId.get(cur.parent_id)) {
      parts.unshift(cur.name);
    }
    return parts.join('/');
  };
  const byName = new Map<string, GroupRefRow[]>();
  for (const r of rows) byName.set(nameKey(r.name), [...(byName.get(nameKey(r.name)) ?? []), r]);
  const byPath = new Map(rows.map((r) => [path(r).split('/').map(nameKey).join('/'), r.id]));
  const resolve = (value: string): Resolved => {
    const v = value.trim();
    const named = byName.get(nameKey(v)) ?? [];
    if (named.length === 1) return { id: named[0].id };
    if (named.length > 1) {
      return { error: `${named.length} groups are named "${v}" (${named.map(path).join(', ')}): give the path or the id` };
    }
    const viaPath = byPath.get(
      v
        .split('/')
        .map((s) => nameKey(s.trim()))
        .join('/'),
    );
    if (viaPath !== undefined) return { id: viaPath };
    if (/^\d+$/.test(v) && byId.has(Number(v))) return { id: Number(v) };
    return { error: `group "${v}" does not exist (create it first)` };
  };
  const label = (id: number): string => {
    const g = byId.get(id);
    if (!g) return String(id);
    return (byName.get(nameKey(g.name)) ?? []).length > 1 ? path(g) : g.name;
  };
  return { resolve, label };
}

export function loadInventoryRefs(db: DB): InventoryRefs {
  const groups = groupResolver(listGroupRefs(db));
  const credentials = listCredentialRefs(db);
  const templates = listTemplateRefs(db);
  const credentialNames = new Map(credentials.map((r) => [r.id, r.name]));
  const templateNames = new Map(templates.map((r) => [r.id, r.name]));
  let aliases: ReadonlyMap<string, string> | undefined;
  return {
    group: groups.resolve,
    credential: byName('credential', credentials),
    template: byName('template', templates),
    groupLabel: groups.label,
    credentialName: (id) => credentialNames.get(id) ?? String(id),
    templateName: (id) => templateNames.get(id) ?? String(id),
    modelAliases: () => (aliases ??= templateAliases(db)),
  };
}
