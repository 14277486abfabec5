// Device groups: list, tree, create, update (rename, move with cycle check), delete (only when empty), kept inside the actor's scope and audited.
import type { DB } from '../../db/open';
import { ApiError, isUniqueViolation } from '../../errors';
import type { Principal, Scope } from '../../identity/principal';
import type { Actor } from '../../identity/actor';
import { authorize, requireGroupInScope, requireScopeAll } from '../../identity/policy';
import { GROUP_OPS } from './groups.policy';
import { changesBetween, recordAudit } from '../audit/audit.service';
import { changeZone } from '../collectors/collectors.service';
import {
  countGroups,
  deleteGroupRow,
  directDeviceCounts,
  getGroupRow,
  getGroupViewRow,
  groupExists,
  hasChildGroups,
  hasDirectDevices,
  insertGroup,
  isSelfOrAncestor,
  listGroupTreeRows,
  listGroupViewRows,
  toGroup,
  updateGroupFields,
  type Group,
  type GroupFilter,
  type GroupPatch,
  type GroupRow,
} from './groups.store';

export type { Group, GroupFilter };

export interface GroupTreeNode {
  id: number;
  name: string;
  description: string;
  /** Devices in this group and all its subgroups (within the caller's scope). */
  device_count: number;
  children: GroupTreeNode[];
}

export interface GroupInput {
  name: string;
  parent_id: number | null;
  description: string;
  schedule: string | null;
  /** Omitted or null: inherit the parent's zone (or the central); a zone needs collectors.zone (collectors.service). */
  zone?: string | null;
}

/**
 * Groups are never filtered by the caller's device-group scope (spec 4.6 rule 4); `scope` only limits which
 * devices their device_count includes, so a count never reveals devices the caller cannot list.
 */
export function listGroups(db: DB, scope: Scope, filter: GroupFilter, page: number, limit: number): { items: Group[]; total: number } {
  // One read transaction, so the page and its total agree with each other.
  return db.transaction(() => {
    const total = countGroups(db, filter);
    const offset = (page - 1) * limit;
    // Past the end there is nothing to read; skipping the query also keeps absurd page numbers cheap.
    const items = offset < total ? listGroupViewRows(db, scope, filter, offset, limit).map(toGroup) : [];
    return { items, total };
  })();
}

export function getGroup(db: DB, scope: Scope, id: number): Group {
  const row = getGroupViewRow(db, scope, id);
  if (!row) throw ApiError.notFound(`group ${id}`);
  return toGroup(row);
}

/** The whole hierarchy, siblings ordered by name; each node counts the devices (in `scope`) of its whole subtree (0 without `withCounts`). */
export function getGroupTree(db: DB, scope: Scope, withCounts = true): GroupTreeNode[] {
  // Counting reads an index entry per device (100,000 at scale): skipped where only names and paths are shown.
  const { rows, direct } = db.transaction(() => ({
    rows: listGroupTreeRows(db),
    direct: withCounts ? directDeviceCounts(db, scope) : new Map<number, number>(),
  }))();
  const nodes = new Map<number, GroupTreeNode>();
  for (const r of rows) nodes.set(r.id, { id: r.id, name: r.name, description: r.description, device_count: direct.get(r.id) ?? 0, children: [] });
  const roots: GroupTreeNode[] = [];
  for (const r of rows) {
    const parent = r.parent_id === null ? undefined : nodes.get(r.parent_id);
    (parent ? parent.children : roots).push(nodes.get(r.id)!);
  }
  const rollUp = (n: GroupTreeNode): number => {
    for (const c of n.children) n.device_count += rollUp(c);
    return n.device_count;
  };
  roots.forEach(rollUp);
  return roots;
}

function requireParent(db: DB, parentId: number | null): void {
  if (parentId !== null && !groupExists(db, parentId)) {
    throw ApiError.validation([{ field: 'parent_id', message: `group ${parentId} does not exist` }], `parent group ${parentId} does not exist`);
  }
}

function nameExists(name: string): ApiError {
  return new ApiError('GROUP_NAME_EXISTS', `a group named "${name}" already exists under the same parent`);
}

/**
 * A scoped user's group changes stay inside the scope: otherwise moving an outside group under one's own would
 * widen the scope to its devices. A top-level parent (null) is outside every limited scope.
 */
function requireParentInScope(actor: Actor, parentId: number | null): void {
  if (parentId === null) requireScopeAll(actor, 'Only a user whose device-group scope is all can place a group at the top level');
  else requireGroupInScope(actor, parentId, `The parent group ${parentId}`);
}

