// The fields an inventory source owns on the devices it created: changed only by its sync, refused (409) through every other door.
import type { DB } from '../../db/open';
import { ApiError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { deviceSourceName } from './inventory.store';

export const SOURCE_OWNED_FIELDS = ['name', 'hostname', 'template_id', 'group_id'] as const;

/** The source owning the device, or null (a device managed by hand): for the device form's read-only fields. */
export function owningSource(db: DB, deviceId: number): string | null {
  return deviceSourceName(db, deviceId);
}

/** 409 when anyone but the owning source's sync would change a field the source owns to another value. */
export function requireSourceOwnedUnchanged(
  db: DB,
  actor: Actor,
  device: { id: number; name: string } & Record<(typeof SOURCE_OWNED_FIELDS)[number], unknown>,
  patch: Partial<Record<(typeof SOURCE_OWNED_FIELDS)[number], unknown>>,
): void {
  const changed = SOURCE_OWNED_FIELDS.filter((f) => patch[f] !== undefined && patch[f] !== device[f]);
  if (changed.length === 0) return;
  const source = deviceSourceName(db, device.id);
  if (source === null || (actor.door.kind === 'inventory' && actor.door.source === source)) return;
  throw new ApiError(
    'CONFLICT',
    `device ${device.name} comes from inventory source ${source}: its ${changed.join(', ')} change${changed.length > 1 ? '' : 's'} there, not here`,
    { field: changed[0], source, fields: changed },
  );
}
