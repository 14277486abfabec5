// The CLI's user changes (passwd, disable, set-role, set-scope) end the user's live web sessions and are audited as the CLI door.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser, setUserDisabled } from '../../src/features/users/users.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { runCliAsync, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedGroup } from '../helpers/seed';
import { WebClient } from '../web/web-client';

describe('CLI user changes end web sessions', () => {
  let t: TestAppliance;
  let group = 0;
  let password = 'victim-password-1';
  const cli = (args: string[], input = '') => runCliAsync([...args, '--data-dir', path.join(t.dir, 'data')], { input });
  const lastAudit = (action: string) =>
    t.services.db.prepare("SELECT * FROM audit_log WHERE action = ? AND target = 'user vic' ORDER BY id DESC LIMIT 1").get(action) as
      { actor: string; door: string; door_ref: string | null; changes: string; details: string } | undefined;

  before(async () => {
    t = await startTestAppliance();
    group = seedGroup(t.services.db, 'Alpha');
    createRole(t.services.db, SYSTEM_ACTOR, { name: 'reader', permissions: ['devices.view', 'dashboard.view'] });
    createRole(t.services.db, SYSTEM_ACTOR, { name: 'reader2', permissions: ['devices.view', 'dashboard.view'] });
    await createUser(t.services.db, SYSTEM_ACTOR, { username: 'vic', password, role: 'reader' });
  });
  after(() => t.close());

  const loggedIn = async (): Promise<WebClient> => {
    const w = new WebClient(t.url);
    assert.equal((await w.login('vic', password)).status, 303);
    assert.equal((await w.fetch('/devices')).status, 200);
    return w;
  };

  const cases: { name: string; args: () => string[]; input?: () => string; action: string; after?: () => void }[] = [
    {
      name: 'passwd',
      args: () => ['user', 'passwd', 'vic', '--password-stdin'],
      input: () => 'victim-password-2\n',
      action: 'user.password_reset',
      after: () => (password = 'victim-password-2'),
    },
    { name: 'set-role', args: () => ['user', 'set-role', 'vic', 'reader2'], action: 'user.update' },
    { name: 'set-scope', args: () => ['user', 'set-scope', 'vic', String(group)], action: 'user.update' },
    {
      name: 'disable',
      args: () => ['user', 'disable', 'vic'],
      action: 'user.disable',
      after: () => setUserDisabled(t.services.db, SYSTEM_ACTOR, 'vic', false),
    },
  ];
  for (const c of cases) {
    test(`user ${c.name} ends the live session, with an audit row of the CLI door`, async () => {
      const w = await loggedIn();
      const sessions = () =>
        t.services.db.prepare("SELECT count(*) FROM web_sessions s JOIN users u ON u.id = s.user_id WHERE u.username = 'vic'").pluck().get() as number;
      assert.ok(sessions() >= 1);
      const r = await cli(c.args(), c.input?.() ?? '');
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stderr, /web sessions have ended/);
      assert.equal(sessions(), 0, 'no session of the user is left');
      const next = await w.fetch('/devices');
      assert.equal(next.status, 303, 'the old cookie is sent to the login page');
      assert.match(next.headers.get('location') ?? '', /^\/login/);
      const row = lastAudit(c.action);
      assert.ok(row, `an audit row ${c.action}`);
      assert.equal(row.door, 'cli');
      assert.ok(row.door_ref, 'the OS user is recorded');
      assert.doesNotMatch(JSON.stringify(row), /victim-password/);
      c.after?.();
    });
  }
});
