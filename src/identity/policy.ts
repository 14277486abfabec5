// Authorization rules shared by every service: permissions held, scope containment, "grant only what you hold".
import { ApiError } from '../errors';
import type { Actor } from './actor';
import type { Permission } from './permissions';
import { inScope, type Scope } from './principal';

/** 403 PERMISSION_DENIED with a message naming the reason. */
export function denied(reason: string, details: Record<string, unknown> = {}): ApiError {
  return new ApiError('PERMISSION_DENIED', reason, details);
}

/** The actor must hold the permission (the same 403 the route guards give). */
export function authorize(actor: Actor, permission: Permission): void {
  if (!actor.principal.permissions.has(permission)) {
    throw denied(`This operation needs the permission ${permission}`, { permission });
  }
}

/** Whether every group of `inner` lies inside `outer` (both already expanded to subgroups). */
export function scopeWithin(inner: Scope, outer: Scope): boolean {
  if (outer.all) return true;
  if (inner.all) return false;
  for (const id of inner.groupIds) if (!outer.groupIds.has(id)) return false;
  return true;
}

/** The permissions of `wanted` that `held` lacks, in catalogue order of `wanted`. */
export function missingPermissions(wanted: Iterable<Permission>, held: ReadonlySet<Permission>): Permission[] {
  const out: Permission[] = [];
  for (const p of wanted) if (!held.has(p)) out.push(p);
  return out;
}

/** A group (null: ungrouped) must lie inside the actor's scope. */
export function requireGroupInScope(actor: Actor, groupId: number | null, what: string): void {
  if (!inScope(actor.principal.scope, groupId)) {
    throw denied(`${what} is outside your device-group scope`, groupId === null ? {} : { group_id: groupId });
  }
}

/** Scope "all" is required (changes that reach devices beyond any group). */
export function requireScopeAll(actor: Actor, reason: string): void {
  if (!actor.principal.scope.all) throw denied(reason);
}

/**
 * Ownership of shared things (notification channels, templates, credentials): a thing used outside the actor's
 * device-group scope belongs to whoever holds that wider scope, so a scoped actor may not remove it or change what
 * it does there. `usedOutside` counts the uses (devices, rules) beyond the given expanded groups; it runs only for
 * a scoped actor. One rule for every shared thing, so every door that offers the change gives the same 403.
 */
export function requireOwnsSharedThing(
  actor: Actor,
  thing: { label: string; use: string; details: Record<string, unknown> },
  usedOutside: (groupIds: readonly number[]) => number,
  verb: string,
): void {
  const scope = actor.principal.scope;
  if (scope.all) return;
  const outside = usedOutside([...scope.groupIds]);
  if (outside === 0) return;
  const uses = `${outside} ${thing.use}${outside === 1 ? '' : 's'}`;
  throw denied(`${thing.label} is used by ${uses} outside your device-group scope; only a user whose scope is all can have it ${verb}`, {
    ...thing.details,
    used_outside_scope: outside,
  });
}
