// Fleet benchmark: 10,000 simulated devices of every built-in template with a transcript, backed up at concurrency 128 by the real runner.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtinTemplates } from '../../src/templates/index';
import { REPO_ROOT, forkBench, loadAverage, ms, nextMessage, num, percentile, row, stopChild, type Section } from './common';
import { startSimulator } from './engine-bench';
import { isEngineResult, isSeeded, type EngineJob, type SimInfo } from './engine-worker';

export interface FleetBenchOptions {
  devices: number;
  concurrency: number;
  /** Simulator processes sharing the fleet (one SSH server each): one process cannot feed 128 sessions on its own. */
  simProcesses: number;
  /** Single sessions with the FRR device after the run (the lab's "one FRR device" figure, on the simulator). */
  probeSessions: number;
  /** Write a CPU profile of the appliance process into this folder. */
  cpuProfileDir?: string;
}

const TRANSCRIPTS = path.join(REPO_ROOT, 'test/sim/transcripts');

/** The transcript of every built-in template that has one (more built-ins arrive with their transcripts), and the others. */
export function builtinTranscripts(): { files: string[]; without: string[] } {
  const files: string[] = [];
  const without: string[] = [];
  for (const t of builtinTemplates()) {
    const file = path.join(TRANSCRIPTS, `${t.name}.json`);
    if (existsSync(file)) files.push(file);
    else without.push(t.name);
  }
  return { files, without };
}

/** Several simulator processes, each serving a contiguous slice of the fleet on its own port, as one SimInfo. */
export async function startSimulators(
  devices: number,
  processes: number,
  files: string[],
  prefix: string[] = [],
): Promise<{ children: ChildProcess[]; info: SimInfo }> {
  const children: ChildProcess[] = [];
  try {
    const per = Math.ceil(devices / processes);
    const slices: Promise<{ child: ChildProcess; info: SimInfo }>[] = [];
    for (let first = 0; first < devices; first += per) {
      const n = Math.min(per, devices - first);
      slices.push(startSimulator(n, ['--first', String(first), '--transcripts', files.join(',')], prefix));
    }
    const started = await Promise.all(slices);
    children.push(...started.map((s) => s.child));
    const info: SimInfo = {
      host: started[0].info.host,
      port: started[0].info.port,
      devices: started.flatMap((s) => s.info.devices.map((d) => ({ ...d, port: s.info.port }))),
    };
    return { children, info };
  } catch (err) {
    await Promise.all(children.map((c) => stopChild(c)));
    throw err;
  }
}

export async function runFleetBench(say: (line: string) => void, o: FleetBenchOptions): Promise<Section> {
  const { files, without } = builtinTranscripts();
  if (files.length === 0) throw new Error('no built-in template has a transcript in test/sim/transcripts');
  const sims = await startSimulators(o.devices, o.simProcesses, files);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'confvault-bench-fleet-'));
  try {
    const templates = new Set(sims.info.devices.map((d) => d.template));
    say(`  ${o.simProcesses} simulator processes ready: ${num(sims.info.devices.length)} devices, ${templates.size} built-in templates mixed`);
    // The devices are added by another process first: the measured one starts as a server that already has them
    // (adding 10,000 devices in the same process would count their memory in its peak).
    const seeder = forkBench('engine-worker.ts');
    let deviceIds: number[];
    try {
      const seeded = nextMessage(seeder, isSeeded, 300_000);
      seeder.send({ engine: { sim: sims.info, concurrency: o.concurrency, dataDir, seedOnly: true } satisfies EngineJob });
      deviceIds = (await seeded).seeded;
    } finally {
      await stopChild(seeder);
    }
    const worker = forkBench('engine-worker.ts', [], { cpuProfileDir: o.cpuProfileDir });
    try {
      const answer = nextMessage(worker, isEngineResult, 900_000);
      const job: EngineJob = {
        sim: sims.info,
        concurrency: o.concurrency,
        dataDir,
        deviceIds,
        sessionProbe: { template: 'frr', times: o.probeSessions },
      };
      worker.send({ engine: job });
      const r = (await answer).engineResult;
      // The worker exits by itself once it has answered: a CPU profile is written only then, not when it is killed.
      if (o.cpuProfileDir) await new Promise((resolve) => setTimeout(resolve, 15_000).unref() && worker.once('exit', resolve));
      const wall = r.wall_ms / 1000;
      const loop = r.event_loop_delay_ms;
      const failed = Object.entries(r.failures)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${num(v)}`)
        .join(', ');
      const probe = r.session_probe_ms;
      const probeP50 = probe.length ? percentile(probe, 50) : NaN;
      const rows = [
        row('wall time, whole fleet', `${wall.toFixed(1)} s (${(r.devices / wall).toFixed(0)} devices/s)`, '< 60 s', wall < 60, { ...r }),
        row(
          'peak RSS of the appliance process',
          `${r.max_rss_mb.toFixed(0)} MB (${r.rss_before_run_mb.toFixed(0)} MB before the run; heap ${r.sampled_peak_mb.heap_used.toFixed(0)}, external ${r.sampled_peak_mb.external.toFixed(0)} MB at most)`,
          '< 300 MB',
          r.max_rss_mb < 300,
        ),
        row('event-loop delay during the run', `p99 ${ms(loop.p99)} (p50 ${ms(loop.p50)}, max ${ms(loop.max)})`, 'p99 < 50 ms', loop.p99 < 50),
        row('backups recorded successfully', `${num(r.succeeded)} / ${num(r.devices)}`, 'all', r.succeeded === r.devices),
        row('failures by code', failed || 'none', 'report only', null),
        row('distinct texts stored (own hostname in each)', `${num(r.distinct_texts)} (${num(r.texts_with_own_hostname)} checked)`, 'report only', null),
        row(
          'appliance CPU time',
          `${(r.cpu_user_s + r.cpu_system_s).toFixed(1)} s (user ${r.cpu_user_s.toFixed(1)}, system ${r.cpu_system_s.toFixed(1)})`,
          'report only',
          null,
        ),
      ];
      if (probe.length) {
        rows.push(
          row(
            'one FRR device, session time (simulator)',
            `median ${ms(probeP50)}, max ${ms(Math.max(...probe))} over ${probe.length} sessions one at a time`,
            '< 0.4 s (lab)',
            null,
            { sessions_ms: probe },
          ),
        );
      }
      return {
        title: `Backup fleet: ${num(r.devices)} simulated devices over SSH, ${templates.size} built-in templates mixed, concurrency ${r.concurrency}`,
        rows,
        notes: [
          `the real BackupRunner (SQLite and SnapshotStore in a temp data dir, the appliance's defaults, log level info) in one process, the devices added beforehand by another; ${o.simProcesses} simulator processes (test/sim/run-sim.ts --first) serve contiguous slices of the fleet; ${num(r.attempts)} connection attempts; load average after: ${loadAverage()}.`,
          `templates: every built-in with a transcript in test/sim/transcripts (${[...templates].sort().join(', ')})${without.length ? `; built-ins without a transcript, left out: ${without.join(', ')}` : ''}.`,
          'FRR session time: collect alone (connect, key exchange, login, commands, logout) on the simulator, after the run; the issue asks it of a lab device, which this figure stands in for until the lab is measured.',
        ],
      };
    } finally {
      await stopChild(worker);
    }
  } finally {
    await Promise.all(sims.children.map((c) => stopChild(c)));
    rmSync(dataDir, { recursive: true, force: true });
  }
}
