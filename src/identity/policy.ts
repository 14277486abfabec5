// Authorization rules shared by every service: permissions held, scope containment, "grant only what you hold".
import { ApiError } from '../errors';
import type { Actor } from './actor';
import type { Permission } from './permissions';
import { inScope, type Principal, type Scope } from './principal';

/**
 * Which records an operation reaches: `groups` only those inside the actor's device-group scope (403 outside),
 * `all` only an actor whose scope is all, `none` records that belong to no device group (roles, keys, the catalogue).
 */
export type ScopeRule = 'groups' | 'all' | 'none';

/**
 * Who owns the record acted on, beyond the permission: `shared-thing` (requireOwnsSharedThing: a thing used outside
 * the actor's scope belongs to a wider scope), `grant` (users.policy: never above yourself, grant only what you hold),
 * `credential` (credentials.policy: only a user entitled to a credential decides where its secret goes), `own` (the
 * actor's own records), or `none`.
 */
export type OwnershipRule = 'none' | 'shared-thing' | 'grant' | 'credential' | 'own';

/**
 * One permission-guarded operation, declared once next to its feature (src/features/<f>/<f>.policy.ts) and read by
 * every door: the API route guard, the web `need()` and `can()`, the CLI, the service's own `authorize()`. `doors`
 * names where each door offers it (spec path for the API, method and path for the web, the CLI command), which is
 * what test/api/policy-matrix.test.ts walks.
 */
export interface Operation {
  readonly id: string;
  /** Every one is needed. */
  readonly permissions: readonly Permission[];
  readonly scope: ScopeRule;
  readonly ownership: OwnershipRule;
  readonly doors: { readonly api?: string | readonly string[]; readonly web?: readonly string[]; readonly cli?: string };
}

/** The public API doors of an operation (`METHOD /path` under /api/v1): none, one, or several (a list and its reads). */
export function apiDoors(op: Operation): readonly string[] {
  const api = op.doors.api;
  return api === undefined ? [] : typeof api === 'string' ? [api] : api;
}

/** The permission of `op` the holder lacks first, or null when it holds them all. */
export function missingFor(holder: Pick<Principal, 'permissions'>, op: Operation | Permission): Permission | null {
  if (typeof op === 'string') return holder.permissions.has(op) ? null : op;
  for (const p of op.permissions) if (!holder.permissions.has(p)) return p;
  return null;
}

/** Whether the holder may perform the operation (the `can()` that shows a button). */
export function allows(holder: Pick<Principal, 'permissions'>, op: Operation | Permission): boolean {
  return missingFor(holder, op) === null;
}

/** 403 PERMISSION_DENIED with a message naming the reason. */
export function denied(reason: string, details: Record<string, unknown> = {}): ApiError {
  return new ApiError('PERMISSION_DENIED', reason, details);
}

/** The actor (or a reader's principal) must hold the operation's permissions: the same 403 the route guards give. */
export function authorize(actor: Actor | Principal, op: Operation | Permission): void {
  const permission = missingFor('principal' in actor ? actor.principal : actor, op);
  if (permission !== null) throw denied(`This operation needs the permission ${permission}`, { permission });
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

/** Declare an operation (frozen: a door cannot change what another reads). */
export function operation(
  id: string,
  permissions: readonly Permission[],
  rules: { scope: ScopeRule; ownership?: OwnershipRule },
  doors: Operation['doors'],
): Operation {
  return Object.freeze({
    id,
    permissions: Object.freeze([...permissions]),
    scope: rules.scope,
    ownership: rules.ownership ?? 'none',
    doors: Object.freeze(doors),
  });
}
