// `confvault backup ...`: run backups now, import a configuration file, import an Oxidized/RANCID git history.
import { readFileSync } from 'node:fs';
import { importBackup, importGitHistory } from '../features/backups/import.service';
import { closeInterruptedBackups } from '../features/backups/backup-jobs.service';
import { BackupRunner, type DeviceRunResult } from '../engine/runner';
import { selectDeviceIds } from '../features/backups/backup-jobs.service';
import { parseLocalTimestamp } from '../lib/time';
import { recordBackupRun } from '../features/backups/runs.service';
import { GLOBAL_OPTIONS_HELP, UsageError, consoleActor, err, flagsOf, out, parse, withAppliance, type Command } from './common';
import { ProgressBar } from './progress';
import { ApiError } from '../errors';
import { getGroup } from '../features/groups/groups.service';
import { SCOPE_ALL } from '../identity/principal';

const HELP = `Usage:
  confvault backup run (--device ID | --group ID | --all)
  confvault backup import --device ID --file PATH [--started-at "YYYY-MM-DD HH:MM:SS"]
  confvault backup import-git --repo DIR --layout oxidized|rancid [--trust-owner]

run         Backs up now: one device, every enabled device of a group and its subgroups, or every
            enabled device. Shows a progress bar on a terminal, then one summary line per device on
            stdout (tab-separated: device id, name, result ok|failed|skipped, changed yes|no, seconds,
            failure type, message). Exits 1 if any backup failed.
import      Records an existing configuration file as a successful backup of the device (migration
            from other tools, restores from files). --started-at is read in the appliance's time zone.
import-git  Imports the whole history of an Oxidized or RANCID git repository: one backup per commit
            that touched a device's file, at the commit's time, devices matched by name. Running it
            again imports nothing twice. Oxidized: <device> or <group>/<device>; RANCID: <group>/configs/<device>.
            git runs with a fixed configuration: the repository's own settings cannot run programs
            (signatures, hooks, pagers, fsmonitor, diff helpers are off). A repository owned by another
            user is refused unless --trust-owner is given, after you have checked it.

Every run and import is recorded in the audit trail with the OS user who ran it.

${GLOBAL_OPTIONS_HELP}`;

function idOption(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`${name} takes a numeric id`);
  return Number(v);
}

function resultLine(r: DeviceRunResult): string {
  const result = r.success ? 'ok' : r.failure === 'SKIPPED' ? 'skipped' : 'failed';
  return [r.deviceId, r.deviceName, result, r.changed ? 'yes' : 'no', (r.durationMs / 1000).toFixed(1), r.failure ?? '-', r.message ?? '-'].join('\t');
}

export const backupCommand: Command = {
  name: 'backup',
  summary: 'Run backups now, import a configuration file or a git history',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parse(argv, {
      device: { type: 'string' },
      group: { type: 'string' },
      all: { type: 'boolean' },
      file: { type: 'string' },
      'started-at': { type: 'string' },
      repo: { type: 'string' },
      layout: { type: 'string' },
      'trust-owner': { type: 'boolean' },
    });
    const [sub] = positionals;
    const flags = flagsOf(values);
    switch (sub) {
      case 'run': {
        const deviceId = idOption(values.device, '--device');
        const groupId = idOption(values.group, '--group');
        if ([deviceId !== undefined, groupId !== undefined, values.all === true].filter(Boolean).length !== 1) {
          throw new UsageError('backup run: give exactly one of --device ID, --group ID, --all');
        }
        return withAppliance(flags, async (a) => {
          // Records a crashed run left open long ago cannot still be running anywhere.
          const b = a.config.backup;
          const stale = (b.device_timeout * (b.retries + 1) + b.retry_backoff * 2 ** b.retries) * 1000 * 2;
          closeInterruptedBackups(a.db, Date.now(), Date.now() - stale);
          // An id that names nothing is a failed operation (exit 1), as for every noun; an empty group is not.
          if (groupId !== undefined) getGroup(a.db, SCOPE_ALL, groupId);
          const ids = selectDeviceIds(a.db, { deviceId, groupId, all: values.all });
          if (deviceId !== undefined && ids.length === 0) throw ApiError.notFound(`device ${deviceId}`);
          if (ids.length === 0) {
            err('no enabled devices selected');
            return 0;
          }
          const selection = deviceId !== undefined ? { deviceId } : groupId !== undefined ? { groupId } : { all: true as const };
          recordBackupRun(a.db, consoleActor(), selection, ids);
          const runner = new BackupRunner({ db: a.db, secrets: a.secrets, snapshots: a.snapshots, config: a.config });
          const bar = new ProgressBar(ids.length, 'backing up');
          const controller = new AbortController();
          const onSignal = () => controller.abort();
          process.once('SIGINT', onSignal);
          process.once('SIGTERM', onSignal);
          let failed = 0;
          const results = await runner.run(ids, {
            trigger: 'cli',
            signal: controller.signal,
            onResult: (r, done) => {
              if (!r.success) failed++;
              bar.update(done, failed);
            },
            onProgress: (id, text) => err(`device ${id}: ${text}`),
          });
          process.removeListener('SIGINT', onSignal);
          process.removeListener('SIGTERM', onSignal);
          bar.finish();
          results.sort((x, y) => x.deviceId - y.deviceId);
          for (const r of results) out(resultLine(r));
          const ok = results.filter((r) => r.success).length;
          const changed = results.filter((r) => r.changed).length;
          err(`${results.length} device(s): ${ok} ok, ${changed} changed, ${results.length - ok} not backed up`);
          return results.every((r) => r.success) ? 0 : 1;
        });
      }
      case 'import': {
        const deviceId = idOption(values.device, '--device');
        if (deviceId === undefined || !values.file) throw new UsageError('backup import: --device ID and --file PATH are required');
        let text: string;
        try {
          text = readFileSync(values.file, 'utf8');
        } catch (e) {
          throw new Error(`cannot read ${values.file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
        }
        return withAppliance(flags, (a) => {
          let at = Date.now();
          if (values['started-at']) {
            const parsed = parseLocalTimestamp(values['started-at'], a.config.server.timezone);
            if (parsed === null) throw new UsageError('--started-at must look like "YYYY-MM-DD HH:MM:SS"');
            at = parsed;
          }
          const r = importBackup(a.db, consoleActor(), a.snapshots, deviceId, text, at);
          err(`imported as backup ${r.id}${r.changed ? ' (changed)' : ''}`);
          out(r.id);
          return 0;
        });
      }
      case 'import-git': {
        if (!values.repo || (values.layout !== 'oxidized' && values.layout !== 'rancid')) {
          throw new UsageError('backup import-git: --repo DIR and --layout oxidized|rancid are required');
        }
        const repo = values.repo;
        const layout = values.layout;
        return withAppliance(flags, (a) => {
          let bar: ProgressBar | null = null;
          const r = importGitHistory(a.db, consoleActor(), a.snapshots, repo, layout, {
            trustOwner: values['trust-owner'] === true,
            onProgress: (p) => {
              bar ??= new ProgressBar(p.commitsTotal, 'importing commits');
              bar.update(p.commitsDone, 0);
            },
          });
          (bar as ProgressBar | null)?.finish();
          out(`imported\t${r.imported}`);
          out(`skipped\t${r.skipped}`);
          out(`commits\t${r.commitsTotal}`);
          if (r.unmatched.length) err(`no device named: ${r.unmatched.join(', ')} (create them first, then run again)`);
          return 0;
        });
      }
      default:
        throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
    }
  },
};
