// Active Directory specifics of directory sign-in against a real slapd given AD's attributes: sAMAccountName,
// userAccountControl's disabled bit, group_search = "in_chain" (which OpenLDAP cannot evaluate: the member walk
// answers), referrals ignored with a log line, a referral for the base itself, and a directory that never answers.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { ldapSchema } from '../../src/config/ldap-config';
import { DirectoryUnavailableError, lookupDirectoryUser } from '../../src/features/directory/directory.ldap';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { SUFFIX, slapdUnavailable, startSlapd, type TestSlapd } from '../helpers/slapd';
import { passwordStep } from '../helpers/totp';
import { WebClient } from './web-client';

const PEOPLE = `ou=people,${SUFFIX}`;
const GROUPS = `ou=groups,${SUFFIX}`;
const BRANCH_URL = 'ldap://branch.example.org/ou=branch,dc=example,dc=org';

// AD's own OIDs for its two attributes; the auxiliary class is this test's (AD puts them on its structural "user").
const AD_SCHEMA = `attributetype ( 1.2.840.113556.1.4.8 NAME 'userAccountControl' EQUALITY integerMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )
attributetype ( 1.2.840.113556.1.4.221 NAME 'sAMAccountName' EQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
objectclass ( 1.3.6.1.4.1.32473.1.1 NAME 'testAdAccount' AUXILIARY MAY ( userAccountControl $ sAMAccountName ) )
`;
const person = (sam: string, pw: string, uac: number) =>
  `dn: cn=${sam},${PEOPLE}\nobjectClass: inetOrgPerson\nobjectClass: testAdAccount\ncn: ${sam}\nsn: ${sam}\nsAMAccountName: ${sam}\nuserAccountControl: ${uac}\nuserPassword: ${pw}\n\n`;
const group = (cn: string, members: string[]) =>
  `dn: cn=${cn},${GROUPS}\nobjectClass: groupOfNames\ncn: ${cn}\n${members.map((m) => `member: ${m}\n`).join('')}\n`;

// ada (512: a normal account) is in "east", inside "netops"; dan (514: ACCOUNTDISABLE set) is directly in "netops".
// ou=branch under the people is a referral to another server, as AD returns for its partitions.
const SEED = [
  `dn: ${PEOPLE}\nobjectClass: organizationalUnit\nou: people\n\n`,
  `dn: ${GROUPS}\nobjectClass: organizationalUnit\nou: groups\n\n`,
  `dn: cn=svc,${SUFFIX}\nobjectClass: simpleSecurityObject\nobjectClass: organizationalRole\ncn: svc\nuserPassword: svc-secret\n\n`,
  person('ada', 'ada-pass-1', 512),
  person('dan', 'dan-pass-1', 514),
  `dn: ou=branch,${PEOPLE}\nobjectClass: referral\nobjectClass: extensibleObject\nou: branch\nref: ${BRANCH_URL}\n\n`,
  group('east', [`cn=ada,${PEOPLE}`]),
  group('netops', [`cn=east,${GROUPS}`, `cn=dan,${PEOPLE}`]),
].join('');

const skip = slapdUnavailable();
if (skip && process.env.CI) throw new Error(`directory sign-in tests cannot run: ${skip}`);

