// Logins in inventory files (issue #29): CSV login columns and router.db login fields become encrypted credentials, only where asked.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { getCredential, getDecryptedCredential } from '../../src/features/credentials/credentials.service';
import { applyDeviceImport } from '../../src/features/devices/devices-import.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { runCliAsync, startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { seedCredential, seedGroup } from '../helpers/seed';

const SECRETS = ['Csv-Pw-1111', 'Csv-En-2222', 'Rdb-Pw-3333', 'Rdb-En-4444', 'Rdb-Pw-5555', 'Other-Pw-6666', 'never-used-default'];
let t: TestAppliance;
let dir = '';
let data: string[] = [];
let branch = 0;

before(async () => {
  t = await startTestAppliance();
  data = ['--data-dir', t.services.dataDir];
  dir = tempDir();
  seedCredential(t.services.db, t.services.secrets, { name: 'fallback', username: 'u', password: 'fallback-pw' });
  seedGroup(t.services.db, 'core');
  branch = seedGroup(t.services.db, 'branch');
});
after(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

async function cli(args: string[]) {
  const r = await runCliAsync([...args, ...data]);
  for (const s of SECRETS) assert.ok(!r.stdout.includes(s) && !r.stderr.includes(s), `secret printed by ${args.join(' ')}`);
  return r;
}

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

const credentialOf = (device: string) => t.services.db.prepare('SELECT credential_id FROM devices WHERE name = ?').pluck().get(device) as number;
const credentialCount = () => t.services.db.prepare('SELECT count(*) FROM credentials').pluck().get() as number;
const login = (id: number) => {
  const c = getDecryptedCredential(t.services.db, t.services.secrets, id)!;
  return [c.username, c.password, c.enable_secret];
};

test('CSV login columns: a named credential is created once and reused; equal unnamed logins in a group share one', async () => {
  const csv = file(
    'logins.csv',
    [
      'name,hostname,group,template,credential,username,password,enable_secret',
      `c1,192.0.2.1,core,cisco-ios,core-admin,admin,${SECRETS[0]},${SECRETS[1]}`,
      `c2,192.0.2.2,core,cisco-ios,core-admin,admin,${SECRETS[0]},${SECRETS[1]}`,
      `b1,192.0.2.3,branch,cisco-ios,,netops,${SECRETS[2]},`,
      `b2,192.0.2.4,branch,cisco-ios,,netops,${SECRETS[2]},`,
      `c3,192.0.2.5,core,cisco-ios,core-admin,admin,${SECRETS[5]},`,
    ].join('\n'),
  );
  const r = await cli(['device', 'import', csv, '--mode', 'valid']);
  assert.equal(r.status, 1, 'the last row is refused');
  assert.match(r.stderr, /row 6: credential: credential "core-admin" exists with another login/);
  assert.equal(credentialOf('c1'), credentialOf('c2'));
  assert.deepEqual(login(credentialOf('c1')), ['admin', SECRETS[0], SECRETS[1]]);
  assert.equal(credentialOf('b1'), credentialOf('b2'), 'deduplicated by value');
  const shared = getCredential(t.services.db, credentialOf('b1'));
  assert.equal(shared.name, 'netops@branch');
  assert.deepEqual(shared.group_ids, [branch], 'usable by the device’s group only');

  const again = await cli([
    'device',
    'import',
    file('more.csv', `name,hostname,group,template,username,password\nb3,192.0.2.6,branch,cisco-ios,netops,${SECRETS[2]}\n`),
  ]);
  assert.equal(again.status, 0, again.stderr);
  assert.equal(credentialOf('b3'), credentialOf('b1'), 'a later import reuses the credential holding the same login');
});

test('a router.db with per-device logins: ignored without --logins, imported as encrypted credentials with it', async () => {
  const lines = [
    `r1:192.0.2.11:ios:backup:${SECRETS[2]}:${SECRETS[3]}`,
    `r2:192.0.2.12:ios:backup:${SECRETS[2]}:${SECRETS[3]}`,
    `r3:192.0.2.13:ios:ops:${SECRETS[4]}:`,
  ];
  const fields = ['--fields', 'name:ip:model:username:password:enable'];
  const before = credentialCount();
  const refused = await cli(['device', 'import', file('router.db', lines.join('\n')), ...fields]);
  assert.equal(refused.status, 1, 'without --logins and --credential there is no login to use');
  assert.match(refused.stderr, /needs one credential/);
  const plain = await cli(['device', 'import', file('router.db', lines.join('\n')), ...fields, '--credential', 'fallback', '--dry-run']);
  assert.equal(plain.status, 0, plain.stderr);
  assert.equal(credentialCount(), before, 'the logins were not read');

  const withLogins = await cli(['device', 'import', file('router.db', lines.join('\n')), ...fields, '--logins']);
  assert.equal(withLogins.status, 0, withLogins.stderr);
  assert.equal(credentialCount(), before + 2, 'two distinct logins, two credentials');
  assert.equal(credentialOf('r1'), credentialOf('r2'));
  assert.deepEqual(login(credentialOf('r1')), ['backup', SECRETS[2], SECRETS[3]]);
  assert.equal(getCredential(t.services.db, credentialOf('r3')).name, 'ops@anywhere');
  const stored = t.services.db.prepare('SELECT password_enc FROM credentials WHERE id = ?').pluck().get(credentialOf('r3')) as Buffer;
  assert.ok(!stored.toString('latin1').includes(SECRETS[4]), 'stored encrypted');
});

test('the web and API doors (no secret box) refuse a file with login cells rather than drop or store them', () => {
  assert.throws(
    () =>
      applyDeviceImport(t.services.db, SYSTEM_ACTOR, { format: 'csv', text: `name,hostname,template,password\nw1,192.0.2.9,cisco-ios,${SECRETS[0]}\n` }, 'all'),
    /logins are imported with confvault device import/,
  );
});

test('a RANCID router.db with a .cloginrc: with --logins its add user / add password / add method lines give each device its login', async () => {
  const cloginrc = file(
    'cloginrc',
    [
      '# RANCID clogin configuration',
      'add method rt-edge* {ssh} {telnet}',
      'add method * {telnet}',
      'add user rt-* rancid',
      `add password rt-edge* {${SECRETS[5]}} {${SECRETS[3]}}`,
      'add password * {never-used-default}',
      'add autoenable * 0',
    ].join('\n'),
  );
  const routerDb = file('rancid-router.db', 'rt-edge1;cisco;up\nrt-core1;cisco;up;core switch\n');
  const args = ['device', 'import', routerDb, '--format', 'router.db', '--fields', 'name:model:skip', '--cloginrc', cloginrc];
  assert.equal((await cli(args)).status, 2, '--cloginrc without --logins is a usage error: logins are read only when asked');
  const r = await cli([...args, '--logins']);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(login(credentialOf('rt-edge1')), ['rancid', SECRETS[5], SECRETS[3]]);
  assert.deepEqual(login(credentialOf('rt-core1')), ['rancid', 'never-used-default', null]);
  const protocol = (n: string) => t.services.db.prepare('SELECT protocol FROM devices WHERE name = ?').pluck().get(n);
  assert.equal(protocol('rt-edge1'), 'ssh');
  assert.equal(protocol('rt-core1'), 'telnet');
});

test('a refused row leaves no credential behind, and a later row with the same login still gets one', async () => {
  const before = credentialCount();
  const csv = file(
    'refused.csv',
    [
      'name,hostname,group,template,username,password',
      `x1,192.0.2.31,core,no-such-template,lonely,${SECRETS[5]}`,
      `x2,192.0.2.32,core,cisco-ios,lonely,${SECRETS[5]}`,
      `x3,192.0.2.33,core,no-such-template,solo,${SECRETS[4]}`,
    ].join('\n'),
  );
  const r = await cli(['device', 'import', csv, '--mode', 'valid']);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /row 2: template:/);
  assert.equal(credentialCount(), before + 1, 'only the valid row’s credential: none for the refused rows');
  assert.equal(getCredential(t.services.db, credentialOf('x2')).name, 'lonely@core');
});
