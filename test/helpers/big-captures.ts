// Big configurations at once against a real `serve` (issue #19, item 5): simulated devices with N MB each in their own process, /healthz probed throughout, the server's peak RSS read from /proc.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { requestBackupJob } from '../../src/features/backups/jobs.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { REPO_ROOT, TSX_LOADER, spawnServe, startTestAppliance, tempDir } from './appliance';
import { mainThreadProfile, timeInCode } from './cpu-profile';
import { seedBuiltinTemplate, seedCredential, seedDevice } from './seed';

export interface BigCaptureOptions {
  devices: number;
  /** Size of each device's configuration, in MB (10^6 bytes). */
  mb: number;
  /** `[backup] capture_memory_mb` for `serve` (default: the appliance's). */
  captureMemoryMb?: number;
  /** `[backup] max_output_mb` for `serve` (default: the appliance's); it sizes the capture workers' heaps. */
  maxOutputMb?: number;
  /** Gives up after this long (the caller's test fails on the missing backups). */
  timeoutMs?: number;
  /** Write a CPU profile of the `serve` process into this folder. */
  cpuProfileDir?: string;
  /** Profile the server's event loop (into cpuProfileDir, or a scratch folder) to report eventLoopSsh2Ms. */
  profileEventLoop?: boolean;
}

export interface BigCaptureResult {
  probes: number;
  /** Probes that got no answer within 10 s (or none at all). */
  failedProbes: number;
  /** Probes over 100 ms: `ms since the probing began:latency`. */
  slow: string[];
  /** /healthz p99 of the idle server over the BASELINE_MS before the backups: the machine's own noise. */
  baselineP99Ms: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The server process's peak resident set (VmHWM), MB. */
  peakRssMb: number;
  /** The server's resident memory before the first backup (its own baseline: the runtime, the code, the database). */
  idleRssMb: number;
  /** From the job's start to the last backup's end, seconds. */
  seconds: number;
  succeeded: number;
  /** Failed backups by failure type ("TIMEOUT x2"), empty when all succeeded. */
  failures: string[];
  /** One stored text, for the caller to check (redaction, size). */
  sample: { size: number; hasSecret: boolean } | null;
  /** Successful records whose content reads back, verified against its hash, at the configuration's size at least. */
  readable: number;
  /** CPU time of the server's main thread (the event loop) from the job's start to the last backup's end, ms. */
  mainThreadCpuMs: number;
  /** CPU time of the whole server process (every thread) over the same span, ms. */
  processCpuMs: number;
  /** Time the event loop ran ssh2's code (decrypting, parsing), from its CPU profile; null unless profileEventLoop. */
  eventLoopSsh2Ms: number | null;
}

const SECRET = 'Bulk-Snmp-C0mmunity';
/** How long the idle server is probed before the backups start. */
const BASELINE_MS = 3000;

/** A cisco-ios transcript whose running configuration is about `mb` MB: many interfaces, with an SNMP community to redact. */
function bigTranscript(mb: number): Record<string, unknown> {
  const base = JSON.parse(readFileSync(path.join(REPO_ROOT, 'test/sim/transcripts/cisco-ios.json'), 'utf8')) as { commands: Record<string, string> };
  const lines: string[] = ['Building configuration...', '', 'hostname core-sw1', `snmp-server community ${SECRET} RO`];
  for (let i = 0, size = 0; size < mb * 1_000_000; i++) {
    const block = `interface GigabitEthernet${i >> 6}/${i & 63}\n description uplink ${i % 97} to rack ${(i * 7919) % 10007}\n switchport access vlan ${i % 4000}\n!`;
    lines.push(block);
    size += block.length + 1;
  }
  lines.push('end');
  return { ...base, commands: { ...base.commands, 'show running-config': lines.join('\n') } };
}

/** CPU time (user + system) of a process (`/proc/PID/stat`) or of one of its threads (`/proc/PID/task/TID/stat`), ms. */
function cpuMs(statFile: string): number {
  const stat = readFileSync(statFile, 'utf8');
  // The fields after the command name, which is in parentheses and may hold spaces: utime and stime are 14th and 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** The kernel's clock ticks per second for /proc times (USER_HZ): 100 on Linux. */
const CLOCK_TICKS = 100;

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] : 0;
}

