// Schema 0028 on a database with backups: each device gets its last backup's start and outcome from the record it names,
// so the list's "by last backup" order and "failed only" filter are right from the first start after the upgrade.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { loadMigrations, migrate } from '../../src/db/migrate';
import { openDatabase } from '../../src/db/open';
import { countDevices, getDeviceViewRow, listDeviceViewRows } from '../../src/features/devices/devices.store';
import { SCOPE_ALL } from '../../src/identity/principal';
import { tempDir } from '../helpers/appliance';
import { rawScript, seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';

const root = tempDir('confvault-m0028-');
after(() => rmSync(root, { recursive: true, force: true }));
const all = loadMigrations();
const upTo = (v: number) => all.filter((m) => m.version <= v);

test('the last backup named by each device is copied onto it; a device never backed up keeps nulls', () => {
  const file = path.join(root, 'devices.db');
  const db = openDatabase(file);
  migrate(db, file, upTo(27));
  const tpl = seedBuiltinTemplate(db, 'frr');
  const cred = seedCredential(db, null, {});
  const dev = (name: string) => seedDevice(db, { name, port: 22, credential_id: cred, template_id: tpl });
  const ok = dev('ok-dev');
  const failed = dev('failed-dev');
  const never = dev('never-dev');
  rawScript(
    db,
    'backup records as the code of schema 0027 left them (its store cannot run on 0028)',
    `INSERT INTO backups (id, device_id, template_id, trigger, started_at, finished_at, success) VALUES
       ('b1', ${ok}, ${tpl}, 'schedule', 1000, 2000, 0), ('b2', ${ok}, ${tpl}, 'schedule', 3000, 4000, 1),
       ('b3', ${failed}, ${tpl}, 'schedule', 5000, 6000, 1), ('b4', ${failed}, ${tpl}, 'schedule', 7000, 8000, 0);
     UPDATE devices SET last_backup_id = 'b2' WHERE id = ${ok};
     UPDATE devices SET last_backup_id = 'b4' WHERE id = ${failed};`,
  );
  migrate(db, file, upTo(28));
  const row = (id: number) => {
    const r = getDeviceViewRow(db, id)!;
    return [r.last_backup_id, r.last_backup_started_at, r.last_backup_success];
  };
  assert.deepEqual(row(ok), ['b2', 3000, 1]);
  assert.deepEqual(row(failed), ['b4', 7000, 0]);
  assert.deepEqual(row(never), [null, null, null]);
  assert.equal(countDevices(db, SCOPE_ALL, { last_failed: true }), 1);
  const byLast = listDeviceViewRows(db, SCOPE_ALL, {}, 0, 10, { sort: 'last_backup', desc: true }).map((d) => d.name);
  assert.deepEqual(byLast, ['failed-dev', 'ok-dev', 'never-dev']);
  db.close();
});
