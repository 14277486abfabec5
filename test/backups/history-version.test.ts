// A device's history version (the history-page cache key) moves on an update of any column of a backup row.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { finishBackup, startBackup } from '../../src/features/backups/backup-record.service';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { rawState, seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';

let t: TestAppliance;
before(async () => {
  t = await startTestAppliance();
});
after(() => t.close());

test('updating any column of a backup row, one that a future DTO field may show included, gives the history a new version', async () => {
  const { db, secrets, snapshots } = t.services;
  const deviceId = seedDevice(db, {
    name: 'hv1',
    port: 22,
    credential_id: seedCredential(db, secrets, { name: 'hv', username: 'u' }),
    template_id: seedBuiltinTemplate(db, 'cisco-ios'),
  });
  const started = startBackup(db, deviceId, null, 'manual');
  await finishBackup(db, snapshots, started, { ok: true, text: 'hostname hv1\n', ignorePatterns: [] });
  const version = () => db.prepare('SELECT version FROM device_backup_counts WHERE device_id = ?').pluck().get(deviceId);
  const columns = (db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('backups') as string[]).filter((c) => c !== 'device_id');
  assert.ok(columns.includes('changed') && columns.includes('failure_type'), columns.join(', '));
  for (const column of columns) {
    const before = version();
    // Setting a column to its own value still fires an AFTER UPDATE trigger: what matters is that it fires at all.
    rawState(db, 'an update of each column in turn: no one service writes them all', `UPDATE backups SET "${column}" = "${column}" WHERE id = ?`, started.id);
    assert.notEqual(version(), before, `an update of backups.${column} left the history version unchanged`);
  }
});
