// [auth.ldap] settings: mistakes reported at start one line each; the filter escaping and the mapping's first-match rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/config';
import { userFilter } from '../../src/features/directory/directory.ldap';
import { matchMapping } from '../../src/features/directory/directory.mapping';
import { runCliAsync, tempDir } from '../helpers/appliance';

test('a wrong [auth.ldap] section names every mistake on its own line, and commands exit 1', async () => {
  const dir = tempDir();
  const file = path.join(dir, 'appliance.conf');
  writeFileSync(
    file,
    `[auth.ldap]
url = "ldap://dc1.example.org"
bind_dn = "cn=svc,dc=example,dc=org"
user_filter = "uid=%s"
`,
  );
  assert.throws(
    () => loadConfig({ config: file }, {}),
    (e: Error) => {
      assert.ok(e instanceof ConfigError);
      const lines = e.message.split('\n');
      for (const key of ['url', 'bind_password_file', 'user_base', 'user_filter', 'map']) {
        assert.ok(
          lines.some((l) => l.startsWith(`invalid configuration: auth.ldap.${key}: `)),
          `a line for ${key}:\n${e.message}`,
        );
      }
      return true;
    },
  );
  const r = await runCliAsync(['user', 'list', '--config', file, '--data-dir', path.join(dir, 'data')]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^confvault user: invalid configuration: auth\.ldap\.url: ldap:\/\/ sends passwords in clear/m);
  assert.match(r.stderr, /^confvault user: invalid configuration: auth\.ldap\.user_base: /m);
  writeFileSync(file, '[auth.ldap]\ntimeout = 5\n');
  assert.throws(() => loadConfig({ config: file }, {}), /auth\.ldap\.timeout: unknown key/);
});

test('the username is escaped into the user filter (RFC 4515)', () => {
  const cfg = loadConfig({}, {}).auth.ldap;
  assert.equal(
    userFilter({ ...cfg, user_filter: '(&(objectClass=user)(sAMAccountName={username}))' }, 'a*b(c)\\d'),
    '(&(objectClass=user)(sAMAccountName=a\\2ab\\28c\\29\\5cd))',
  );
});

test('the first mapping entry that one of the groups satisfies wins, by DN or by CN alone', () => {
  const map = [
    { group: 'CN=Admins, OU=Groups, DC=corp', role: 'administrator', scope: ['all'] },
    { group: 'netops', role: 'operator', scope: ['core'] },
  ];
  assert.equal(matchMapping(map, ['cn=netops,ou=groups,dc=corp', 'cn=admins,ou=groups,dc=corp'])?.index, 0);
  assert.equal(matchMapping(map, ['CN=NetOps,OU=Groups,DC=corp'])?.index, 1);
  assert.equal(matchMapping(map, ['cn=netops-east,ou=groups,dc=corp']), null);
});
