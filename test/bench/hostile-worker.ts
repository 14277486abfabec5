// Child process of the hostile-load bench: one appliance process (HTTP server and backup runner together, as in production) whose event loop is measured.
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance as perfHooks } from 'node:perf_hooks';
import { openAppliance } from '../../src/app/bootstrap';
import { createLogger } from '../../src/lib/logger';
import { loadConfig } from '../../src/config/config';
import { BackupRunner } from '../../src/engine/runner';
import { importBackup } from '../../src/features/backups/import.service';
import { ensureFirstAdmin } from '../../src/features/users/users.service';
import { createApp } from '../../src/app/app';
import { buildServices } from '../../src/app/services';
import type { AppServices } from '../../src/http/context';
import { startServer } from '../../src/app/server';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { isEntryPoint, reportFatal, sendToParent } from './common';
import type { SimInfo } from './engine-worker';

export const BENCH_ADMIN_PASSWORD = 'bench-admin-password-1';

export interface HostileReady {
  url: string;
  bigDevice: number;
  /** Two 10 MB versions with scattered edits, and a third unrelated to them. */
  versions: { a: string; b: string; c: string };
  searchDevices: number;
  seed_s: number;
}

export interface HostileRunDone {
  wall_ms: number;
  devices: number;
  succeeded: number;
  eld_p50_ms: number;
  eld_p99_ms: number;
  eld_max_ms: number;
  /** Share of the load's wall time the main thread was busy (performance.eventLoopUtilization): what queues requests, whatever else runs on the machine. */
  elu: number;
}

export const isHostileReady = (m: unknown): m is { ready: HostileReady } => !!m && typeof m === 'object' && 'ready' in m;
export const isHostileRunDone = (m: unknown): m is { runDone: HostileRunDone } => !!m && typeof m === 'object' && 'runDone' in m;

/** About `mb` MB of configuration lines; `salt` changes every `every`-th line (0: none). */
function bigConfig(mb: number, tag: string, salt: string, every: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < mb * 1_000_000; i++) {
    const l =
      every > 0 && i % every === 0
        ? `interface ${tag}-${i} description ${salt}-${i}`
        : `interface ${tag}-${i} description uplink to the core switch number ${i % 97} port ${i % 48}`;
    lines.push(l);
    size += l.length + 1;
  }
  return lines.join('\n') + '\n';
}

async function main(sim: SimInfo): Promise<void> {
  const t0 = performance.now();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'confvault-bench-hostile-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  process.once('SIGTERM', () => process.exit(0));
  const config = loadConfig({ dataDir: path.join(dir, 'data'), listen: '127.0.0.1:0' }, { CONFVAULT_LOG_LEVEL: 'warn', CONFVAULT_BACKUP_CONCURRENCY: '64' });
  const a = openAppliance({}, config);
  const log = createLogger(config.log.level);
  await ensureFirstAdmin(a.db, BENCH_ADMIN_PASSWORD);
  const services: AppServices = buildServices({ db: a.db, config, log, secrets: a.secrets, dataDir: a.dataDir, snapshots: a.snapshots });
  const { db, secrets, snapshots } = a;

  const simIds = db.transaction(() =>
    sim.devices.map((d) => {
      const credential_id = seedCredential(db, secrets, {
        name: `cred-${d.name}`,
        username: d.name,
        password: d.password,
        ...(d.enable_secret ? { enable_secret: d.enable_secret } : {}),
      });
      return seedDevice(db, { name: d.name, hostname: sim.host, port: sim.port, credential_id, template_id: seedBuiltinTemplate(db, d.template) });
    }),
  )();

  // The search corpus: 200 devices with long, almost-matching description lines (a backtracking engine's worst case).
  const cred = seedCredential(db, secrets, { name: 'bench-search', username: 'u', password: 'p' });
  const tpl = seedBuiltinTemplate(db, 'cisco-ios');
  const searchDevices = 200;
  for (let d = 0; d < searchDevices; d++) {
    const id = seedDevice(db, { name: `search-${d}`, port: 22, credential_id: cred, template_id: tpl });
    const body = Array.from({ length: 1_000 }, (_, i) =>
      i % 5 === 0 ? ` description uplink to the ${'core '.repeat(30)}${i}` : ` ip address 10.${d}.${i % 256}.1 255.255.255.0`,
    ).join('\n');
    importBackup(db, SYSTEM_ACTOR, snapshots, id, `hostname search-${d}\n${body}\nend\n`, Date.now() - 3_600_000);
  }

  const bigDevice = seedDevice(db, { name: 'big-10mb', port: 22, credential_id: cred, template_id: tpl });
  const now = Date.now();
  const versions = {
    a: importBackup(db, SYSTEM_ACTOR, snapshots, bigDevice, bigConfig(10, 'ge', 'v1', 0), now - 3 * 3_600_000).id,
    b: importBackup(db, SYSTEM_ACTOR, snapshots, bigDevice, bigConfig(10, 'ge', 'v2', 500), now - 2 * 3_600_000).id,
    c: importBackup(db, SYSTEM_ACTOR, snapshots, bigDevice, bigConfig(10, 'xe', 'v3', 3), now - 3_600_000).id,
  };

  const server = await startServer(createApp(services), config);
  const runner = new BackupRunner({ db, secrets, snapshots, config, log });
  await sendToParent({ ready: { url: server.url, bigDevice, versions, searchDevices, seed_s: (performance.now() - t0) / 1000 } satisfies HostileReady });

  process.once('message', (m: { start?: { run: boolean; seconds: number } }) => {
    const eld = monitorEventLoopDelay({ resolution: 10 });
    eld.enable();
    const elu0 = perfHooks.eventLoopUtilization();
    const start = performance.now();
    const work =
      m.start?.run === false
        ? new Promise<[]>((res) => setTimeout(() => res([]), (m.start?.seconds ?? 15) * 1000))
        : runner.run(simIds, { trigger: 'schedule' });
    work
      .then(async (results) => {
        const wall = performance.now() - start;
        eld.disable();
        const elu = perfHooks.eventLoopUtilization(elu0).utilization;
        const done: HostileRunDone = {
          wall_ms: wall,
          devices: results.length,
          succeeded: results.filter((r) => r.success).length,
          eld_p50_ms: eld.percentile(50) / 1e6,
          eld_p99_ms: eld.percentile(99) / 1e6,
          eld_max_ms: eld.max / 1e6,
          elu,
        };
        // The parent stops this process (SIGTERM) once its clients are done.
        await sendToParent({ runDone: done });
      })
      .catch(reportFatal);
  });
}

if (isEntryPoint(import.meta.url)) {
  process.once('message', (m: unknown) => {
    const sim = (m as { sim?: SimInfo }).sim;
    if (!sim) return reportFatal(new Error('expected { sim }'));
    main(sim).catch(reportFatal);
  });
}
