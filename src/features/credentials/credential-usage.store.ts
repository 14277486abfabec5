// Queries for a credential's usage scope: the groups whose devices may use it, and whether a device's group is covered.
import type { DB } from '../../db/open';
import { prepareCached } from '../../db/statements';

/** null: usable by devices anywhere; otherwise the groups (subgroups included) whose devices may use it. */
export type UsageGroups = number[] | null;

export function getUsageGroups(db: DB, credentialId: number): UsageGroups {
  const restricted = prepareCached(db, 'SELECT 1 AS one FROM credential_usage_scopes WHERE credential_id = ?').get(credentialId) !== undefined;
  if (!restricted) return null;
  const rows = prepareCached(db, 'SELECT group_id FROM credential_usage_groups WHERE credential_id = ? ORDER BY group_id').all(credentialId) as {
    group_id: number;
  }[];
  return rows.map((r) => r.group_id);
}

/** The usage groups of many credentials at once (for a list page): absent from the map means unrestricted. */
export function getUsageGroupsOf(db: DB, credentialIds: readonly number[]): Map<number, number[]> {
  const out = new Map<number, number[]>();
  if (credentialIds.length === 0) return out;
  const rows = prepareCached(
    db,
    `SELECT s.credential_id, u.group_id FROM credential_usage_scopes s
       LEFT JOIN credential_usage_groups u ON u.credential_id = s.credential_id
      WHERE s.credential_id IN (SELECT value FROM json_each(?)) ORDER BY s.credential_id, u.group_id`,
  ).all(JSON.stringify(credentialIds)) as { credential_id: number; group_id: number | null }[];
  for (const r of rows) {
    const list = out.get(r.credential_id) ?? [];
    if (r.group_id !== null) list.push(r.group_id);
    out.set(r.credential_id, list);
  }
  return out;
}

export function setUsageGroups(db: DB, credentialId: number, groups: UsageGroups): void {
  prepareCached(db, 'DELETE FROM credential_usage_scopes WHERE credential_id = ?').run(credentialId);
  if (groups === null) return;
  prepareCached(db, 'INSERT INTO credential_usage_scopes (credential_id) VALUES (?)').run(credentialId);
  const add = prepareCached(db, 'INSERT OR IGNORE INTO credential_usage_groups (credential_id, group_id) VALUES (?, ?)');
  for (const g of groups) add.run(credentialId, g);
}

/**
 * Whether a device in `groupId` (null: ungrouped) may use the credential: it is unrestricted, or the group or
 * one of its ancestors is among its usage groups. Ungrouped devices may use unrestricted credentials only.
 */
export function credentialCoversGroup(db: DB, credentialId: number, groupId: number | null): boolean {
  const row = prepareCached(
    db,
    `SELECT CASE
       WHEN NOT EXISTS (SELECT 1 FROM credential_usage_scopes WHERE credential_id = @c) THEN 1
       WHEN @g IS NULL THEN 0
       ELSE EXISTS (
         WITH RECURSIVE up(id, depth) AS (
           SELECT @g, 0 UNION SELECT g.parent_id, up.depth + 1 FROM device_groups g JOIN up ON g.id = up.id
            WHERE g.parent_id IS NOT NULL AND up.depth < 64)
         SELECT 1 FROM credential_usage_groups u WHERE u.credential_id = @c AND u.group_id IN (SELECT id FROM up))
     END AS ok`,
  ).get({ c: credentialId, g: groupId }) as { ok: number };
  return row.ok === 1;
}

/** Devices using the credential whose group its usage scope would no longer cover. */
export function devicesOutsideUsage(db: DB, credentialId: number): { id: number; name: string; group_id: number | null }[] {
  const devices = prepareCached(db, 'SELECT id, name, group_id FROM devices WHERE credential_id = ? ORDER BY id').all(credentialId) as {
    id: number;
    name: string;
    group_id: number | null;
  }[];
  return devices.filter((d) => !credentialCoversGroup(db, credentialId, d.group_id));
}

export function groupsExisting(db: DB, ids: readonly number[]): Set<number> {
  const rows = prepareCached(db, 'SELECT id FROM device_groups WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(ids)) as { id: number }[];
  return new Set(rows.map((r) => r.id));
}

/** Devices using the credential whose group is not among `groupIds` (ungrouped devices count as outside). */
export function countCredentialDevicesOutside(db: DB, credentialId: number, groupIds: readonly number[]): number {
  const row = prepareCached(
    db,
    `SELECT count(*) AS n FROM devices WHERE credential_id = ?
       AND (group_id IS NULL OR group_id NOT IN (SELECT value FROM json_each(?)))`,
  ).get(credentialId, JSON.stringify(groupIds)) as { n: number };
  return row.n;
}
