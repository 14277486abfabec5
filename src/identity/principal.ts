// Who is making a request: the user behind an API key or a session, with role permissions and device-group scope.
import type { Permission } from './permissions';

/** Device-group scope: every group, or an explicit set of group ids already expanded to include subgroups. */
export type Scope = { all: true } | { all: false; groupIds: ReadonlySet<number> };

export const SCOPE_ALL: Scope = { all: true };

export interface Principal {
  userId: number;
  username: string;
  roleName: string;
  permissions: ReadonlySet<Permission>;
  scope: Scope;
  /** The user's own time zone preference, or null to use the appliance's. */
  timezone: string | null;
  /** The API key used, when the request came with one. */
  apiKeyId: number | null;
}

export function hasPermission(p: Principal, perm: Permission): boolean {
  return p.permissions.has(perm);
}

/** Whether a device in group `groupId` (null: ungrouped) is inside the scope. Ungrouped devices need scope "all". */
export function inScope(scope: Scope, groupId: number | null): boolean {
  if (scope.all) return true;
  return groupId !== null && scope.groupIds.has(groupId);
}
