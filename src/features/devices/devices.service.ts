// Devices: scoped listing and lookup, create, partial update, delete; reference checks and the device-group scope rule.
import { Cron } from 'croner';
import type { DB } from '../../db/open';
import { ApiError, isUniqueViolation, type FieldError } from '../../errors';
import { inScope, type Principal, type Scope } from '../../identity/principal';
import type { Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import { DEVICE_OPS } from './devices.policy';
import { changesBetween, recordAudit, type AuditChanges } from '../audit/audit.service';
import { requireCredentialCovers } from '../credentials/credentials.policy';
import { addressOf, holdAudit, settleHoldAfterChange, type HeldField } from './device-holds.service';
import { groupExists } from '../groups/groups.store';
import { requireSourceOwnedUnchanged } from '../inventory/inventory-owned';
import { changeZone } from '../collectors/collectors.service';
import { getHostKeyOffer, setHostKeyApproval, type HostKeyOfferRow } from './host-keys.store';
import {
  countDevices,
  credentialExists,
  deleteDeviceRow,
  getDeviceRow,
  getDeviceViewRow,
  insertDevice,
  listDeviceViewRows,
  templateExists,
  templateIsCustom,
  toDevice,
  updateDeviceFields,
  type Device,
  templateNameRows,
  listDeviceIdRows,
  deviceScheduleSourceRow,
  DEVICE_SORTS,
  type DeviceFilter,
  type DeviceOrder,
  type DeviceRow,
  type DeviceSort,
  type Protocol,
} from './devices.store';

export type { Device, DeviceFilter, DeviceOrder, DeviceSort };
export { DEVICE_SORTS };

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
  /** Omitted or null: no zone of its own (the central, or its group's zone); a zone needs collectors.zone (collectors.service). */
  zone?: string | null;
}

export type DevicePatch = Partial<DeviceInput>;

/** The one message for "exists but outside your scope", so a 403 says nothing about the device. */
const OUT_OF_SCOPE = 'The device is outside your device-group scope';

/**
 * One page and the total, read in one transaction so they agree with each other. `order` (the web list's sortable
 * columns) defaults to by name, the order the API lists in.
 */
export function listDevices(db: DB, scope: Scope, filter: DeviceFilter, page: number, limit: number, order?: DeviceOrder): { items: Device[]; total: number } {
  return db.transaction(() => {
    const total = countDevices(db, scope, filter);
    const offset = (page - 1) * limit;
    // Past the end there is nothing to read; skipping the query also keeps absurd page numbers cheap.
    const items = offset < total ? listDeviceViewRows(db, scope, filter, offset, limit, order).map(toDevice) : [];
    return { items, total };
  })();
}

/** The ids of the devices in the scope matching the filter. */
export function listDeviceIds(db: DB, scope: Scope, filter: DeviceFilter): number[] {
  return listDeviceIdRows(db, scope, filter);
}

/** Template ids and names, for the platform column and filter of device lists (templates are not scoped). */
export function listPlatforms(db: DB): { id: number; name: string }[] {
  return templateNameRows(db);
}

export interface EffectiveSchedule {
  expr: string;
  /** Where it is set: on the device, on a group of its chain (named), or the appliance's [backup] schedule. */
  source: 'device' | 'group' | 'global';
  group_name: string | null;
  /** The next firing (ms), or null: the device is disabled, or the expression never fires again. */
  next_run: number | null;
}

/**
 * The schedule a device's backups follow, as the scheduler resolves it (device, else its group chain, else the
 * global one), and its next run in the appliance's time zone (croner, as the scheduler).
 */
export function getEffectiveSchedule(db: DB, scope: Scope, id: number, global: { schedule: string; timezone: string }, now = Date.now()): EffectiveSchedule {
  const device = getDevice(db, scope, id);
  const row = deviceScheduleSourceRow(db, id);
  const expr = row?.schedule ?? global.schedule;
  const source = !row ? 'global' : row.depth === 0 ? 'device' : 'group';
  let next: number | null = null;
  if (device.enabled) {
    try {
      const cron = new Cron(expr, { paused: true, timezone: global.timezone });
      next = cron.nextRun(new Date(now))?.getTime() ?? null;
      cron.stop();
    } catch {
      next = null; // the scheduler ignores an expression croner refuses; so does the page
    }
  }
  return { expr, source, group_name: row?.group_name ?? null, next_run: next };
}

export function getDevice(db: DB, scope: Scope, id: number): Device {
  const row = getDeviceViewRow(db, id);
  if (!row) throw ApiError.notFound(`device ${id}`);
  if (!inScope(scope, row.group_id)) throw new ApiError('PERMISSION_DENIED', OUT_OF_SCOPE);
  return toDevice(row);
}

