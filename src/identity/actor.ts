// Who acts, and through which door: every service that changes state takes an Actor, checks its policy and audits it.
import { PERMISSIONS, ADMINISTRATOR_ROLE } from './permissions';
import { SCOPE_ALL, type Principal } from './principal';

/** The door a change came through, as the audit trail records it. */
export type Door =
  | { kind: 'api'; apiKeyId: number }
  /** A web session, named by the first characters of its stored hash (never the cookie value). */
  | { kind: 'web'; sessionRef: string }
  | { kind: 'cli'; osUser: string }
  /** The appliance itself: scheduler, retention, start-up. */
  | { kind: 'system' }
  /** An inventory source's sync (docs/inventory.md), started by `startedBy` (a user, the CLI's OS user, or the schedule). */
  | { kind: 'inventory'; source: string; startedBy: string };

export interface Actor {
  principal: Principal;
  door: Door;
  /** X-Request-ID of the HTTP request that made the change; null outside HTTP. */
  requestId: string | null;
}

/** The principal of the operator at the console: the CLI runs with the data directory's owner's rights. */
function consolePrincipal(username: string): Principal {
  return {
    userId: 0,
    username,
    roleName: ADMINISTRATOR_ROLE,
    permissions: new Set(PERMISSIONS),
    scope: SCOPE_ALL,
    timezone: null,
    apiKeyId: null,
  };
}

/** The CLI's actor: every permission, scope all, recorded with the OS user who ran the command. */
export function cliActor(osUser: string): Actor {
  return { principal: consolePrincipal(`cli:${osUser}`), door: { kind: 'cli', osUser }, requestId: null };
}

/** The appliance's own actor (scheduler, retention, migrations of data). */
export const SYSTEM_ACTOR: Actor = Object.freeze<Actor>({ principal: consolePrincipal('system'), door: { kind: 'system' }, requestId: null });

/**
 * The actor of an inventory source's sync: the source itself (every permission, scope all: who may start a sync and
 * what the source may hold is checked by inventory.service), recorded as `inventory:<source>` through the door
 * 'inventory'.
 */
export function inventoryActor(source: string, startedBy: string): Actor {
  return { principal: consolePrincipal(`inventory:${source}`), door: { kind: 'inventory', source, startedBy }, requestId: null };
}

/** Whether the actor is a real user account (not the console or the appliance itself). */
export function isUserActor(a: Actor): boolean {
  return a.door.kind === 'api' || a.door.kind === 'web';
}

/** What the audit trail stores as the door and its reference. */
export function doorOf(a: Actor): { door: Door['kind']; ref: string | null } {
  switch (a.door.kind) {
    case 'api':
      return { door: 'api', ref: `key ${a.door.apiKeyId}` };
    case 'web':
      return { door: 'web', ref: `session ${a.door.sessionRef}` };
    case 'cli':
      return { door: 'cli', ref: a.door.osUser };
    case 'system':
      return { door: 'system', ref: null };
    case 'inventory':
      return { door: 'inventory', ref: `source ${a.door.source}, started by ${a.door.startedBy}` };
  }
}
