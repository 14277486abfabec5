// `confvault serve`: run the appliance (HTTP API, web interface, scheduler) until SIGTERM/SIGINT.
import { DB_FILE_NAME, ensureDataDir, openAppliance } from '../app/bootstrap';
import { createLogger } from '../lib/logger';
import { loadConfig } from '../config/config';
import { ensureFirstAdmin } from '../features/users/users.service';
import { createApp } from '../app/app';
import { loadTls, startServer, type RunningServer } from '../app/server';
import { VERSION } from '../version';
import { closeInterruptedBackups } from '../features/backups/backup-engine.service';
import { startDirectoryRecheck, startOidcRecheck } from '../features/directory/directory-recheck';
import { startRetention } from '../features/maintenance/retention.service';
import { startDbBackups } from '../features/maintenance/db-backups';
import { holdServeLock } from '../features/maintenance/db-restore';
import { startReplication } from '../features/replication/replication.service';
import { startLitestreamReplication } from '../features/replication/litestream.runner';
import { buildServices } from '../app/services';
import { startScheduler } from '../engine/scheduler';
import { warmCaptureWorkers } from '../engine/capture/capture-pool';
import { warmSessionWorkers } from '../engine/capture/session-pool';
import { startJobPickup } from '../engine/jobs';
import { startNotificationWorker } from '../features/notifications/notifications.worker';
import { runNotificationDiffs } from '../features/configs/workers/notification-diffs';
import { startCollectorEvents, startEventBackups } from '../events/start';
import { startGitMirror } from '../features/gitmirror/gitmirror.service';
import { startInventorySchedule } from '../features/inventory/inventory.schedule';
import { startTemplateFileReload } from '../features/templates/template-files.reload';
import { startSearchIndexer } from '../features/configs/search-index.service';
import { GLOBAL_OPTIONS_HELP, err, flagsOf, parse, type Command } from './common';
import { SERVE_SUMMARY } from './serve-summary';

