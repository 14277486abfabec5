// `confvault db ...`: online backup of the database and integrity checks.
import { backupDatabase, checkDatabase, type ExtraCheck } from '../features/maintenance/maintenance.service';
import { GLOBAL_OPTIONS_HELP, UsageError, err, flagsOf, out, parse, withAppliance, type Command } from './common';

/** Checks contributed by other parts (snapshot store) to `db check`. */
export const EXTRA_CHECKS: ExtraCheck[] = [];

export const dbCommand: Command = {
  name: 'db',
  summary: 'Database backup and integrity check',
  help: `Usage:
  confvault db backup DEST     consistent copy of the live database, safe while the server runs
  confvault db check           integrity check; exits 1 when anything is wrong

backup uses SQLite's online backup API, so the appliance keeps serving and backing up devices
while the copy is made; the copy is verified with integrity_check before the command succeeds.
Back up the master key file (master.key in the data dir) too, once: without it, device secrets
stored in the database cannot be decrypted.

${GLOBAL_OPTIONS_HELP}`,
  async run(argv) {
    const { values, positionals } = parse(argv, {});
    const [sub, dest] = positionals;
    const flags = flagsOf(values);
    switch (sub) {
      case 'backup':
        if (!dest) throw new UsageError('db backup: missing DEST');
        return withAppliance(flags, async (a) => {
          const r = await backupDatabase(a.db, dest);
          err(`database copied to ${r.file} (${r.bytes} bytes), integrity ok`);
          out(r.file);
          return 0;
        });
      case 'check':
        return withAppliance(flags, async (a) => {
          const reports = [checkDatabase(a.db)];
          for (const check of EXTRA_CHECKS) reports.push(await check(a.db, a.dataDir));
          for (const r of reports) for (const l of r.lines) out(l);
          const ok = reports.every((r) => r.ok);
          out(ok ? 'check: ok' : 'check: FAILED');
          return ok ? 0 : 1;
        });
      default:
        throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
    }
  },
};
