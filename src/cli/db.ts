// `confvault db ...`: online backup of the database and integrity checks.
import { backupDatabase, checkDatabase, checkTemplatePatterns } from '../features/maintenance/maintenance.service';
import { pruneBackups } from '../features/maintenance/retention.service';
import { checkSnapshots } from '../features/maintenance/snapshots-check';
import { GLOBAL_OPTIONS_HELP, UsageError, consoleActor, err, flagsOf, out, parse, withAppliance, type Command } from './common';

export const dbCommand: Command = {
  name: 'db',
  summary: 'Database backup, integrity check and retention',
  help: `Usage:
  confvault db backup DEST     consistent copy of the live database, safe while the server runs
  confvault db check           database integrity, every referenced snapshot present and matching
                               its hash, orphan files reported, custom template patterns that are
                               not RE2 syntax listed; exits 1 when anything is damaged
  confvault db prune           apply [retention] now: old records and audit rows, then unreferenced snapshot files

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
        return withAppliance(flags, (a) => {
          const reports = [checkDatabase(a.db), checkSnapshots(a.db, a.snapshots), checkTemplatePatterns(a.db)];
          for (const r of reports) for (const l of r.lines) out(l);
          const ok = reports.every((r) => r.ok);
          out(ok ? 'check: ok' : 'check: FAILED');
          return ok ? 0 : 1;
        });
      case 'prune':
        return withAppliance(flags, (a) => {
          const r = pruneBackups(a.db, consoleActor(), a.snapshots, a.config.retention.keep_days, a.config.retention.keep_min_versions);
          out(`records\t${r.records}`);
          out(`snapshots\t${r.snapshots}`);
          out(`audit\t${r.audit}`);
          return 0;
        });
      default:
        throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
    }
  },
};