export function requireDeviceInScope(db: DB, scope: Scope, id: number): DeviceRow {
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

export function loadDevice(db: DB, id: number): Device {
  const row = getDeviceViewRow(db, id);
  if (!row) throw ApiError.notFound(`device ${id}`);
  return toDevice(row);
}

/** The fields the audit trail compares (reachability, host key and timestamps are observations, not edits). */
export function auditView(d: Device) {
  return {
    name: d.name,
    hostname: d.hostname,
    port: d.port,
    protocol: d.protocol,
    group_id: d.group_id,
    credential_id: d.credential_id,
    template_id: d.template_id,
    enabled: d.enabled,
    description: d.description,
    schedule: d.schedule,
    accept_host_key_change: d.accept_host_key_change,
  };
}

/**
 * Checks only devices.create (spec 4.6 rule 3): the group is not checked against the caller's scope. The
 * credential's usage scope must cover the device's group (422 otherwise). When the caller is not entitled to the
 * credential (credentials.view and its usage scope inside the caller's scope), the device is created but held:
 * no backup sends the secret until an entitled user approves its address. `accept_host_key_change` has nothing to
 * accept yet (the first key seen is recorded).
 */
export function createDevice(db: DB, actor: Actor, input: DeviceInput): Device {
  authorize(actor, DEVICE_OPS.create);
  return db
    .transaction(() => {
      checkReferences(db, input);
      requireCredentialCovers(db, input.credential_id, input.group_id);
      const { zone, ...fields } = input;
      let id: number;
      try {
        id = insertDevice(db, {
          ...fields,
          port: input.port ?? DEFAULT_PORT[input.protocol],
          enabled: input.enabled ? 1 : 0,
          accept_host_key_change: 0,
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw nameExists(input.name);
        throw err;
      }
      if (zone) changeZone(db, actor, { device: id }, zone);
      const hold = holdAudit(settleHoldAfterChange(db, actor, id, { prior: null, changed: ['created'] }));
      const created = loadDevice(db, id);
      const changes = { ...changesBetween(null, auditView(created)), ...hold.changes };
      recordAudit(db, actor, { action: 'device.create', target: `device ${id}`, changes, details: { name: created.name, ...hold.details } });
      return created;
    })
    .immediate();
}

/**
 * Partial update of the given fields. The device must be in the caller's scope, and so must a new group_id
 * (a scoped caller cannot move a device out of its reach, nor make it ungrouped). When the protocol changes
 * and no port is given, a port that was the old protocol's default follows to the new one's default.
 * A changed address (hostname, port, protocol) resets reachability to unknown; the recorded host key stays.
 * A new credential must cover the (new) group, and so must the credential when the group changes (422). When a
 * caller not entitled to the credential changes the address or the credential, the change stands but the device
 * is held until an entitled user approves it; an entitled caller's such change approves it (clears a hold).
 * accept_host_key_change true approves the key the device offered at its latest HOST_KEY_CHANGED backup (409
 * when there is none; by a caller not entitled to the credential, the device is then held too); false withdraws.
 */
export function updateDevice(db: DB, actor: Actor, id: number, patch: DevicePatch): Device {
  authorize(actor, DEVICE_OPS.update);
  const scope = actor.principal.scope;
  return db
    .transaction(() => {
      const row = requireDeviceInScope(db, scope, id);
      const before = loadDevice(db, id);
      // Issue #26: a device an inventory source created keeps the source's name, hostname, template and group.
      requireSourceOwnedUnchanged(db, actor, row, patch);
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
      const credentialId = patch.credential_id ?? row.credential_id;
      const groupId = patch.group_id !== undefined ? patch.group_id : row.group_id;
      const credentialChanged = credentialId !== row.credential_id;
      if (patch.enabled === true && row.retired_at !== null) {
        throw new ApiError('CONFLICT', `device ${row.name} is retired: reactivate it to back it up again`, { field: 'enabled' });
      }
      if (credentialChanged || groupId !== row.group_id) requireCredentialCovers(db, credentialId, groupId);
      const { accept_host_key_change: accept, zone, ...fields } = patch;
      // Audited on its own row (device.zone), as every door writes it.
      if (zone !== undefined) changeZone(db, actor, { device: id }, zone);
      try {
        updateDeviceFields(
          db,
          id,
          { ...fields, port, enabled: fields.enabled === undefined ? undefined : fields.enabled ? 1 : 0 },
          { resetReachability: addressChanged },
        );
      } catch (err) {
        if (isUniqueViolation(err)) throw nameExists(patch.name ?? row.name);
        throw err;
      }
      const accepted = accept === true && !before.accept_host_key_change;
      if (accepted) approveOfferedKey(db, actor, id, null);
      if (accept === false && before.accept_host_key_change) setHostKeyApproval(db, id, null);
      const after = loadDevice(db, id);
      const changed = routeChanges(before, after);
      // A custom template decides what happens to the enable secret it is handed (see templates.service).
      if (after.template_id !== before.template_id && templateIsCustom(db, after.template_id)) changed.push('template_id');
      if (accepted) changed.push('host_key');
      const hold = holdAudit(changed.length ? settleHoldAfterChange(db, actor, id, { prior: addressOf(before), changed }) : null);
      const changes = { ...changesBetween(auditView(before), auditView(after)), ...hold.changes };
      if (Object.keys(changes).length)
        recordAudit(db, actor, { action: 'device.update', target: `device ${id}`, changes, details: { name: after.name, ...hold.details } });
      return after;
    })
    .immediate();
}

/** The fields deciding where the secret goes (address and credential) that differ between two versions of a device. */
function routeChanges(before: Device, after: Device): HeldField[] {
  return (['hostname', 'port', 'protocol', 'credential_id'] as const).filter((f) => before[f] !== after[f]);
}

/**
 * Approve the one host key the device offered at its latest HOST_KEY_CHANGED backup; `fingerprint`, when given,
 * must be the one shown to the user (else 409: the device has offered another key since). Cleared once recorded.
 * By a caller not entitled to the device's credential, the device is held until an entitled user approves.
 */
export function acceptHostKey(db: DB, actor: Actor, id: number, fingerprint: string): Device {
  authorize(actor, DEVICE_OPS.acceptHostKey);
  return db
    .transaction(() => {
      const row = requireDeviceInScope(db, actor.principal.scope, id);
      approveOfferedKey(db, actor, id, fingerprint);
      const hold = holdAudit(settleHoldAfterChange(db, actor, id, { prior: addressOf(row), changed: ['host_key'] }));
      recordAudit(db, actor, {
        action: 'device.host_key_accept',
        target: `device ${id}`,
        changes: { accept_host_key_change: { before: row.accept_host_key_change === 1, after: true }, ...hold.changes },
        details: { name: row.name, recorded: row.host_key, accepted: fingerprint, ...hold.details },
      });
      return loadDevice(db, id);
    })
    .immediate();
}

function approveOfferedKey(db: DB, actor: Actor, id: number, fingerprint: string | null): void {
  const offer = getHostKeyOffer(db, id);
  if (!offer)
    throw new ApiError('CONFLICT', `device ${id} has not offered a changed SSH host key; there is nothing to accept`, { field: 'accept_host_key_change' });
  if (fingerprint !== null && fingerprint !== offer.fingerprint) {
    throw new ApiError('CONFLICT', `device ${id} now offers another host key (${offer.fingerprint}); check it and accept again`, {
      field: 'accept_host_key_change',
    });
  }
  setHostKeyApproval(db, id, { by: actor.principal.username, at: Date.now() });
}

/** The changed host key the device offered (and whether it is approved), for the device pages; scope-checked. */
export function getHostKeyChange(db: DB, scope: Scope, id: number): HostKeyOfferRow | null {
  requireDeviceInScope(db, scope, id);
  return getHostKeyOffer(db, id) ?? null;
}

/** Deletes the device and its backup records. */
export function deleteDevice(db: DB, actor: Actor, id: number): void {
  authorize(actor, DEVICE_OPS.delete);
  db.transaction(() => {
    requireDeviceInScope(db, actor.principal.scope, id);
    const before = loadDevice(db, id);
    deleteDeviceRow(db, id);
    recordAudit(db, actor, { action: 'device.delete', target: `device ${id}`, changes: removedFields(auditView(before)), details: { name: before.name } });
  }).immediate();
}

/** A deleted record's audited fields as before/after pairs (after: null). */
function removedFields(before: object): AuditChanges {
  const out: AuditChanges = {};
  for (const [k, v] of Object.entries(before)) out[k] = { before: v ?? null, after: null };
  return out;
}

/** The device reads a door offers (API, pages, CLI): the reader's own devices.view (DEVICE_OPS), then its scope. */
export function listDevicesFor(db: DB, reader: Principal, filter: DeviceFilter, page: number, limit: number): { items: Device[]; total: number } {
  authorize(reader, filter.reachability === 'unreachable' ? DEVICE_OPS.listUnreachable : DEVICE_OPS.list);
  return listDevices(db, reader.scope, filter, page, limit);
}

export function getDeviceFor(db: DB, reader: Principal, id: number): Device {
  authorize(reader, DEVICE_OPS.get);
  return getDevice(db, reader.scope, id);
}
