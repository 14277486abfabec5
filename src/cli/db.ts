// `confvault db ...`: online backup of the database and integrity checks.
import { backupDatabase, checkDatabase, checkTemplatePatterns } from '../features/maintenance/maintenance.service';
import { pruneBackups, retentionPolicy } from '../features/maintenance/retention.service';
import { checkSnapshots } from '../features/maintenance/snapshots-check';
import { restoreDatabase } from '../features/maintenance/db-restore';
import { DB_FILE_NAME, ensureDataDir } from '../app/bootstrap';
import { loadConfig } from '../config/config';
import { DB_REPLICA_HELP, replicaCommand, restoreReplicaCommand } from './db-replica';
import { GLOBAL_OPTIONS_HELP, UsageError, consoleActor, err, flagsOf, out, parse, withAppliance, type Command } from './common';

export const dbCommand: Command = {
  name: 'db',
  summary: 'Database backup and restore, replication to a standby, integrity check and retention',
  help: `Usage:
  confvault db backup DEST     consistent copy of the live database, safe while the server runs
  confvault db check           database integrity, every referenced snapshot present and matching
                               its hash, orphan files reported, custom template patterns that are
                               not RE2 syntax listed; exits 1 when anything is damaged
  confvault db prune [--orphans]
                               apply [retention] now: old records and audit rows, then snapshot files no
                               record names and untouched for [retention] orphan_grace_hours (24 h)
      --orphans                lift the hold a \`db restore\` puts on snapshot files (see below), then prune
  confvault db restore FILE    put the database copy FILE in place of the appliance's database
${DB_REPLICA_HELP}

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
restore also puts a hold on snapshot files (<data_dir>/orphan-sweep.hold): the restored database does
not name the versions recorded after its copy was taken, and the replaced database needs them to stay
restorable. Until you run \`confvault db prune --orphans\` (once you keep the restored database), no
prune, \`serve\` included, deletes any snapshot file. \`serve\` never deletes files at start.
See docs/snapshot-lifecycle.md. Replication ([replication] in appliance.conf) and the warm standby:
docs/replication.md.

Exit codes: 0 done, 1 refused or failed (message on stderr), 2 usage error.

${GLOBAL_OPTIONS_HELP}`,
  async run(argv) {
    const { values, positionals } = parse(argv, { orphans: { type: 'boolean' }, 'from-replica': { type: 'boolean' }, force: { type: 'boolean' } });
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
          const policy = { ...retentionPolicy(a.config, true), liftHold: values.orphans === true };
          const r = pruneBackups(a.db, consoleActor(), a.snapshots, a.dataDir, policy);
          out(`records\t${r.records}`);
          out(`snapshots\t${r.snapshots}`);
          out(`audit\t${r.audit}`);
          out(`orphans kept\t${r.kept}`);
          if (r.held) err(`no snapshot file deleted: ${r.held}; lift the hold with \`confvault db prune --orphans\` once you keep this database`);
          return 0;
        });
      case 'replica':
        if (positionals.length > 2) throw new UsageError('db replica: give one action');
        return replicaCommand(loadConfig(flags), dest);
      case 'restore': {
        if (values['from-replica']) {
          if (positionals.length > 2) throw new UsageError('db restore --from-replica: give at most one PATH');
          return restoreReplicaCommand(loadConfig(flags), dest, values.force === true);
        }
        if (values.force) throw new UsageError('db restore: --force goes with --from-replica');
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
