// `confvault user ...`: add, list, disable, enable, passwd, totp-reset, set role and scope of users.
import { formatTimestamp } from '../lib/time';
import { createUser, listUsers, setUserDisabled, setUserPassword, setUserRole, setUserScope } from '../features/users/users.service';
import { GLOBAL_OPTIONS_HELP, UsageError, consoleActor, err, flagsOf, out, parse, parseIdList, readStdinSecret, withAppliance, type Command } from './common';
import { generatePassword } from '../identity/password';
import { resetUserTotp } from '../features/users/totp.service';

const HELP = `Usage:
  confvault user add USERNAME --role ROLE [--groups ID,ID] [--timezone ZONE] [--password-stdin]
  confvault user list
  confvault user disable USERNAME
  confvault user enable USERNAME
  confvault user passwd USERNAME --password-stdin
  confvault user totp-reset USERNAME
  confvault user set-role USERNAME ROLE
  confvault user set-scope USERNAME (all | ID,ID)

add        Creates a user. Without --password-stdin a random password is printed once on stdout
           and must be changed at first login.
           --groups limits the user's device-group scope (each group includes its subgroups);
           without it the scope is all devices.
list       One line per user: id, username, role, scope, state, time zone, created.
disable    The user can no longer log in, their web sessions end, and their API keys stop working on the
           next request.
passwd, set-role, set-scope
           End the user's web sessions: they log in again under the new password or rights.
totp-reset Removes the user's second factor (TOTP) and recovery codes, say for a lost phone: they sign in
           with the password alone, or (with [auth] totp = "required") enrol again at their next sign-in.
The last enabled user holding every permission (scope all) cannot be disabled or demoted.
Every change is recorded in the audit log with the OS user who ran the command.

${GLOBAL_OPTIONS_HELP}`;

export const userCommand: Command = {
  name: 'user',
  summary: 'Manage users (add, list, disable, passwd, totp-reset, set-role, set-scope)',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parse(argv, {
      role: { type: 'string' },
      groups: { type: 'string' },
      timezone: { type: 'string' },
      'password-stdin': { type: 'boolean' },
    });
    const [sub, name, arg] = positionals;
    const flags = flagsOf(values);
    const need = (v: string | undefined, what: string): string => {
      if (!v) throw new UsageError(`user ${sub}: missing ${what}`);
      return v;
    };
    switch (sub) {
      case 'add': {
        const username = need(name, 'USERNAME');
        const role = need(values.role, '--role ROLE');
        const groups = values.groups ? parseIdList(values.groups, '--groups') : null;
        const password = values['password-stdin'] ? await readStdinSecret('password') : generatePassword();
        return withAppliance(flags, async (a) => {
          // A generated password has been on a terminal: as with init's admin, it must be changed at first login.
          const mustChange = !values['password-stdin'];
          const u = await createUser(a.db, consoleActor(), {
            username,
            password,
            role,
            groups,
            timezone: values.timezone ?? null,
            must_change_password: mustChange,
          });
          err(`user ${u.username} created (id ${u.id}, role ${u.role}, scope ${u.scope === 'all' ? 'all' : u.scope.join(',')})`);
          if (!values['password-stdin']) {
            err('Initial password, shown once:');
            out(password);
          }
          return 0;
        });
      }
      case 'list':
        return withAppliance(flags, (a) => {
          for (const u of listUsers(a.db)) {
            const scope = u.scope === 'all' ? 'all' : u.scope.join(',') || 'none';
            out(
              [
                u.id,
                u.username,
                u.role,
                scope,
                u.disabled ? 'disabled' : 'active',
                u.timezone ?? '-',
                formatTimestamp(u.created_at, a.config.server.timezone),
              ].join('\t'),
            );
          }
          return 0;
        });
      case 'disable':
      case 'enable': {
        const username = need(name, 'USERNAME');
        return withAppliance(flags, (a) => {
          setUserDisabled(a.db, consoleActor(), username, sub === 'disable');
          err(`user ${username} ${sub}d${sub === 'disable' ? '; their web sessions have ended' : ''}`);
          return 0;
        });
      }
      case 'passwd': {
        const username = need(name, 'USERNAME');
        if (!values['password-stdin']) throw new UsageError('user passwd: --password-stdin is required (pipe the new password in)');
        const password = await readStdinSecret('new password');
        return withAppliance(flags, async (a) => {
          await setUserPassword(a.db, consoleActor(), username, password);
          err(`password of ${username} changed; their web sessions have ended`);
          return 0;
        });
      }
      case 'totp-reset': {
        const username = need(name, 'USERNAME');
        return withAppliance(flags, (a) => {
          resetUserTotp(a.db, consoleActor(), username);
          err(`second factor of ${username} removed`);
          return 0;
        });
      }
      case 'set-role': {
        const username = need(name, 'USERNAME');
        const role = need(arg, 'ROLE');
        return withAppliance(flags, (a) => {
          setUserRole(a.db, consoleActor(), username, role);
          err(`user ${username} now has role ${role}; their web sessions have ended`);
          return 0;
        });
      }
      case 'set-scope': {
        const username = need(name, 'USERNAME');
        const scope = need(arg, 'scope (all or ID,ID)');
        const groups = scope === 'all' ? null : parseIdList(scope, 'scope');
        return withAppliance(flags, (a) => {
          setUserScope(a.db, consoleActor(), username, groups);
          err(`user ${username} now has scope ${scope}; their web sessions have ended`);
          return 0;
        });
      }
      default:
        throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
    }
  },
};