/** The process's peak (VmHWM) or current (VmRSS) resident memory in MB. */
function rssMb(pid: number, which: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`${which}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Starts the simulator process (one device per configuration), returns its port and device logins. */
async function startSimProcess(transcriptFile: string, devices: number) {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, 'test/sim/run-sim.ts', '--devices', String(devices), '--transcripts', transcriptFile], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const first = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`simulator exited with ${code}`)));
  });
  const info = JSON.parse(first) as { port: number; devices: { name: string; password: string; enable_secret: string | null }[] };
  return { child, ...info };
}

export async function runBigCaptures(o: BigCaptureOptions): Promise<BigCaptureResult> {
  const scratch = tempDir('confvault-big-');
  const transcriptFile = path.join(scratch, 'big-ios.json');
  writeFileSync(transcriptFile, JSON.stringify(bigTranscript(o.mb)));
  const t = await startTestAppliance();
  const sim = await startSimProcess(transcriptFile, o.devices);
  const dataArgs = ['--data-dir', t.services.dataDir];
  let served: Awaited<ReturnType<typeof spawnServe>> | null = null;
  const profileDir = o.cpuProfileDir ?? (o.profileEventLoop ? path.join(scratch, 'profile') : null);
  let result: BigCaptureResult;
  try {
    const { db, secrets } = t.services;
    const template_id = seedBuiltinTemplate(db, 'cisco-ios');
    for (const d of sim.devices) {
      const credential_id = seedCredential(db, secrets, {
        name: `c-${d.name}`,
        username: d.name,
        password: d.password,
        enable_secret: d.enable_secret ?? undefined,
      });
      seedDevice(db, { name: d.name, port: sim.port, credential_id, template_id });
    }
    const configFile = path.join(scratch, 'appliance.conf');
    const backup = [o.captureMemoryMb ? `capture_memory_mb = ${o.captureMemoryMb}` : '', o.maxOutputMb ? `max_output_mb = ${o.maxOutputMb}` : ''];
    writeFileSync(configFile, `[backup]\n${backup.filter(Boolean).join('\n')}\n`);
    served = await spawnServe(
      [...dataArgs, '--config', configFile, '--listen', '127.0.0.1:0'],
      {
        CONFVAULT_LOG_LEVEL: 'info',
        CONFVAULT_BACKUP_SCHEDULE: '0 0 1 1 *',
        // As build/confvault.service starts the appliance (docs/operations.md, the capture pipeline).
        MALLOC_MMAP_THRESHOLD_: '131072',
      },
      { nodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [] },
    );
    const url = served.url;
    const latencies: number[] = [];
    let probing = true;
    let failures = 0;
    const slow: string[] = [];
    const startedAt = performance.now();
    const probe = (async () => {
      while (probing) {
        const t0 = performance.now();
        try {
          const r = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) });
          await r.arrayBuffer();
          latencies.push(performance.now() - t0);
          if (performance.now() - t0 > 100) slow.push(`${Math.round(t0 - startedAt)}:${Math.round(performance.now() - t0)}`);
        } catch {
          failures++;
          latencies.push(performance.now() - t0);
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    // The idle server first: what this machine's load alone costs a probe, before any backup runs.
    await new Promise((r) => setTimeout(r, BASELINE_MS));
    const baseline = latencies.splice(0).sort((a, b) => a - b);
    const pid = served.child.pid as number;
    const idleRss = rssMb(pid, 'VmRSS');
    // The main thread's task id is the process id.
    const cpuAtStart = { main: cpuMs(`/proc/${pid}/task/${pid}/stat`), all: cpuMs(`/proc/${pid}/stat`) };
    slow.length = 0;
    const began = Date.now();
    // Queued as `backup run --all --no-wait` does, from this process: a CLI child starting up would compete for the CPU.
    requestBackupJob(db, SYSTEM_ACTOR, { all: true }, null);
    const deadline = began + (o.timeoutMs ?? 120_000);
    const done = () => db.prepare('SELECT count(*) FROM backups WHERE finished_at IS NOT NULL').pluck().get() as number;
    while (done() < o.devices && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const seconds = (Date.now() - began) / 1000;
    const mainThreadCpuMs = cpuMs(`/proc/${pid}/task/${pid}/stat`) - cpuAtStart.main;
    const processCpuMs = cpuMs(`/proc/${pid}/stat`) - cpuAtStart.all;
    probing = false;
    await probe;
    const peak = rssMb(served.child.pid as number, 'VmHWM');
    const succeeded = db.prepare('SELECT count(*) FROM backups WHERE success = 1').pluck().get() as number;
    const failedTypes = db.prepare("SELECT failure_type || ' x' || count(*) FROM backups WHERE success = 0 GROUP BY failure_type").pluck().all() as string[];
    const hashes = db.prepare('SELECT config_snapshot_hash FROM backups WHERE success = 1').pluck().all() as string[];
    // Every version reads back (the store verifies each against its hash) and holds the whole configuration.
    const readable = hashes.filter((h) => (t.services.snapshots.read(h)?.length ?? 0) >= o.mb * 1_000_000).length;
    const text = hashes.length ? t.services.snapshots.read(hashes[0]) : null;
    const sorted = [...latencies].sort((a, b) => a - b);
    result = {
      probes: sorted.length,
      failedProbes: failures,
      slow,
      baselineP99Ms: percentile(baseline, 99),
      p50Ms: percentile(sorted, 50),
      p95Ms: percentile(sorted, 95),
      p99Ms: percentile(sorted, 99),
      maxMs: sorted[sorted.length - 1] ?? 0,
      peakRssMb: peak,
      idleRssMb: idleRss,
      seconds,
      succeeded,
      failures: failedTypes,
      sample: text === null ? null : { size: Buffer.byteLength(text), hasSecret: text.includes(SECRET) },
      readable,
      mainThreadCpuMs,
      processCpuMs,
      eventLoopSsh2Ms: null,
    };
    await served.stop();
    // The profile is written as serve exits.
    const profile = o.profileEventLoop && profileDir ? mainThreadProfile(profileDir, pid) : null;
    if (profile) result.eventLoopSsh2Ms = timeInCode(profile, '/node_modules/ssh2/');
    return result;
  } finally {
    if (served && served.child.exitCode === null && served.child.signalCode === null) await served.stop();
    sim.child.kill('SIGTERM');
    await t.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
