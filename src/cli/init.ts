// `confvault init`: create the data dir, database, master key and the first administrator (idempotent).
import { ensureFirstAdmin } from '../features/users/users.service';
import { GLOBAL_OPTIONS_HELP, err, flagsOf, out, parse, readStdinSecret, withAppliance, type Command } from './common';

export const initCommand: Command = {
  name: 'init',
  summary: 'Create the data directory, database and first administrator (safe to repeat)',
  help: `Usage: confvault init [--admin-password-stdin]

Creates the data directory (mode 0700), the SQLite database, the master key that encrypts
device secrets, and the user "admin" (role administrator). Running it again changes nothing.
With a new admin and no --admin-password-stdin, a random password is printed once on stdout.

  --admin-password-stdin   read the admin password from standard input instead

${GLOBAL_OPTIONS_HELP}`,
  async run(argv) {
    const { values } = parse(argv, { 'admin-password-stdin': { type: 'boolean' } }, false);
    const given = values['admin-password-stdin'] ? await readStdinSecret('admin password') : undefined;
    return withAppliance(flagsOf(values), async (a) => {
      const generated = await ensureFirstAdmin(a.db, given);
      if (generated === null) {
        err(`confvault is initialised in ${a.dataDir} (user admin already exists)`);
      } else if (given) {
        err(`confvault initialised in ${a.dataDir}; user admin created with the given password`);
      } else {
        err(`confvault initialised in ${a.dataDir}; user admin created. Its password is shown once:`);
        out(generated);
      }
      return 0;
    });
  },
};
