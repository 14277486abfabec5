// `confvault auth test-ldap USER`: what the directory says about a user and which mapping entry matches, signing nobody in (OIDC: auth-oidc.ts).
import { ConfigError, loadConfig, type ConfigFlags } from '../config/config';
import { OIDC_HELP, OIDC_USAGE, setOidcSecret, testOidc } from './auth-oidc';
import { accessFor, DirectoryUnavailableError } from '../features/directory/directory.service';
import { printAccess } from './auth-access';
import { authenticateDirectoryUser, lookupDirectoryUser, type DirectoryUser } from '../features/directory/directory.ldap';
import { GLOBAL_OPTIONS_HELP, UsageError, err, flagsOf, out, parse, readStdinSecret, withAppliance, type Command } from './common';

/** The [auth] settings, or null after printing each configuration mistake on its own line. */
function authSection(flags: ConfigFlags) {
  try {
    return loadConfig(flags).auth;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    for (const line of e.message.split('\n')) err(`confvault auth: ${line}`);
    return null;
  }
}

export const authCommand: Command = {
  name: 'auth',
  summary: 'Check directory sign-in (test-ldap, test-oidc, set-oidc-secret)',
  help: `Usage:
  confvault auth test-ldap USER [--no-password]
${OIDC_USAGE}

test-ldap binds with the [auth.ldap] service account, finds USER with user_filter, binds as USER with the
password read from standard input (one line; never give it as an argument), reads their groups (nested ones
included) and prints their DN, whether the directory has them disabled, every group found, and the first
[[auth.ldap.map]] entry that matches with the role and scope it gives. Nothing is created, changed or signed in.
  --no-password   look USER up with the service account only (what the periodic re-check does)

Exit codes: 0 a mapping entry matched; 1 not found, wrong password, disabled, no entry matched, or the directory
cannot be reached; 2 usage error, or [auth.ldap] is not configured or not valid.

${OIDC_HELP}

${GLOBAL_OPTIONS_HELP}`,
  async run(argv) {
    const { values, positionals } = parse(argv, { 'no-password': { type: 'boolean' }, claims: { type: 'string' }, file: { type: 'string' } });
    const [sub, username, ...extra] = positionals;
    if (sub === 'test-oidc' || sub === 'set-oidc-secret') {
      if (username) throw new UsageError(`auth ${sub}: takes no arguments`);
      const oidc = authSection(flagsOf(values))?.oidc;
      if (!oidc) return 2;
      if (!oidc.issuer) throw new UsageError(`auth ${sub}: [auth.oidc] issuer is not set: OIDC sign-in is off`);
      return sub === 'test-oidc' ? testOidc(flagsOf(values), oidc, values.claims) : setOidcSecret(flagsOf(values), values.file);
    }
    if (sub !== 'test-ldap') throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
    if (!username || extra.length) throw new UsageError('auth test-ldap: give exactly one USER (the password comes from standard input)');
    const flags = flagsOf(values);
    const ldap = authSection(flags)?.ldap;
    if (!ldap) return 2;
    if (!ldap.url) throw new UsageError('auth test-ldap: [auth.ldap] url is not set: directory sign-in is off');
    const password = values['no-password'] ? null : await readStdinSecret('Password');
    let user: DirectoryUser | 'bad' | null;
    try {
      user = password === null ? await lookupDirectoryUser(ldap, username) : await authenticateDirectoryUser(ldap, username, password);
    } catch (e) {
      if (!(e instanceof DirectoryUnavailableError)) throw e;
      err(`confvault auth: ${e.message}`);
      return 1;
    }
    if (user === 'bad') {
      err('result: refused (not found, or wrong password)');
      return 1;
    }
    if (user) {
      out(`dn: ${user.dn}`);
      out(`disabled: ${user.disabled ? 'yes' : 'no'}`);
      out(`groups (${user.groups.length}):`);
      for (const g of user.groups) out(`  ${g}`);
      for (const r of user.referrals) out(`referral ignored (not followed): ${r}`);
    }
    const found = user;
    return withAppliance(flags, (a) => {
      const access = accessFor(a.db, ldap, found);
      if (access.match) out(`mapping: map[${access.match.index}] group "${access.match.mapping.group}" (via ${access.match.group})`);
      return printAccess(access);
    });
  },
};
