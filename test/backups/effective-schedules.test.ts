// Each enabled device's effective schedule (own, else the nearest group's up the tree, else the appliance's), as the
// scheduler fires it: a fixed tree with every kind of inheritance, and a random tree checked against a walk up the parents.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { migrate } from '../../src/db/migrate';
import { openDatabase, type DB } from '../../src/db/open';
import { effectiveSchedules, scheduleReader } from '../../src/features/backups/backup-engine.service';
import { createGroup, deleteGroup, updateGroup } from '../../src/features/groups/groups.service';
import { deleteDevice, updateDevice } from '../../src/features/devices/devices.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { SecretBox } from '../../src/identity/secrets';
import { tempDir } from '../helpers/appliance';
import { createTestDevice, seedBuiltinTemplate, seedCredential } from '../helpers/seed';

const GLOBAL = '0 2 * * *';

function freshDb(): { db: DB; refs: { credential_id: number; template_id: number } } {
  const file = path.join(tempDir('confvault-sched-'), 'confvault.db');
  const db = openDatabase(file);
  migrate(db, file);
  const secrets = new SecretBox(randomBytes(32));
  return { db, refs: { credential_id: seedCredential(db, secrets, { name: 'c', username: 'u', password: 'p' }), template_id: seedBuiltinTemplate(db, 'frr') } };
}

const group = (db: DB, name: string, parent_id: number | null, schedule: string | null) =>
  createGroup(db, SYSTEM_ACTOR, { name, parent_id, description: '', schedule }).id;

/** The map sorted for comparison: schedule → sorted ids. */
const sorted = (m: ReadonlyMap<string, readonly number[]>) =>
  Object.fromEntries([...m].map(([k, v]) => [k, [...v].sort((a, b) => a - b)]).sort(([a], [b]) => (a < b ? -1 : 1)));

test('effective schedules: own first, then the nearest group up the tree, then the appliance; disabled devices left out', () => {
  const { db, refs } = freshDb();
  try {
    const region = group(db, 'region', null, '0 1 * * *');
    const site = group(db, 'site', region, null);
    const closet = group(db, 'closet', site, '30 3 * * *');
    const shelf = group(db, 'shelf', closet, null);
    const bare = group(db, 'bare', null, null);
    const bareChild = group(db, 'bare-child', bare, null);
    const dev = (name: string, group_id: number | null, extra: { schedule?: string | null; enabled?: boolean } = {}) =>
      createTestDevice(db, refs, name, { group_id, ...extra }).id;
    const ungrouped = dev('ungrouped', null);
    const own = dev('own', shelf, { schedule: '15 4 * * *' });
    const inRegion = dev('in-region', region);
    const inSite = dev('in-site', site);
    const inCloset = dev('in-closet', closet);
    const inShelf = dev('in-shelf', shelf);
    const inBare = dev('in-bare', bareChild);
    dev('disabled', closet, { enabled: false });
    dev('disabled-own', null, { schedule: '0 5 * * *', enabled: false });

    assert.deepEqual(sorted(effectiveSchedules(db, GLOBAL)), {
      '0 1 * * *': [inRegion, inSite],
      '0 2 * * *': [ungrouped, inBare],
      '15 4 * * *': [own],
      '30 3 * * *': [inCloset, inShelf],
    });

    // A change up the tree reaches every device below it that has nothing nearer; a device's own schedule wins.
    updateGroup(db, SYSTEM_ACTOR, closet, { schedule: null });
    updateGroup(db, SYSTEM_ACTOR, bare, { schedule: '0 6 * * *' });
    updateDevice(db, SYSTEM_ACTOR, inSite, { schedule: '0 7 * * *' });
    assert.deepEqual(sorted(effectiveSchedules(db, GLOBAL)), {
      '0 1 * * *': [inRegion, inCloset, inShelf],
      '0 2 * * *': [ungrouped],
      '0 6 * * *': [inBare],
      '0 7 * * *': [inSite],
      '15 4 * * *': [own],
    });
  } finally {
    db.close();
  }
});

test("effective schedules of a random tree equal a walk up each device's parents", () => {
  const { db, refs } = freshDb();
  try {
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const groups: { id: number; parent: number | null; schedule: string | null }[] = [];
    for (let i = 0; i < 60; i++) {
      const parent = groups.length && rand(4) ? groups[rand(groups.length)].id : null;
      const schedule = rand(4) === 0 ? `${i} 1 * * *` : null;
      groups.push({ id: group(db, `g${i}`, parent, schedule), parent, schedule });
    }
    const byId = new Map(groups.map((g) => [g.id, g]));
    const expected = new Map<string, number[]>();
    for (let i = 0; i < 400; i++) {
      const groupId = rand(5) ? groups[rand(groups.length)].id : null;
      const schedule = rand(6) === 0 ? `${i % 60} 9 * * *` : null;
      const enabled = rand(10) !== 0;
      const id = createTestDevice(db, refs, `d${i}`, { group_id: groupId, schedule, enabled }).id;
      if (!enabled) continue;
      let expr = schedule;
      for (let g = groupId; expr === null && g !== null; g = byId.get(g)!.parent) expr = byId.get(g)!.schedule;
      expr ??= GLOBAL;
      expected.set(expr, [...(expected.get(expr) ?? []), id]);
    }
    assert.deepEqual(sorted(effectiveSchedules(db, GLOBAL)), sorted(expected));
  } finally {
    db.close();
  }
});

test("the scheduler's reader reads again after each change its answer depends on, and only then", () => {
  const { db, refs } = freshDb();
  try {
    const read = scheduleReader(db, GLOBAL);
    const region = group(db, 'region', null, null);
    const site = group(db, 'site', region, null);
    const a = createTestDevice(db, refs, 'a', { group_id: site }).id;
    const b = createTestDevice(db, refs, 'b', { group_id: null }).id;
    let before = read();
    assert.deepEqual(sorted(before), { [GLOBAL]: [a, b] });
    // Each change that moves a device to another schedule is seen at the next read; the reader equals a fresh computation.
    const changes: [string, () => void][] = [
      ['group schedule', () => updateGroup(db, SYSTEM_ACTOR, region, { schedule: '0 1 * * *' })],
      ['group parent', () => updateGroup(db, SYSTEM_ACTOR, site, { parent_id: null })],
      ['device schedule', () => updateDevice(db, SYSTEM_ACTOR, b, { schedule: '0 7 * * *' })],
      ['device group', () => updateDevice(db, SYSTEM_ACTOR, a, { group_id: region })],
      ['device disabled', () => updateDevice(db, SYSTEM_ACTOR, a, { enabled: false })],
      ['device added', () => createTestDevice(db, refs, 'c', { group_id: region })],
      ['device deleted', () => deleteDevice(db, SYSTEM_ACTOR, b)],
      ['group deleted', () => deleteGroup(db, SYSTEM_ACTOR, site)],
    ];
    for (const [what, change] of changes) {
      change();
      const now = read();
      assert.notEqual(now, before, `${what}: read again`);
      assert.deepEqual(sorted(now), sorted(effectiveSchedules(db, GLOBAL)), what);
      before = now;
    }
    // A change nothing here depends on (a description) is no reason to read 100,000 rows again.
    updateDevice(db, SYSTEM_ACTOR, a, { description: 'moved to rack 4' });
    assert.equal(read(), before);
  } finally {
    db.close();
  }
});
