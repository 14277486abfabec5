// Devices: scoped listing and lookup, create, partial update, delete; reference checks and the device-group scope rule.
import type { DB } from '../../db/open';
import { ApiError, isUniqueViolation, type FieldError } from '../../errors';
import { inScope, type Scope } from '../../identity/principal';
import { groupExists } from '../groups/groups.store';
import {
  countDevices,
  credentialExists,
  deleteDeviceRow,
  getDeviceRow,
  getDeviceViewRow,
  insertDevice,
  listDeviceViewRows,
  templateExists,
  toDevice,
  updateDeviceFields,
  type Device,
  type DeviceFilter,
  type DeviceRow,
  type Protocol,
} from './devices.store';

export type { Device, DeviceFilter };

export const DEFAULT_PORT: Record<Protocol, number> = { ssh: 22, telnet: 23 };

export interface DeviceInput {
  name: string;
  hostname: string;
  /** Omitted: the protocol's default port. */
  port?: number;
  protocol: Protocol;
  group_id: number | null;
  credential_id: number;
  template_id: number;
  enabled: boolean;
  description: string;
  schedule: string | null;
  accept_host_key_change: boolean;
}

export type DevicePatch = Partial<DeviceInput>;

/** The one message for "exists but outside your scope", so a 403 says nothing about the device. */
const OUT_OF_SCOPE = 'The device is outside your device-group scope';

/** One page and the total, read in one transaction so they agree with each other. */
export function listDevices(db: DB, scope: Scope, filter: DeviceFilter, page: number, limit: number): { items: Device[]; total: number } {
  return db.transaction(() => {
    const total = countDevices(db, scope, filter);
    const offset = (page - 1) * limit;
    // Past the end there is nothing to read; skipping the query also keeps absurd page numbers cheap.
    const items = offset < total ? listDeviceViewRows(db, scope, filter, offset, limit).map(toDevice) : [];
    return { items, total };
  })();
}

export function getDevice(db: DB, scope: Scope, id: number): Device {
  const row = getDeviceViewRow(db, id);
  if (!row) throw ApiError.notFound(`device ${id}`);
  if (!inScope(scope, row.group_id)) throw new ApiError('PERMISSION_DENIED', OUT_OF_SCOPE);
  return toDevice(row);
}

function requireDeviceInScope(db: DB, scope: Scope, id: number): DeviceRow {
  const row = getDeviceRow(db, id);
  if (!row) throw ApiError.notFound(`device ${id}`);
  if (!inScope(scope, row.group_id)) throw new ApiError('PERMISSION_DENIED', OUT_OF_SCOPE);
  return row;
}

/** Referenced records must exist: one 422 listing every missing one. */
function checkReferences(db: DB, ref: { group_id?: number | null; credential_id?: number; template_id?: number }): void {
  const errors: FieldError[] = [];
  if (ref.group_id !== undefined && ref.group_id !== null && !groupExists(db, ref.group_id)) {
    errors.push({ field: 'group_id', message: `group ${ref.group_id} does not exist` });
  }
  if (ref.credential_id !== undefined && !credentialExists(db, ref.credential_id)) {
    errors.push({ field: 'credential_id', message: `credential ${ref.credential_id} does not exist` });
  }
  if (ref.template_id !== undefined && !templateExists(db, ref.template_id)) {
    errors.push({ field: 'template_id', message: `template ${ref.template_id} does not exist` });
  }
  if (errors.length) throw ApiError.validation(errors, 'Referenced records do not exist');
}

function nameExists(name: string): ApiError {
  return new ApiError('DEVICE_NAME_EXISTS', `a device named "${name}" already exists`);
}

function loadDevice(db: DB, id: number): Device {
  const row = getDeviceViewRow(db, id);
  if (!row) throw ApiError.notFound(`device ${id}`);
  return toDevice(row);
}

/** Creation checks only the permission (spec 4.6 rule 3): the group is not checked against the caller's scope. */
export function createDevice(db: DB, input: DeviceInput): Device {
  const id = db
    .transaction(() => {
      checkReferences(db, input);
      try {
        return insertDevice(db, {
          ...input,
          port: input.port ?? DEFAULT_PORT[input.protocol],
          enabled: input.enabled ? 1 : 0,
          accept_host_key_change: input.accept_host_key_change ? 1 : 0,
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw nameExists(input.name);
        throw err;
      }
    })
    .immediate();
  return loadDevice(db, id);
}

/**
 * Partial update of the given fields. The device must be in the caller's scope, and so must a new group_id
 * (a scoped caller cannot move a device out of its reach, nor make it ungrouped). When the protocol changes
 * and no port is given, a port that was the old protocol's default follows to the new one's default.
 * A changed address (hostname, port, protocol) resets reachability to unknown; the recorded host key stays,
 * so a different key at the new address is refused until accept_host_key_change is set.
 */
export function updateDevice(db: DB, scope: Scope, id: number, patch: DevicePatch): Device {
  db.transaction(() => {
    const row = requireDeviceInScope(db, scope, id);
    checkReferences(db, patch);
    if (patch.group_id !== undefined && patch.group_id !== row.group_id && !inScope(scope, patch.group_id)) {
      throw new ApiError('PERMISSION_DENIED', 'The target group is outside your device-group scope', { field: 'group_id' });
    }
    let port = patch.port;
    if (port === undefined && patch.protocol !== undefined && patch.protocol !== row.protocol && row.port === DEFAULT_PORT[row.protocol]) {
      port = DEFAULT_PORT[patch.protocol];
    }
    const addressChanged =
      (patch.hostname !== undefined && patch.hostname !== row.hostname) ||
      (port !== undefined && port !== row.port) ||
      (patch.protocol !== undefined && patch.protocol !== row.protocol);
    try {
      updateDeviceFields(
        db,
        id,
        {
          ...patch,
          port,
          enabled: patch.enabled === undefined ? undefined : patch.enabled ? 1 : 0,
          accept_host_key_change: patch.accept_host_key_change === undefined ? undefined : patch.accept_host_key_change ? 1 : 0,
        },
        { resetReachability: addressChanged },
      );
    } catch (err) {
      if (isUniqueViolation(err)) throw nameExists(patch.name ?? row.name);
      throw err;
    }
  }).immediate();
  return loadDevice(db, id);
}

/** Deletes the device and its backup records. */
export function deleteDevice(db: DB, scope: Scope, id: number): void {
  db.transaction(() => {
    requireDeviceInScope(db, scope, id);
    deleteDeviceRow(db, id);
  }).immediate();
}
