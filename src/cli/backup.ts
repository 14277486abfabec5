// `confvault backup ...`: run backups now (waiting, or queued for the server), list, cancel and resume jobs, import a configuration file or a git history.
import { readFileSync } from 'node:fs';
import { importBackup, importGitHistory } from '../features/backups/import.service';
import { closeInterruptedBackups, selectDeviceIds } from '../features/backups/backup-engine.service';
import { BackupRunner, type DeviceRunResult } from '../engine/runner';
import { JobExecutor } from '../engine/jobs';
import { parseLocalTimestamp } from '../lib/time';
import {
  cancelBackupJob,
  getBackupJob,
  listBackupJobs,
  requestBackupJob,
  resumeBackupJob,
  type JobSelection,
  type JobView,
} from '../features/backups/jobs.service';
import { ServeLockedError, holdServeLock } from '../features/maintenance/db-restore';
import { GLOBAL_OPTIONS_HELP, UsageError, consoleActor, err, flagsOf, fmtTime, out, parse, withAppliance, type Command } from './common';
import { ProgressBar } from './progress';
import { ApiError } from '../errors';
import { getGroup } from '../features/groups/groups.service';
import { SCOPE_ALL } from '../identity/principal';
import type { Appliance } from '../app/bootstrap';

const HELP = `Usage:
  confvault backup run (--device ID | --group ID | --all) [--wait | --no-wait]
  confvault backup jobs [--all] [--json]
  confvault backup jobs cancel JOB_ID
  confvault backup jobs resume JOB_ID
  confvault backup import --device ID --file PATH [--started-at "YYYY-MM-DD HH:MM:SS"]
  confvault backup import-git --repo DIR --layout oxidized|rancid [--trust-owner]

run         Backs up now: one device, every enabled device of a group and its subgroups, or every
            enabled device, as one job (listed by "backup jobs" and on the web interface's Jobs page).
            --wait (the default) runs it in this process: a progress bar on a terminal, then one
            summary line per device on stdout (tab-separated: device id, name, result
            ok|failed|skipped, changed yes|no|first (first: the device's first stored version),
            seconds, failure type, message). Exits 1 if any backup failed. Ctrl-C cancels the job.
            --no-wait queues the job for the running server (\`confvault serve\` on the same data
            directory picks it up within a second) and prints its id; with no server running it
            says so on stderr, queues nothing and exits 1.
jobs        Lists backup jobs still queued or running (--all: the 100 most recent, finished ones
            too), one tab-separated line each: job id, state, done/total, what it backs up, who
            asked (door), when, then counts (first, changed, unchanged, failed, other). --json
            prints a JSON array instead. A job whose process died shows as interrupted.
jobs cancel Cancels what is left of a job: queued backups are dropped, running ones stopped
            within seconds by the process running them.
jobs resume Resumes an interrupted job (its process stopped: a restart, a crash): its interrupted
            backups are queued again, for the running server when one runs (it picks the job up
            within a second; this prints the job line), else run here and waited for as "run" does.
            Nothing resumes a job on its own; \`confvault serve\` names interrupted jobs at start.
import      Records an existing configuration file as a successful backup of the device (migration
            from other tools, restores from files). --started-at is read in the appliance's time zone.
import-git  Imports the whole history of an Oxidized or RANCID git repository: one backup per commit
            that touched a device's file, at the commit's time, devices matched by name. Running it
            again imports nothing twice. Oxidized: <device> or <group>/<device>; RANCID: <group>/configs/<device>.
            git runs with a fixed configuration: the repository's own settings cannot run programs
            (signatures, hooks, pagers, fsmonitor, diff helpers are off). A repository owned by another
            user is refused unless --trust-owner is given, after you have checked it.
            Both imports store secrets as a live backup would: with [backup] redact_secrets on (the
            default), the device template's redact rules turn them into the appliance's keyed tokens.

Every run and import is recorded in the audit trail with the OS user who ran it.

${GLOBAL_OPTIONS_HELP}`;

/** The redaction key imports use: the one live backups get (src/engine/runner.ts), or null with redaction off. */
function importRedactKey(a: Appliance): Buffer | null {
  return a.config.backup.redact_secrets ? a.secrets.redactionKey : null;
}

function idOption(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`${name} takes a numeric id`);
  return Number(v);
}

function resultLine(r: DeviceRunResult): string {
  const result = r.success ? 'ok' : r.failure === 'SKIPPED' ? 'skipped' : 'failed';
  const changed = r.first ? 'first' : r.changed ? 'yes' : 'no';
  return [r.deviceId, r.deviceName, result, changed, (r.durationMs / 1000).toFixed(1), r.failure ?? '-', r.message ?? '-'].join('\t');
}

function jobLine(j: JobView, tz: string): string {
  const p = j.progress;
  const other = p.skipped + p.cancelled + p.interrupted;
  return [
    j.id,
    j.state,
    `${p.done}/${p.total}`,
    j.label,
    `${j.requested_by} (${j.door})`,
    fmtTime(j.created_at, tz),
    `first=${p.first} changed=${p.changed} unchanged=${p.unchanged} failed=${p.failed} other=${other}`,
  ].join('\t');
}

