// Bench row of issue #19 item 5: eight devices with 30 MB configurations backed up at once by a real `serve` while /healthz is probed.
import { memoryPlan } from '../../src/engine/capture/memory-budget';
import { SESSION_THREADS } from '../../src/engine/capture/session-pool';
import { defaultPoolSize } from '../../src/runtime/worker-pool';
import { runBigCaptures } from '../helpers/big-captures';
import { row, type Section } from './common';

/** The appliance's default [backup] capture_memory_mb, and what the process holds besides it (baseline, sessions' output, workers). */
const BUDGET_MB = 512;
const RSS_MARGIN_MB = 256;

export async function runBigCaptureBench(say: (line: string) => void, o: { devices: number; mb: number; cpuProfileDir?: string }): Promise<Section> {
  say(`  ${o.devices} devices x ${o.mb} MB at once, /healthz probed every 10 ms ...`);
  const r = await runBigCaptures({
    devices: o.devices,
    mb: o.mb,
    captureMemoryMb: BUDGET_MB,
    timeoutMs: 30 * 60_000,
    cpuProfileDir: o.cpuProfileDir,
    profileEventLoop: true,
  });
  say(`  done in ${r.seconds.toFixed(1)} s: ${r.succeeded}/${o.devices} stored, /healthz p99 ${r.p99Ms.toFixed(1)} ms, max ${r.maxMs.toFixed(0)} ms`);
  return {
    title: `Big configurations (${o.devices} x ${o.mb} MB at once, capture_memory_mb = ${BUDGET_MB})`,
    rows: [
      row(
        'backups stored, read back hash-verified',
        `${r.readable} / ${o.devices} in ${r.seconds.toFixed(0)} s`,
        'all',
        r.succeeded === o.devices && r.readable === o.devices,
        { seconds: r.seconds },
      ),
      row(
        'event loop time in ssh2 (its CPU profile)',
        `${(r.eventLoopSsh2Ms ?? NaN).toFixed(0)} ms`,
        '< 150 ms',
        r.eventLoopSsh2Ms !== null && r.eventLoopSsh2Ms < 150,
        { ssh2_ms: r.eventLoopSsh2Ms, main_thread_cpu_ms: r.mainThreadCpuMs, process_cpu_ms: r.processCpuMs },
      ),
      row('/healthz p99 during the run', `${r.p99Ms.toFixed(1)} ms (${r.probes} probes)`, '< 50 ms', r.p99Ms < 50, { p50: r.p50Ms, p99: r.p99Ms }),
      row('/healthz slowest answer', `${r.maxMs.toFixed(0)} ms`, '< 1,000 ms', r.maxMs < 1000 && r.failedProbes === 0, {
        max: r.maxMs,
        failed: r.failedProbes,
      }),
      row(
        'server peak RSS (VmHWM)',
        `${r.peakRssMb.toFixed(0)} MB`,
        `< ${BUDGET_MB + RSS_MARGIN_MB} MB (budget + ${RSS_MARGIN_MB})`,
        r.peakRssMb < BUDGET_MB + RSS_MARGIN_MB,
        {
          peak_rss_mb: r.peakRssMb,
        },
      ),
    ],
    notes: [
      heapNote(),
      'Simulated cisco-ios devices in their own process, the server a `confvault serve` child; the device sessions (SSH, login, capture) run on session worker threads, strip, redaction, fingerprint, hash and gzip on capture worker threads (src/engine/capture).',
      `/healthz p99 of the idle server before the run, this machine's own noise: ${r.baselineP99Ms.toFixed(1)} ms.`,
      `Event loop CPU ${(r.mainThreadCpuMs / 1000).toFixed(1)} s of the process's ${(r.processCpuMs / 1000).toFixed(1)} s (mostly answering the probes).`,
      ...(r.failures.length ? [`Failed backups: ${r.failures.join(', ')}.`] : []),
      `Probes over 100 ms (ms into the run:latency): ${r.slow.join(', ') || 'none'}.`,
    ],
  };
}

/** How the default budget is spent on this machine (memoryPlan, as serve computes it with the defaults). */
function heapNote(): string {
  const threads = SESSION_THREADS;
  const p = memoryPlan({ capture_memory_mb: BUDGET_MB, max_output_mb: 32 }, { sessionThreads: threads, maxCaptureWorkers: defaultPoolSize() });
  const mb = (h: typeof p.sessionHeap) => h.maxOldGenerationSizeMb + h.maxYoungGenerationSizeMb;
  return `Of capture_memory_mb = ${BUDGET_MB}: heap ceilings of ${threads} session thread(s) x ${mb(p.sessionHeap)} MB and ${p.captureWorkers} capture worker(s) x ${mb(p.captureHeap)} MB, ${p.captureBytes / 1024 / 1024} MB left for the captures' bytes in flight.`;
}
