// [auth.oidc] is checked at start: each mistake on its own line naming its key; off (no issuer) checks nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/config';
import { oidcRedirectUrl } from '../../src/config/oidc-config';
import { tempDir } from '../helpers/appliance';

const load = (toml: string) => {
  const file = path.join(tempDir('confvault-oidc-conf-'), 'appliance.conf');
  writeFileSync(file, toml);
  return loadConfig({ config: file }, {});
};

test('every mistake of [auth.oidc] is named on its own line', () => {
  let message = '';
  try {
    load('[auth.oidc]\nissuer = "http://id.example.org"\npublic_url = "confvault.example.org"\nscopes = ["profile"]\n');
  } catch (e) {
    assert.ok(e instanceof ConfigError);
    message = e.message;
  }
  assert.deepEqual(message.split('\n'), [
    'invalid configuration: auth.oidc.issuer: must be https:// (allow_http = true only on test networks), e.g. "https://id.example.com/realms/corp"',
    'invalid configuration: auth.oidc.client_id: must be the client id registered at the provider',
    'invalid configuration: auth.oidc.public_url: must be an absolute URL',
    'invalid configuration: auth.oidc.scopes: must include "openid"',
    'invalid configuration: auth.oidc.map: no [[auth.oidc.map]] entry: nobody could sign in through the provider',
  ]);
});

test('a valid [auth.oidc] loads, and the redirect URL to register is derived from public_url', () => {
  const cfg = load(`[auth.oidc]
issuer = "https://id.example.org/realms/corp"
client_id = "confvault"
public_url = "https://confvault.example.org/"

[[auth.oidc.map]]
group = "netops"
role = "administrator"
`);
  assert.equal(oidcRedirectUrl(cfg.auth.oidc), 'https://confvault.example.org/login/oidc/callback');
  assert.deepEqual(cfg.auth.oidc.map[0].scope, ['all']);
  assert.equal(load('').auth.oidc.issuer, '', 'off by default, and then nothing else is checked');
});
