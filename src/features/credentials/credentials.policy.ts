// Where a credential's secret may go: its usage scope, who may set it, and who may point a device (an address) at it.
import type { DB } from '../../db/open';
import { ApiError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { denied, operation } from '../../identity/policy';
import type { Scope } from '../../identity/principal';
import { listScopeGroupIds } from '../users/users.store';
import { credentialCoversGroup, getUsageGroups, groupsExisting, type UsageGroups } from './credential-usage.store';

const shared = { scope: 'groups', ownership: 'shared-thing' } as const;

/** Each credential operation's permissions and rules, read by every door (the usage-scope rules are below). */
export const CREDENTIAL_OPS = {
  list: operation('credentials.list', ['credentials.view'], { scope: 'none' }, { api: 'GET /credentials', web: ['GET /credentials'], cli: 'credential list' }),
  get: operation('credentials.get', ['credentials.view'], { scope: 'none' }, { api: 'GET /credentials/{credential_id}', cli: 'credential show' }),
  create: operation(
    'credentials.create',
    ['credentials.create'],
    { scope: 'groups' },
    { api: 'POST /credentials', web: ['GET /credentials/new', 'POST /credentials'], cli: 'credential add' },
  ),
  update: operation('credentials.update', ['credentials.update'], shared, {
    api: 'PUT /credentials/{credential_id}',
    web: ['GET /credentials/:id/edit', 'POST /credentials/:id/edit'],
    cli: 'credential update',
  }),
  delete: operation('credentials.delete', ['credentials.delete'], shared, {
    api: 'DELETE /credentials/{credential_id}',
    web: ['POST /credentials/:id/delete'],
    cli: 'credential remove',
  }),
} as const;

/** Whether every device the credential may serve lies inside the actor's scope (null usage needs scope "all"). */
export function usageWithinScope(actor: Actor, usage: UsageGroups): boolean {
  return usageInside(actor.principal.scope, usage);
}

/**
 * The same rule for a bare scope (the device form lists only credentials its user may attach). A credential usable
 * by no group (created so, or its groups deleted) belongs to no scope, so only scope "all" holds it: otherwise any
 * scoped user could claim it for their own groups and send its secret to a host of their choosing.
 */
export function usageInside(scope: Scope, usage: UsageGroups): boolean {
  if (scope.all) return true;
  if (usage === null || usage.length === 0) return false;
  return usage.every((g) => scope.groupIds.has(g));
}

/**
 * Why the actor is not entitled to decide where the credential's secret is sent (attach it to a device, change
 * the address or accepted host key of a device using it), or null when it is: entitled means holding
 * credentials.view and a device-group scope containing the credential's whole usage scope.
 */
export function credentialEntitlementGap(db: DB, actor: Actor, credentialId: number): string | null {
  if (!actor.principal.permissions.has('credentials.view')) return 'lacks the permission credentials.view';
  if (!usageWithinScope(actor, getUsageGroups(db, credentialId)))
    return `has a device-group scope that does not contain the usage scope of credential ${credentialId}`;
  return null;
}

/** The same rule as a refusal, for acts that are themselves approvals (approving a held device). */
export function requireCredentialInReach(db: DB, actor: Actor, credentialId: number, why: string): void {
  const gap = credentialEntitlementGap(db, actor, credentialId);
  if (gap === null) return;
  const permission = gap.includes('credentials.view') ? { permission: 'credentials.view' } : {};
  throw denied(`${why} needs a user entitled to credential ${credentialId}; the caller ${gap}`, { ...permission, field: 'credential_id' });
}

/**
 * A device in `groupId` may reference the credential only when its usage scope covers that group. This is about
 * the data, not the caller (not even scope "all" may break it), so it is a 422 on `credential_id`.
 */
export function requireCredentialCovers(db: DB, credentialId: number, groupId: number | null): void {
  if (credentialCoversGroup(db, credentialId, groupId)) return;
  const message =
    groupId === null
      ? `credential ${credentialId} is restricted to device groups, so an ungrouped device cannot use it`
      : `credential ${credentialId} may not be used by devices in group ${groupId} (outside its usage scope)`;
  throw ApiError.validation([{ field: 'credential_id', message }], message);
}

/**
 * A usage scope the actor may set: null (anywhere) only with scope "all"; otherwise existing groups (422 for
 * missing ones), each inside the actor's scope. Returns the list sorted without duplicates.
 */
export function checkUsageInput(db: DB, actor: Actor, groups: UsageGroups): UsageGroups {
  if (groups === null) {
    if (!actor.principal.scope.all)
      throw denied('Only a user with device-group scope "all" may make a credential usable by devices anywhere', { field: 'group_ids' });
    return null;
  }
  const ids = [...new Set(groups)].sort((a, b) => a - b);
  const existing = groupsExisting(db, ids);
  const missing = ids.filter((g) => !existing.has(g));
  if (missing.length) {
    throw ApiError.validation(
      missing.map((g) => ({ field: 'group_ids', message: `group ${g} does not exist` })),
      'Referenced records do not exist',
    );
  }
  const outside = ids.filter((g) => !usageWithinScope(actor, [g]));
  if (outside.length) throw denied(`group_ids ${outside.join(', ')} are outside your device-group scope`, { field: 'group_ids', group_ids: outside });
  return ids;
}

/**
 * The usage scope a create without group_ids gets: anywhere for scope "all", otherwise the groups assigned to the
 * actor's user, not their subgroups of the moment. Coverage follows the tree (credentialCoversGroup walks up), so a
 * subgroup added later is covered and one moved out of those groups is not: the secret goes where the user's own
 * scope reaches, as a team lead who scopes a credential "to my region" expects, never to a branch moved elsewhere.
 */
export function defaultUsage(db: DB, actor: Actor): UsageGroups {
  const scope = actor.principal.scope;
  return scope.all ? null : listScopeGroupIds(db, actor.principal.userId);
}
