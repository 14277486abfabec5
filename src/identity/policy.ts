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
