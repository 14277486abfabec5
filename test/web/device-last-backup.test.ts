// The device list's "by last backup" order and "failed only" filter follow each device's newest backup as it is recorded, and read no backup record.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { finishBackupSync, startBackup } from '../../src/features/backups/backup-record.service';
import { explainDeviceList, listDeviceViewRows } from '../../src/features/devices/devices.store';
import { SCOPE_ALL } from '../../src/identity/principal';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { WebClient } from './web-client';

/** The device names of a list page, in order. */
const names = (html: string) => [...html.matchAll(/<a href="\/devices\/\d+">([^<]+)<\/a>/g)].map((m) => m[1]);

describe('device list by last backup and failed only', () => {
  let t: TestAppliance;
  let admin: WebClient;
  const ids: Record<string, number> = {};
  let tpl = 0;
  const backup = (name: string, at: number, ok: boolean) => {
    const { db, snapshots } = t.services;
    const s = startBackup(db, ids[name], tpl, 'schedule', at);
    finishBackupSync(
      db,
      snapshots,
      s,
      ok ? { ok: true, text: `hostname ${name}\n`, ignorePatterns: [] } : { ok: false, failure: 'TIMEOUT', message: 'no answer' },
      at + 1000,
    );
  };
  before(async () => {
    t = await startTestAppliance();
    const { db, secrets } = t.services;
    const g = seedGroup(db, 'core');
    const cred = seedCredential(db, secrets, { name: 'c', username: 'u', password: 'p' });
    tpl = seedBuiltinTemplate(db, 'frr');
    for (const name of ['a-old', 'b-new', 'c-never', 'd-tie', 'e-tie', 'f-never'])
      ids[name] = seedDevice(db, { name, hostname: `${name}.example.net`, port: 22, credential_id: cred, template_id: tpl, group_id: g });
    const now = Date.now();
    backup('a-old', now - 50_000, false);
    backup('b-new', now - 10_000, true);
    backup('d-tie', now - 30_000, false);
    backup('e-tie', now - 30_000, true);
    admin = new WebClient(t.url);
    assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
  });
  after(() => t.close());

  test('sorted by last backup: newest first, ties by name, never backed up last in either direction', async () => {
    assert.deepEqual(names((await admin.get('/devices?sort=last_backup&dir=desc')).html), ['b-new', 'e-tie', 'd-tie', 'a-old', 'f-never', 'c-never']);
    assert.deepEqual(names((await admin.get('/devices?sort=last_backup')).html), ['a-old', 'd-tie', 'e-tie', 'b-new', 'c-never', 'f-never']);
  });

  test('failed only lists the devices whose newest backup failed, and follows the next backup of each', async () => {
    assert.deepEqual(names((await admin.get('/devices?failed=1')).html), ['a-old', 'd-tie']);
    const now = Date.now();
    backup('a-old', now - 5_000, true);
    backup('b-new', now - 4_000, false);
    backup('c-never', now - 3_000, false);
    assert.deepEqual(names((await admin.get('/devices?failed=1')).html), ['b-new', 'c-never', 'd-tie']);
    assert.deepEqual(names((await admin.get('/devices?sort=last_backup&dir=desc')).html), ['c-never', 'b-new', 'a-old', 'e-tie', 'd-tie', 'f-never']);
  });

  test('every page cut, across the boundary to the devices never backed up, continues the same order', () => {
    const { db } = t.services;
    for (const desc of [true, false]) {
      const full = listDeviceViewRows(db, SCOPE_ALL, {}, 0, 100, { sort: 'last_backup', desc }).map((d) => d.name);
      assert.equal(full.length, 6);
      assert.equal(full[5], 'f-never');
      for (let limit = 1; limit <= 3; limit++)
        for (let offset = 0; offset <= 7; offset++) {
          const page = listDeviceViewRows(db, SCOPE_ALL, {}, offset, limit, { sort: 'last_backup', desc }).map((d) => d.name);
          assert.deepEqual(page, full.slice(offset, offset + limit), `desc ${desc}, offset ${offset}, limit ${limit}`);
        }
    }
  });

  test('neither the order nor the filter reads a backup record (100,000 lookups at 100,000 devices)', () => {
    const { db } = t.services;
    const sorted = explainDeviceList(db, SCOPE_ALL, { retired: false }, { sort: 'last_backup', desc: true }).join('; ');
    assert.doesNotMatch(sorted, /backups|TEMP B-TREE/, 'the index gives the order: no sort of every device');
    const failed = explainDeviceList(db, SCOPE_ALL, { retired: false, last_failed: true }).join('; ');
    assert.doesNotMatch(failed, /backups/);
    assert.match(failed, /devices_last_failed/);
  });
});