const AUDITED: readonly (keyof GroupRow)[] = ['name', 'parent_id', 'description', 'schedule'];

export function createGroup(db: DB, actor: Actor, input: GroupInput): Group {
  authorize(actor, GROUP_OPS.create);
  const id = db
    .transaction(() => {
      requireParent(db, input.parent_id);
      requireParentInScope(actor, input.parent_id);
      let newId: number;
      try {
        newId = insertGroup(db, { name: input.name, parent_id: input.parent_id, description: input.description, schedule: input.schedule });
      } catch (err) {
        if (isUniqueViolation(err)) throw nameExists(input.name);
        throw err;
      }
      recordAudit(db, actor, {
        action: 'group.create',
        target: `group ${newId}`,
        changes: changesBetween(null, { name: input.name, parent_id: input.parent_id, description: input.description, schedule: input.schedule }),
        details: { name: input.name },
      });
      if (input.zone) changeZone(db, actor, { group: newId }, input.zone);
      return newId;
    })
    .immediate();
  return getGroup(db, actor.principal.scope, id);
}

/** Partial update: only the given fields change. Moving under itself or a descendant is refused. */
export function updateGroup(db: DB, actor: Actor, id: number, { zone, ...patch }: GroupPatch & { zone?: string | null }): Group {
  authorize(actor, GROUP_OPS.update);
  db.transaction(() => {
    const row = getGroupRow(db, id);
    if (!row) throw ApiError.notFound(`group ${id}`);
    requireGroupInScope(actor, id, `Group ${id}`);
    if (patch.parent_id !== undefined && patch.parent_id !== row.parent_id) {
      if (patch.parent_id !== null) {
        requireParent(db, patch.parent_id);
        if (isSelfOrAncestor(db, id, patch.parent_id)) {
          throw new ApiError('GROUP_PARENT_INVALID', 'a group cannot be moved under itself or one of its descendants', { parent_id: patch.parent_id });
        }
      }
      requireParentInScope(actor, patch.parent_id);
    }
    try {
      updateGroupFields(db, id, patch);
    } catch (err) {
      if (isUniqueViolation(err)) throw nameExists(patch.name ?? row.name);
      throw err;
    }
    // Audited on its own row (group.zone), as every door writes it.
    if (zone !== undefined) changeZone(db, actor, { group: id }, zone);
    const changes = changesBetween(row, patch);
    if (Object.keys(changes).length > 0) {
      recordAudit(db, actor, { action: 'group.update', target: `group ${id}`, changes, details: { name: patch.name ?? row.name } });
    }
  }).immediate();
  return getGroup(db, actor.principal.scope, id);
}

/** Only an empty group can go: subgroups and devices are never deleted or re-parented implicitly. */
export function deleteGroup(db: DB, actor: Actor, id: number): void {
  authorize(actor, GROUP_OPS.delete);
  db.transaction(() => {
    const row = getGroupRow(db, id);
    if (!row) throw ApiError.notFound(`group ${id}`);
    requireGroupInScope(actor, id, `Group ${id}`);
    if (hasChildGroups(db, id)) throw new ApiError('GROUP_HAS_CHILDREN', 'the group has subgroups; move or delete them first');
    if (hasDirectDevices(db, id)) throw new ApiError('GROUP_HAS_DEVICES', 'the group holds devices; move or delete them first');
    deleteGroupRow(db, id);
    recordAudit(db, actor, {
      action: 'group.delete',
      target: `group ${id}`,
      changes: Object.fromEntries(AUDITED.map((k) => [k, { before: row[k], after: null }])),
      details: { name: row.name },
    });
  }).immediate();
}

/** The group reads a door offers: the reader's own groups.view (GROUP_OPS), then its scope (device counts). */
export function listGroupsFor(db: DB, reader: Principal, filter: GroupFilter, page: number, limit: number): { items: Group[]; total: number } {
  authorize(reader, GROUP_OPS.list);
  return listGroups(db, reader.scope, filter, page, limit);
}

export function getGroupFor(db: DB, reader: Principal, id: number): Group {
  authorize(reader, GROUP_OPS.get);
  return getGroup(db, reader.scope, id);
}

export function getGroupTreeFor(db: DB, reader: Principal): GroupTreeNode[] {
  authorize(reader, GROUP_OPS.tree);
  return getGroupTree(db, reader.scope);
}