export const serveCommand: Command = {
  name: 'serve',
  summary: SERVE_SUMMARY,
  help: `Usage: confvault serve [--listen HOST:PORT]

Starts the appliance. On first start it creates the database and the user "admin" and prints
that user's random password once on stderr. Logs are JSON lines on stdout.
An address that cannot be bound (port taken, no permission, not on this machine) ends it at
once with exit code 1 and one line on stderr, before any password is made or shown.
With [events] syslog_listen set it also receives syslog (UDP and TCP) and backs a device up
when its template's change events match one of its messages (trigger "event").
Custom templates in <data_dir>/templates/*.yaml are loaded at start and again on SIGHUP
(or with \`confvault template reload\`, which needs no signal); a SIGHUP while it starts
changes nothing, since the start reads them anyway.
SIGTERM or SIGINT stops it cleanly (in-flight requests finish, the database is closed); a
second signal while stopping exits at once.

  --listen HOST:PORT   address to listen on (or CONFVAULT_LISTEN; default 127.0.0.1:8080)

${GLOBAL_OPTIONS_HELP}`,
  async run(argv) {
    const { values } = parse(argv, { listen: { type: 'string' } }, false);
    const flags = flagsOf(values);
    const config = loadConfig(flags);
    // Unusable TLS files are a configuration error: report them before anything is created.
    loadTls(config);

    // Signals are caught from here on, each handled once: the first stops cleanly (even during start-up), a second
    // one while stopping ends the process at once.
    let stopping: string | null = null;
    let signalled: (signal: string) => void = () => undefined;
    const stopRequested = new Promise<string>((resolve) => (signalled = resolve));
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        err(`confvault serve: ${signal} again while stopping (${stopping}): exiting now`);
        process.exit(1);
      }
      stopping = signal;
      signalled(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    // SIGHUP (`systemctl reload`) re-reads the template files once they are read at all, further down; until then
    // Node's default would end the process, in the middle of a migration for instance. The first read comes after
    // any SIGHUP caught here, so this one does nothing.
    const hupBeforeStart = () => undefined;
    process.on('SIGHUP', hupBeforeStart);
    const forgetSignals = () => {
      process.removeListener('SIGTERM', onSignal);
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGHUP', hupBeforeStart);
    };

    const log = createLogger(config.log.level);
    // Held while serving: `db restore` refuses to replace the database under a running server.
    ensureDataDir(config.storage.data_dir);
    const lock = holdServeLock(config.storage.data_dir);
    const a = openAppliance(flags, config);
    const services = buildServices({ db: a.db, config, log, secrets: a.secrets, dataDir: a.dataDir, snapshots: a.snapshots });
    // Before the listener: a manual backup started by the first request must not be closed as interrupted.
    const closed = closeInterruptedBackups(a.db, Date.now());
    // Bind first: a port that is taken ends the start-up with one line, before any password is made or shown and
    // before the schedule holds the process.
    let server: RunningServer;
    try {
      server = await startServer(createApp(services), config);
    } catch (e) {
      a.close();
      lock.release();
      forgetSignals();
      throw e;
    }
    if (a.migration.applied.length) {
      log.info({ applied: a.migration.applied, backup: a.migration.backupFile }, 'database migrated');
    }
    if (closed) log.warn({ count: closed }, 'closed backups left running by an earlier stop as interrupted');
    const generated = await ensureFirstAdmin(a.db);
    if (generated) {
      err('');
      err('  confvault: first start. Log in as "admin" with this password (shown only now):');
      err(`    ${generated}`);
      err('  You will be asked to change it at first login.');
      err('');
    }
    // Before the schedule, so the first backup already uses the file templates (after the bind: a taken port logs nothing).
    const templateFiles = startTemplateFileReload(a.db, a.dataDir, log);
    process.removeListener('SIGHUP', hupBeforeStart);
    const runner = services.runner;
    warmCaptureWorkers();
    if (config.performance.session_threads) warmSessionWorkers();
    const scheduler = startScheduler(services, runner);
    // The configuration search's line index: filled after an upgrade and kept current, off the event loop (docs/search-index.md).
    const searchIndex = config.performance.search_index ? startSearchIndexer(services, log) : null;
    // Backup jobs queued by `backup run --no-wait`; jobs of the web interface run on the same executor.
    const jobs = startJobPickup(services.jobs, a.db, log);
    const retention = startRetention(a.db, a.snapshots, a.dataDir, config, log);
    const notifier = startNotificationWorker({ db: a.db, secrets: a.secrets, snapshots: a.snapshots, config, diffs: runNotificationDiffs, log });
    const gitMirror = startGitMirror({ db: a.db, store: a.snapshots, config, log });
    const inventory = startInventorySchedule({ db: a.db, secrets: a.secrets, config, log });
    const events = await startEventBackups(services, runner);
    // Syslog forwarded by collectors (docs/collectors.md): POST /collector/v1/events answers 503 until this is set.
    const collectorEvents = startCollectorEvents(services, runner, events?.events ?? null);
    services.collectorEvents = collectorEvents.sink;
    const dbCopies = startDbBackups(a.db, a.dataDir, config, log);
    const replication =
      config.replication.enabled && config.replication.engine === 'litestream'
        ? startLitestreamReplication(a.db, a.snapshots, a.dataDir, DB_FILE_NAME, config, log)
        : startReplication(a.db, a.snapshots, a.dataDir, config, log);
    const directory = startDirectoryRecheck(a.db, config.auth.ldap, log);
    const oidcRecheck = startOidcRecheck(a.db, a.secrets, config.auth.oidc, log);
    log.info({ url: server.url, version: VERSION, data_dir: a.dataDir }, 'confvault listening');

    const signal = await stopRequested;
    log.info({ signal }, 'shutting down');
    clearInterval(retention);
    templateFiles.stop();
    // Stop accepting and let in-flight requests finish; running backups are cancelled and recorded as interrupted.
    await Promise.all([
      server.close(),
      scheduler.stop(),
      searchIndex?.stop(),
      jobs.stop(),
      notifier.stop(),
      gitMirror.stop(),
      inventory.stop(),
      events?.stop(),
      collectorEvents.stop(),
      dbCopies.stop(),
      replication.stop(),
      directory.stop(),
      oidcRecheck.stop(),
    ]);
    a.close();
    lock.release();
    forgetSignals();
    log.info('stopped');
    return 0;
  },
};
