// Every permission-guarded operation, collected from each feature's policy entries: the table the doors and the matrix test read.
import type { Operation } from '../identity/policy';
import { APIKEY_OPS } from './apikeys/apikeys.policy';
import { AUDIT_OPS } from './audit/audit.policy';
import { BACKUP_OPS } from './backups/backups.policy';
import { COLLECTOR_OPS } from './collectors/collectors.policy';
import { COMPLIANCE_OPS } from './compliance/compliance.policy';
import { CREDENTIAL_OPS } from './credentials/credentials.policy';
import { DEVICE_OPS } from './devices/devices.policy';
import { GROUP_OPS } from './groups/groups.policy';
import { INVENTORY_OPS } from './inventory/inventory.policy';
import { NOTIFICATION_OPS } from './notifications/notifications.policy';
import { ROLE_OPS } from './roles/roles.policy';
import { STATS_OPS } from './stats/stats.policy';
import { TEMPLATE_OPS } from './templates/templates.policy';
import { USER_OPS } from './users/users.policy';

export {
  APIKEY_OPS,
  AUDIT_OPS,
  BACKUP_OPS,
  COLLECTOR_OPS,
  COMPLIANCE_OPS,
  CREDENTIAL_OPS,
  DEVICE_OPS,
  GROUP_OPS,
  INVENTORY_OPS,
  NOTIFICATION_OPS,
  ROLE_OPS,
  STATS_OPS,
  TEMPLATE_OPS,
  USER_OPS,
};
export { BUILTIN_ROLES } from './roles/roles.policy';

const FEATURES = [
  DEVICE_OPS,
  GROUP_OPS,
  CREDENTIAL_OPS,
  TEMPLATE_OPS,
  BACKUP_OPS,
  COMPLIANCE_OPS,
  STATS_OPS,
  AUDIT_OPS,
  NOTIFICATION_OPS,
  INVENTORY_OPS,
  APIKEY_OPS,
  USER_OPS,
  ROLE_OPS,
  COLLECTOR_OPS,
];

/** The whole table, one entry per operation id. */
export const OPERATIONS: readonly Operation[] = oncePerId(FEATURES.flatMap((ops) => Object.values<Operation>(ops)));

function oncePerId(ops: Operation[]): Operation[] {
  const ids = new Set<string>();
  for (const op of ops) {
    if (ids.has(op.id)) throw new Error(`operation ${op.id} is declared twice`);
    ids.add(op.id);
  }
  return ops;
}
