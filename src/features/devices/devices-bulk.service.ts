// Bulk edit of selected devices: one change (group, credential, template, schedule, enabled, retire) applied device by device
// through the device services, so each device gets their rules (scope, credential usage) and its own audit row; a preview runs
// the very same code in a transaction that is rolled back.
import type { DB } from '../../db/open';
import { ApiError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import { requireCredentialInReach } from '../credentials/credentials.policy';
import { DEVICE_OPS } from './devices.policy';
import { reactivateDevice, retireDevice } from './devices-retire.service';
import { getDevice, updateDevice, type Device, type DevicePatch } from './devices.service';

/** The most devices one bulk edit takes (the list selects at most a page of 50; the rest is headroom). */
export const BULK_MAX_DEVICES = 500;

/** What to change on every selected device; a field left out is kept. */
export interface BulkChange {
  group_id?: number | null;
  credential_id?: number;
  template_id?: number;
  schedule?: string | null;
  enabled?: boolean;
  /** true: retire; false: reactivate. */
  retired?: boolean;
}

export const BULK_FIELDS = ['group_id', 'credential_id', 'template_id', 'schedule', 'enabled', 'retired'] as const;
export type BulkField = (typeof BULK_FIELDS)[number];

export interface BulkFieldChange {
  field: BulkField;
  before: unknown;
  after: unknown;
}

/** One device's outcome: what changes (or changed), or why it is refused (then nothing changes on it). */
export interface BulkItem {
  id: number;
  /** null when the caller may not see the device (outside their scope, or gone). */
  name: string | null;
  changes: BulkFieldChange[];
  refused: string | null;
}

/** Thrown to roll the preview's transaction back. */
class PreviewRollback extends Error {}

/** What applying would do to each device, computed by applying it and rolling back: nothing is written. */
export function previewBulkEdit(db: DB, actor: Actor, ids: readonly number[], change: BulkChange): BulkItem[] {
  let items: BulkItem[] = [];
  try {
    db.transaction(() => {
      items = applyEach(db, actor, ids, change);
      throw new PreviewRollback('preview');
    })();
  } catch (err) {
    if (!(err instanceof PreviewRollback)) throw err;
  }
  return items;
}

/**
 * Apply the change to each device in one transaction, each device in its own savepoint: a refused device (outside the
 * caller's scope, a group they may not move it to, a credential they may not use or that does not cover its group) is
 * left as it was with the reason, the others are changed, each with its own audit row.
 */
export function applyBulkEdit(db: DB, actor: Actor, ids: readonly number[], change: BulkChange): BulkItem[] {
  return db.transaction(() => applyEach(db, actor, ids, change)).immediate();
}

function applyEach(db: DB, actor: Actor, ids: readonly number[], change: BulkChange): BulkItem[] {
  authorize(actor, DEVICE_OPS.bulkEdit);
  const unique = [...new Set(ids)];
  if (unique.length === 0) throw ApiError.validation([{ field: 'device_id', message: 'select at least one device' }]);
  if (unique.length > BULK_MAX_DEVICES) {
    throw ApiError.validation([{ field: 'device_id', message: `at most ${BULK_MAX_DEVICES} devices at a time` }]);
  }
  if (!BULK_FIELDS.some((f) => change[f] !== undefined)) throw ApiError.validation([{ field: '_form', message: 'choose at least one change' }]);
  return unique.map((id) => applyOne(db, actor, id, change));
}

function applyOne(db: DB, actor: Actor, id: number, change: BulkChange): BulkItem {
  let before: Device;
  try {
    before = getDevice(db, actor.principal.scope, id);
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) return { id, name: null, changes: [], refused: err.message };
    throw err;
  }
  try {
    const after = db.transaction(() => {
      if (change.credential_id !== undefined && change.credential_id !== before.credential_id) {
        requireCredentialInReach(db, actor, change.credential_id, 'Setting a credential in bulk');
      }
      const { retired, ...fields } = change;
      // Reactivate before the edit (so an "enable" applies), retire after it (retiring disables).
      if (retired === false) reactivateDevice(db, actor, id);
      const patch: DevicePatch = retired === true ? { ...fields, enabled: undefined } : fields;
      let d = Object.values(patch).some((v) => v !== undefined) ? updateDevice(db, actor, id, patch) : getDevice(db, actor.principal.scope, id);
      if (retired === true) d = retireDevice(db, actor, id);
      return d;
    })();
    return { id, name: before.name, changes: changesOf(before, after), refused: null };
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) return { id, name: before.name, changes: [], refused: reasonOf(err) };
    throw err;
  }
}

function reasonOf(err: ApiError): string {
  const first = (err.details.errors as { message?: string }[] | undefined)?.[0]?.message;
  return first && first !== err.message ? `${err.message}: ${first}` : err.message;
}

function changesOf(before: Device, after: Device): BulkFieldChange[] {
  const view = (d: Device): Record<BulkField, unknown> => ({
    group_id: d.group_id,
    credential_id: d.credential_id,
    template_id: d.template_id,
    schedule: d.schedule,
    enabled: d.enabled,
    retired: d.retired !== null,
  });
  const b = view(before);
  const a = view(after);
  return BULK_FIELDS.filter((f) => b[f] !== a[f]).map((f) => ({ field: f, before: b[f], after: a[f] }));
}
