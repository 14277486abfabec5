// `confvault role ...`: add and list roles and their permissions.
import { PERMISSIONS } from '../identity/permissions';
import { BUILTIN_ROLES } from '../features/roles/roles.policy';
import { createRole, listRoles, setRolePermissions } from '../features/roles/roles.service';
import { GLOBAL_OPTIONS_HELP, UsageError, consoleActor, err, flagsOf, out, parse, withAppliance, type Command } from './common';

export const roleCommand: Command = {
  name: 'role',
  summary: 'Manage roles (add, list, set-permissions)',
  help: `Usage:
  confvault role add NAME --permissions p1,p2 [--description TEXT]
  confvault role list
  confvault role set-permissions NAME --permissions p1,p2

list prints one line per role: name, then its comma-separated permissions.
The built-in roles cannot be changed:
${BUILTIN_ROLES.map((r) => `  ${r.name}: ${r.description}`).join('\n')}

Permissions: ${PERMISSIONS.join(', ')}

${GLOBAL_OPTIONS_HELP}`,
  async run(argv) {
    const { values, positionals } = parse(argv, { permissions: { type: 'string' }, description: { type: 'string' } });
    const [sub, name] = positionals;
    const flags = flagsOf(values);
    const perms = () => {
      if (values.permissions === undefined) throw new UsageError(`role ${sub}: missing --permissions p1,p2`);
      return values.permissions
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    };
    switch (sub) {
      case 'add': {
        if (!name) throw new UsageError('role add: missing NAME');
        const permissions = perms();
        return withAppliance(flags, (a) => {
          const r = createRole(a.db, consoleActor(), { name, permissions, description: values.description });
          err(`role ${r.name} created with ${r.permissions.length} permission(s)`);
          return 0;
        });
      }
      case 'set-permissions': {
        if (!name) throw new UsageError('role set-permissions: missing NAME');
        const permissions = perms();
        return withAppliance(flags, (a) => {
          setRolePermissions(a.db, consoleActor(), name, permissions);
          err(`role ${name} updated`);
          return 0;
        });
      }
      case 'list':
        return withAppliance(flags, (a) => {
          for (const r of listRoles(a.db)) out(`${r.name}\t${r.permissions.join(',')}`);
          return 0;
        });
      default:
        throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
    }
  },
};
