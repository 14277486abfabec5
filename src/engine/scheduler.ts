// The backup schedule (cron from the config, overridable per group and per device) and the light reachability probe.
import { Cron } from 'croner';
import { listProbeTargets, recordReachability, scheduleReader } from '../features/backups/backup-engine.service';
import { leaveZonedToCollectors, zonedDeviceIds } from '../features/collectors/collector-work.service';
import { workerSignal, type BackupRunner, type RunnerDeps } from './runner';
import { connectTcp } from './transports/tcp';
import { CollectError } from './types';

export interface SchedulerHandle {
  stop(): Promise<void>;
}

/**
 * Starts the schedule: one cron job per distinct expression, re-read from the database every minute so
 * schedule changes made in the API or UI apply without a restart. Runs go through the shared runner, which
 * never backs up one device twice at once.
 */
export function startScheduler(deps: RunnerDeps, runner: BackupRunner): SchedulerHandle {
  const { db, config, log } = deps;
  const jobs = new Map<string, Cron>();
  // Read again only after a change to devices' or groups' schedules (schema 0030), not at every minute and firing.
  const schedules = scheduleReader(db, config.backup.schedule);
  const controller = new AbortController();
  const inFlight = new Set<Promise<unknown>>();
  const track = (p: Promise<unknown>) => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };

  const fire = (expr: string) => {
    const ids = schedules().get(expr) ?? [];
    // Remote collectors (docs/collectors.md): devices of a zone are queued for its collector, not run here.
    const todo = leaveZonedToCollectors(db, ids, 'schedule').filter((id) => !runner.isRunning(id));
    if (todo.length === 0) return;
    log?.info({ schedule: expr, devices: todo.length }, 'scheduled backup run');
    track(runner.run(todo, { trigger: 'schedule', jitterMs: config.backup.jitter * 1000, signal: controller.signal }));
  };

  const sync = () => {
    let wanted: Set<string>;
    try {
      // The appliance's own schedule always runs: a device added later (even the first one) is picked up at
      // its next firing, not only after the next re-read. Overrides still wait for the re-read.
      wanted = new Set([config.backup.schedule, ...schedules().keys()]);
    } catch (err) {
      log?.error({ err }, 'cannot read schedules');
      return;
    }
    for (const [expr, job] of jobs) {
      if (!wanted.has(expr)) {
        job.stop();
        jobs.delete(expr);
      }
    }
    for (const expr of wanted) {
      if (jobs.has(expr)) continue;
      try {
        jobs.set(expr, new Cron(expr, { protect: true, timezone: config.server.timezone }, () => fire(expr)));
      } catch (err) {
        log?.warn({ schedule: expr, problem: (err as Error).message }, 'invalid schedule ignored');
      }
    }
  };
  sync();
  const resync = setInterval(sync, 60_000);
  resync.unref();

  let probe: NodeJS.Timeout | null = null;
  if (config.backup.reachability_interval > 0) {
    probe = setInterval(() => track(probeReachability(deps, runner, controller.signal)), config.backup.reachability_interval * 1000);
    probe.unref();
  }

  return {
    async stop() {
      clearInterval(resync);
      if (probe) clearInterval(probe);
      for (const job of jobs.values()) job.stop();
      controller.abort();
      await Promise.allSettled([...inFlight]);
    },
  };
}

/**
 * Between backups, a TCP connect to each enabled device's management port keeps reachability fresh.
 * Devices being backed up are skipped: the backup itself will tell.
 */
export async function probeReachability(deps: RunnerDeps, runner: BackupRunner, signal?: AbortSignal): Promise<number> {
  const { db, config } = deps;
  // Devices of remote zones are out of the central's reach by design: their collector's backups tell.
  const zoned = zonedDeviceIds(db);
  const devices = listProbeTargets(db).filter((d) => !zoned.has(d.id));
  let next = 0;
  const worker = async () => {
    const own = workerSignal(signal);
    while (next < devices.length && !own?.aborted) {
      const d = devices[next++];
      if (runner.isRunning(d.id)) continue;
      try {
        const sock = await connectTcp({
          host: d.hostname,
          port: d.port,
          timeout_ms: config.backup.connect_timeout * 1000,
          service: d.protocol === 'ssh' ? 'SSH' : 'Telnet',
          signal: own,
        });
        sock.destroy();
        recordReachability(db, d.id, 'reachable', null);
      } catch (err) {
        if (own?.aborted) return;
        const message = err instanceof CollectError ? err.message : 'Connection failed.';
        recordReachability(db, d.id, 'unreachable', message);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(32, devices.length) }, worker));
  return devices.length;
}