/** Whether `confvault serve` runs on this data directory: it holds serve.lock for as long as it runs. */
function serverRunning(dataDir: string): boolean {
  try {
    holdServeLock(dataDir).release();
    return false;
  } catch (e) {
    if (e instanceof ServeLockedError) return true;
    throw e;
  }
}

/**
 * `backup run --wait` and `backup jobs resume` without a server: the job runs in this process; Ctrl-C or SIGTERM
 * cancels it. `start` opens the job for this process's executor. Prints today's summary lines.
 */
async function runAndWait(a: Appliance, start: (owner: string) => { id: string; total: number }): Promise<number> {
  const actor = consoleActor();
  const runner = new BackupRunner({ db: a.db, secrets: a.secrets, snapshots: a.snapshots, config: a.config });
  const executor = new JobExecutor(a.db, runner);
  const job = start(executor.owner);
  const total = job.total;
  const bar = new ProgressBar(total, 'backing up');
  const onSignal = () => {
    cancelBackupJob(a.db, actor, job.id);
    executor.beat();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let failed = 0;
  const results = await executor.execute(job.id, {
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
  const first = results.filter((r) => r.first).length;
  // The line as it always was; first versions (no longer counted as "no change") are named after it when there are any.
  err(`${results.length} device(s): ${ok} ok, ${changed} changed, ${results.length - ok} not backed up${first ? `; ${first} first version(s) stored` : ''}`);
  return results.length === total && results.every((r) => r.success) ? 0 : 1;
}

export const backupCommand: Command = {
  name: 'backup',
  summary: 'Run backups now, list and cancel backup jobs, import a configuration file or a git history',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parse(argv, {
      device: { type: 'string' },
      group: { type: 'string' },
      all: { type: 'boolean' },
      wait: { type: 'boolean' },
      'no-wait': { type: 'boolean' },
      json: { type: 'boolean' },
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
        if (values.wait && values['no-wait']) throw new UsageError('backup run: give --wait or --no-wait, not both');
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
          const selection: JobSelection = deviceId !== undefined ? { deviceIds: [deviceId] } : groupId !== undefined ? { groupId } : { all: true };
          if (!values['no-wait']) {
            return runAndWait(a, (owner) => ({ id: requestBackupJob(a.db, consoleActor(), selection, owner).id, total: ids.length }));
          }
          if (!serverRunning(a.dataDir)) {
            throw new Error(`no confvault server is running on ${a.dataDir}: nothing queued; start it (confvault serve) or run without --no-wait`);
          }
          const job = requestBackupJob(a.db, consoleActor(), selection, null);
          err(`queued job ${job.id} (${job.label}, ${job.deviceIds.length} device(s)) for the running server; follow it with: confvault backup jobs`);
          out(job.id);
          return 0;
        });
      }
      case 'jobs': {
        const [, action, jobId, ...rest] = positionals;
        if (action === 'cancel') {
          if (!jobId || rest.length) throw new UsageError('backup jobs cancel: give one JOB_ID');
          return withAppliance(flags, (a) => {
            const r = cancelBackupJob(a.db, consoleActor(), jobId);
            err(`job ${jobId}: ${r.cancelled} queued backup(s) cancelled, ${r.stopping} running backup(s) stopping`);
            const j = getBackupJob(a.db, consoleActor().principal, jobId);
            out(jobLine(j, a.config.server.timezone));
            return 0;
          });
        }
        if (action === 'resume') {
          if (!jobId || rest.length) throw new UsageError('backup jobs resume: give one JOB_ID');
          return withAppliance(flags, (a) => {
            if (!serverRunning(a.dataDir)) return runAndWait(a, (owner) => ({ id: jobId, total: resumeBackupJob(a.db, consoleActor(), jobId, owner).resumed }));
            const r = resumeBackupJob(a.db, consoleActor(), jobId, null);
            err(`job ${jobId}: ${r.resumed} interrupted backup(s) queued again for the running server; follow it with: confvault backup jobs`);
            out(jobLine(getBackupJob(a.db, consoleActor().principal, jobId), a.config.server.timezone));
            return 0;
          });
        }
        if (action !== undefined) throw new UsageError(`backup jobs: unknown action "${action}" (only "cancel ID" or "resume ID")`);
        return withAppliance(flags, (a) => {
          const jobs = listBackupJobs(a.db, consoleActor().principal, { openOnly: values.all !== true, limit: 100 });
          if (values.json) out(JSON.stringify(jobs, null, 2));
          else for (const j of jobs) out(jobLine(j, a.config.server.timezone));
          if (!values.json && jobs.length === 0) err(values.all ? 'no backup jobs' : 'no backup job queued or running (--all lists finished ones too)');
          return 0;
        });
      }
      case 'import': {
        const deviceId = idOption(values.device, '--device');
        if (deviceId === undefined || !values.file) throw new UsageError('backup import: --device ID and --file PATH are required');
        let text: Buffer;
        try {
          // Bytes, not UTF-8: the import decodes them (UTF-16, a byte-order mark, Latin-1; src/lib/decode.ts).
          text = readFileSync(values.file);
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
          const r = importBackup(a.db, consoleActor(), a.snapshots, deviceId, text, at, { redact_key: importRedactKey(a) });
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
            redact_key: importRedactKey(a),
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
