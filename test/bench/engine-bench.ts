// Backup engine benchmark: 1,000 simulated devices (simulator in its own process) backed up at concurrency 64, and the storage cost of a 200 KB backup.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT, TSX_LOADER, forkBench, loadAverage, ms, nextMessage, num, row, stopChild, type Section } from './common';
import { isEngineResult, type SimInfo } from './engine-worker';
import { isStorageResult, type Timing } from './storage-bench';

export interface EngineBenchOptions {
  devices: number;
  concurrency: number;
  storageBackups: number;
}

/**
 * test/sim/run-sim.ts as its own process: all vendor transcripts in turn, every device with its own hostname; `extra`
 * passes more of its options (--first, --transcripts); `prefix` runs it through another command first (`nice -n 10`).
 */
export async function startSimulator(devices: number, extra: string[] = [], prefix: string[] = []): Promise<{ child: ChildProcess; info: SimInfo }> {
  const [cmd, ...args] = [
    ...prefix,
    process.execPath,
    '--import',
    TSX_LOADER,
    path.join(REPO_ROOT, 'test/sim/run-sim.ts'),
    '--devices',
    String(devices),
    ...extra,
  ];
  const child = spawn(cmd, args, {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const info = await new Promise<SimInfo>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('the simulator did not start within 60 s')), 60_000);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(JSON.parse(out.slice(0, nl)) as SimInfo);
      }
    });
    child.once('exit', (code) => reject(new Error(`the simulator exited (${code}) before it was ready`)));
  });
  child.stdout.resume();
  return { child, info };
}

export async function runEngineBench(say: (line: string) => void, o: EngineBenchOptions): Promise<Section[]> {
  const sim = await startSimulator(o.devices);
  let fleet: Section;
  try {
    const templates = new Set(sim.info.devices.map((d) => d.template));
    say(`  simulator ready: ${num(sim.info.devices.length)} devices, ${templates.size} vendor transcripts, port ${sim.info.port}`);
    const worker = forkBench('engine-worker.ts');
    try {
      const answer = nextMessage(worker, isEngineResult, 600_000);
      worker.send({ engine: { sim: sim.info, concurrency: o.concurrency } });
      const r = (await answer).engineResult;
      const wall = r.wall_ms / 1000;
      const sp = r.sampled_peak_mb;
      const failed = Object.entries(r.failures)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      fleet = {
        title: `Backup engine: ${num(r.devices)} simulated devices over SSH, concurrency ${r.concurrency}`,
        rows: [
          row('wall time, whole fleet', `${wall.toFixed(1)} s (${(r.devices / wall).toFixed(1)} devices/s)`, '<= 30 s', wall <= 30, { ...r }),
          row(
            'peak RSS of the runner process',
            `${r.max_rss_mb.toFixed(0)} MB (${r.rss_before_run_mb.toFixed(0)} MB before the run; heap ${sp.heap_used.toFixed(0)}, external ${sp.external.toFixed(0)} MB at most)`,
            '< 250 MB',
            r.max_rss_mb < 250,
          ),
          row(
            'backups recorded successfully',
            `${num(r.succeeded)} / ${num(r.devices)}${failed ? ` (failed: ${failed})` : ''}`,
            'all',
            r.succeeded === r.devices,
          ),
          row('distinct texts stored (own hostname in each)', `${num(r.distinct_texts)} (${num(r.texts_with_own_hostname)} checked)`, 'report only', null),
          row(
            'runner CPU time',
            `${(r.cpu_user_s + r.cpu_system_s).toFixed(1)} s (user ${r.cpu_user_s.toFixed(1)}, system ${r.cpu_system_s.toFixed(1)})`,
            'report only',
            null,
          ),
        ],
        notes: [
          `runner (BackupRunner, real SQLite and SnapshotStore in a temp data dir, log level info) in one process, the simulator in another; ${templates.size} vendor transcripts; ${r.attempts} connection attempts; load average after: ${loadAverage()}.`,
        ],
      };
    } finally {
      await stopChild(worker);
    }
  } finally {
    await stopChild(sim.child);
  }

  say(`  storage path: ${o.storageBackups} backups of distinct 200 KB configurations`);
  const child = forkBench('storage-bench.ts', [String(o.storageBackups)]);
  let s;
  try {
    s = (await nextMessage(child, isStorageResult, 300_000)).storage;
  } finally {
    await stopChild(child);
  }
  const t = (x: Timing) => `mean ${ms(x.mean_ms)}, p99 ${ms(x.p99_ms)}`;
  const storage: Section = {
    title: `Storage cost of one backup of a ${num(s.text_bytes)}-byte configuration (${s.backups} distinct texts)`,
    rows: [
      row('one backup: fingerprint + startBackup + finishBackup', t(s.total), 'report only', null, { ...s }),
      row('  change fingerprint (split, filter, SHA-256)', t(s.fingerprint), 'report only', null),
      row('  startBackup (INSERT, WAL commit, synchronous=NORMAL as the runner does)', t(s.start_backup), 'report only', null),
      row('  finishBackup (SnapshotStore.putAsync + record transaction; wall time, the loop is free meanwhile)', t(s.finish_backup), 'report only', null),
      row('SnapshotStore.put alone (SHA-256, gzip, write, 2 fsyncs)', t(s.put_alone), 'report only', null),
    ],
    notes: [
      `gzip stores ${num(s.stored_bytes)} bytes per text (${((s.stored_bytes / s.text_bytes) * 100).toFixed(0)}%); the engine's records commit with synchronous=NORMAL as in production (withEngineSync, src/db/open.ts).`,
    ],
  };
  return [fleet, storage];
}
