// Schema 0022 on a database holding users: every user, the id sequence, sessions, keys and the audit trail survive the
// rebuild that admits 'oidc'; a column the migration does not know stops it instead of being lost.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { loadMigrations, migrate } from '../../src/db/migrate';
import { openDatabase } from '../../src/db/open';
import { createApiKey } from '../../src/features/apikeys/apikeys.service';
import { recordAnonymousAudit } from '../../src/features/audit/audit.service';
import { ensureBuiltinRoles } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { tempDir } from '../helpers/appliance';
import { rawScript } from '../helpers/seed';

const root = tempDir('confvault-m0022-');
after(() => rmSync(root, { recursive: true, force: true }));
const all = loadMigrations();
const upTo = (v: number) => all.filter((m) => m.version <= v);

test('users, their id sequence, keys and the audit trail survive; source "oidc" and door "oidc" become possible', async () => {
  const file = path.join(root, 'users.db');
  const db = openDatabase(file);
  migrate(db, file, upTo(21));
  ensureBuiltinRoles(db);
  await createUser(db, SYSTEM_ACTOR, { username: 'ann', password: 'ann-password-123', role: 'administrator', groups: null, timezone: null });
  await createUser(db, SYSTEM_ACTOR, { username: 'zed', password: 'zed-password-123', role: 'administrator', groups: null, timezone: null });
  createApiKey(db, SYSTEM_ACTOR, { username: 'ann' });
  rawScript(db, 'no service deletes a user; the highest id goes', "DELETE FROM users WHERE username = 'zed'");
  recordAnonymousAudit(db, { actorName: 'x', door: 'ldap', action: 'login.failure', target: 'address 1' });
  const users = db.prepare('SELECT * FROM users ORDER BY id').all();
  const audit = db.prepare('SELECT * FROM audit_log ORDER BY id').all();
  const seq = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'users'").pluck().get() as number;

  migrate(db, file, upTo(22));
  assert.deepEqual(db.prepare('SELECT * FROM users ORDER BY id').all(), users);
  assert.deepEqual(db.prepare('SELECT * FROM audit_log ORDER BY id').all(), audit);
  assert.equal(db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'users'").pluck().get(), seq, 'a deleted id is never handed out again');
  assert.equal(db.prepare("SELECT count(*) FROM api_keys k JOIN users u ON u.id = k.user_id WHERE u.username = 'ann'").pluck().get(), 1);
  assert.deepEqual(db.pragma('foreign_key_check'), []);
  const names = db.prepare("SELECT name FROM sqlite_schema WHERE tbl_name = 'users' AND sql IS NOT NULL AND type != 'table' ORDER BY name").pluck().all();
  assert.deepEqual(names, ['auth_epoch_users_delete', 'auth_epoch_users_insert', 'auth_epoch_users_update', 'users_username_key']);
  rawScript(db, 'an OIDC user', "UPDATE users SET source = 'oidc' WHERE username = 'ann'");
  recordAnonymousAudit(db, { actorName: 'ann', door: 'oidc', action: 'login.success', target: 'address 1' });
  db.close();
});

test('a users column the migration does not know stops it, and nothing is lost', () => {
  const file = path.join(root, 'extra.db');
  const db = openDatabase(file);
  migrate(db, file, upTo(21));
  rawScript(db, 'a column added by a migration written meanwhile', 'ALTER TABLE users ADD COLUMN nickname TEXT');
  assert.throws(() => migrate(db, file, upTo(22)), /0022 would drop a column/);
  assert.ok(db.prepare("SELECT count(*) FROM pragma_table_info('users') WHERE name = 'nickname'").pluck().get());
  db.close();
});