describe('Active Directory specifics (slapd with AD attributes)', { skip: skip ?? false }, () => {
  let ldap: TestSlapd;
  let t: TestAppliance;
  let log = '';
  let silent: Server | null = null;
  const held: Socket[] = [];
  const cfg = (over: Record<string, unknown> = {}) =>
    ldapSchema.parse({
      url: ldap.ldapsUrl,
      ca_file: ldap.caFile,
      bind_dn: `cn=svc,${SUFFIX}`,
      bind_password_file: path.join(ldap.dir, 'svc.pw'),
      user_base: PEOPLE,
      user_filter: '(sAMAccountName={username})',
      group_search: 'in_chain',
      group_base: GROUPS,
      timeout_seconds: 3,
      map: [{ group: 'netops', role: 'administrator', scope: ['all'] }],
      ...over,
    });

  before(async () => {
    ldap = await startSlapd(SEED, { schema: AD_SCHEMA });
    writeFileSync(path.join(ldap.dir, 'svc.pw'), 'svc-secret\n', { mode: 0o600 });
    const c = cfg();
    const conf = path.join(ldap.dir, 'appliance.conf');
    writeFileSync(
      conf,
      `[auth.ldap]\nurl = "${c.url}"\nca_file = "${c.ca_file}"\nbind_dn = "${c.bind_dn}"\nbind_password_file = "${c.bind_password_file}"\n` +
        `user_base = "${PEOPLE}"\nuser_filter = "(sAMAccountName={username})"\ngroup_search = "in_chain"\ngroup_base = "${GROUPS}"\n` +
        `timeout_seconds = 3\n\n[[auth.ldap.map]]\ngroup = "netops"\nrole = "administrator"\nscope = ["all"]\n`,
    );
    const stream = new PassThrough();
    stream.on('data', (d: Buffer) => (log += d.toString('utf8')));
    t = await startTestAppliance({ CONFVAULT_CONFIG: conf, CONFVAULT_LOG_LEVEL: 'info' }, { log: stream });
  });
  after(async () => {
    for (const s of held) s.destroy();
    await new Promise<void>((r) => (silent ? silent.close(() => r()) : r()));
    await t?.close();
    await ldap?.stop();
  });

  test('in_chain on a server without the rule: the nested group is found by the member walk, and ada signs in by sAMAccountName', async () => {
    const user = await lookupDirectoryUser(cfg(), 'ada');
    assert.ok(user);
    assert.equal(user.disabled, false, 'userAccountControl 512 is an enabled account');
    assert.deepEqual(user.groups.map((g) => g.toLowerCase()).sort(), [`cn=east,${GROUPS}`, `cn=netops,${GROUPS}`]);
    const w = new WebClient(t.url);
    assert.equal((await w.login('ada', 'ada-pass-1')).status, 303);
    const row = t.services.db.prepare("SELECT door, details FROM audit_log WHERE action = 'login.success' AND actor = 'ada'").get() as {
      door: string;
      details: string;
    };
    assert.equal(row.door, 'ldap');
    assert.match(row.details, /cn=netops/);
  });

  test('a referral inside the searched subtree is not followed, and named in one log line', async () => {
    const user = await lookupDirectoryUser(cfg(), 'ada');
    assert.deepEqual(user?.referrals, [`${BRANCH_URL}??sub`]);
    assert.match(log, /referrals to other servers ignored \(not followed\)/);
    assert.ok(log.includes(BRANCH_URL));
  });

  test('userAccountControl with the ACCOUNTDISABLE bit: refused as disabled, audited, even though a mapped group matches', async () => {
    const user = await lookupDirectoryUser(cfg(), 'dan');
    assert.equal(user?.disabled, true);
    const { res, html } = await passwordStep(new WebClient(t.url), 'dan', 'dan-pass-1');
    assert.equal(res.status, 403);
    assert.match(html, /disabled/);
    const row = t.services.db.prepare("SELECT door FROM audit_log WHERE action = 'login.refused_disabled' AND actor = 'dan'").get() as { door: string };
    assert.equal(row.door, 'ldap');
  });

  test('a base that lies on another server (a referral for the base itself) is a clear error, not a follow', async () => {
    await assert.rejects(lookupDirectoryUser(cfg({ user_base: `ou=branch,${PEOPLE}` }), 'ada'), (err: Error) => {
      assert.ok(err instanceof DirectoryUnavailableError);
      assert.match(err.message, /referral, not followed/);
      return true;
    });
  });

  test('a directory that accepts the connection and never answers fails within timeout_seconds', async () => {
    silent = createServer((s) => held.push(s));
    await new Promise<void>((r) => silent!.listen(0, '127.0.0.1', () => r()));
    const port = (silent.address() as { port: number }).port;
    const started = Date.now();
    await assert.rejects(
      lookupDirectoryUser(cfg({ url: `ldap://127.0.0.1:${port}`, allow_plain: true, ca_file: '', timeout_seconds: 1 }), 'ada'),
      DirectoryUnavailableError,
    );
    assert.ok(Date.now() - started < 10_000, 'bounded by the timeout, not hanging');
  });
});
