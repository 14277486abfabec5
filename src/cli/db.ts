// `confvault db ...`: online backup of the database and integrity checks.
import { backupDatabase, checkDatabase, checkTemplatePatterns } from '../features/maintenance/maintenance.service';
import { pruneBackups } from '../features/maintenance/retention.service';
import { checkSnapshots } from '../features/maintenance/snapshots-check';
import { restoreDatabase } from '../features/maintenance/db-restore';
import { DB_FILE_NAME, ensureDataDir } from '../app/bootstrap';
import { loadConfig } from '../config/config';
import { GLOBAL_OPTIONS_HELP, UsageError, consoleActor, err, flagsOf, out, parse, withAppliance, type Command } from './common';

export const dbCommand: Command = {
  name: 'db',
  summary: 'Database backup and restore, integrity check and retention',
  help: `Usage:
  confvault db backup DEST     consistent copy of the live database, safe while the server runs
  confvault db check           database integrity, every referenced snapshot present and matching
                               its hash, orphan files reported, custom template patterns that are
                               not RE2 syntax listed; exits 1 when anything is damaged
  confvault db prune           apply [retention] now: old records and audit rows, then unreferenced snapshot files
  confvault db restore FILE    put the database copy FILE in place of the appliance's database

backup uses SQLite's online backup API, so the appliance keeps serving and backing up devices
while the copy is made; the copy is verified with integrity_check before the command succeeds.
Back up the master key file (master.key in the data dir) too, once: without it, device secrets
stored in the database cannot be decrypted.
\`serve\` also writes such copies itself into <data_dir>/backups/ on [maintenance] db_backup_schedule,
keeping the newest db_backup_keep.

restore needs the server stopped: \`serve\` holds an exclusive lock on <data_dir>/serve.lock while it
runs (released by the operating system however it ends), and restore refuses while it is held. It
checks FILE first (integrity, a confvault database, a schema version this confvault knows, secrets
readable with this data dir's master.key), then renames the current database to
confvault.db.replaced-<UTC time> and puts the copy in its place. Nothing changes when a check fails.
The next \`serve\` migrates a copy from an older version (keeping its own copy first).

Exit codes: 0 done, 1 refused or failed (message on stderr), 2 usage error.

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
      case 'restore': {
        if (!dest) throw new UsageError('db restore: missing FILE');
        if (positionals.length > 2) throw new UsageError('db restore: give exactly one FILE');
        const config = loadConfig(flags);
        ensureDataDir(config.storage.data_dir);
        const r = await restoreDatabase(config.storage.data_dir, DB_FILE_NAME, dest);
        out(`restored ${r.source} (schema version ${r.schemaVersion}, ${r.bytes} bytes) to ${r.dbFile}`);
        out(r.replaced ? `the database it replaced is kept as ${r.replaced}` : 'there was no database in place before');
        if (r.schemaVersion < r.knownVersion) out(`the next start migrates it from schema version ${r.schemaVersion} to ${r.knownVersion}`);
        return 0;
      }
      default:
        throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
    }
  },
};
