// Shared pieces of the benchmark: result rows, percentiles, machine facts, child processes through tsx.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(BENCH_DIR, '../..');
/** tsx's loader by absolute URL, so children resolve it wherever they run. */
export const TSX_LOADER = pathToFileURL(path.join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

export type Status = 'PASS' | 'MISS' | 'INFO';

/** One printed line of a section's table and one entry of results.json. */
export interface Row {
  name: string;
  value: string;
  target: string;
  status: Status;
  /** Raw numbers behind the printed value (ms, req/s, MB...). */
  data?: Record<string, unknown>;
}

export interface Section {
  title: string;
  rows: Row[];
  /** Free-text remarks printed under the table (how it was measured, why a MISS). */
  notes: string[];
}

export function row(name: string, value: string, target: string, pass: boolean | null, data?: Record<string, unknown>): Row {
  return { name, value, target, status: pass === null ? 'INFO' : pass ? 'PASS' : 'MISS', data };
}

/** Nearest-rank percentile of unsorted samples. */
export function percentile(samples: ArrayLike<number>, p: number): number {
  const s = Float64Array.from(samples).sort();
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

export function mean(samples: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i];
  return samples.length ? sum / samples.length : NaN;
}

export const ms = (v: number) => `${v.toFixed(v < 10 ? 2 : 1)} ms`;
export const num = (v: number) => Math.round(v).toLocaleString('en-US');

export function loadAverage(): string {
  return os
    .loadavg()
    .map((v) => v.toFixed(2))
    .join(' / ');
}

export interface MachineInfo {
  date: string;
  cpus: number;
  model: string;
  node: string;
  memory_gb: number;
}

export function machineInfo(): MachineInfo {
  let model = os.cpus()[0]?.model ?? 'unknown';
  try {
    model = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? model;
  } catch {
    /* not Linux: os.cpus() is good enough */
  }
  return {
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    cpus: os.availableParallelism(),
    model,
    node: process.version,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
  };
}

/** CPU seconds (user + system) a process has used so far, from /proc; null where there is no /proc. */
export function processCpuSeconds(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100 per second on Linux)
  } catch {
    return null;
  }
}

/**
 * Start a bench module as a child process with an IPC channel (TypeScript through tsx). Its stdout goes
 * to /dev/null unless asked (the appliance logs a line per request there); stderr is shown.
 */
export function forkBench(
  file: string,
  args: string[] = [],
  opts: { stdout?: 'ignore' | 'inherit'; env?: NodeJS.ProcessEnv; cpuProfileDir?: string } = {},
): ChildProcess {
  const profile = opts.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProfileDir}`] : [];
  return fork(path.join(BENCH_DIR, file), args, {
    execArgv: ['--import', TSX_LOADER, ...profile],
    stdio: ['ignore', opts.stdout ?? 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, ...opts.env },
  });
}

/** The next IPC message of a child that satisfies `accept`; rejects if the child exits first or the time runs out. */
export function nextMessage<T>(child: ChildProcess, accept: (m: unknown) => m is T, timeoutMs = 120_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`no answer from child ${child.pid} within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (m: unknown) => {
      if (m && typeof m === 'object' && 'error' in m) return finish(new Error(`child ${child.pid}: ${String(m.error)}`));
      if (accept(m)) finish(null, m);
    };
    const onExit = (code: number | null, signal: string | null) => finish(new Error(`child ${child.pid} exited (${code ?? signal}) before answering`));
    function finish(err: Error | null, m?: T) {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(m as T);
    }
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Stop a child we started (by its own handle) and wait for it to go. */
export function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill(signal);
  });
}

/** Whether the module at `moduleUrl` is the process's entry point (children's modules are also imported for their types and guards). */
export function isEntryPoint(moduleUrl: string): boolean {
  return !!process.argv[1] && moduleUrl === pathToFileURL(path.resolve(process.argv[1])).href;
}

/** In a child: send a message to the parent and wait until it is handed over. */
export function sendToParent(message: unknown): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!process.send) return reject(new Error('not started with an IPC channel'));
    process.send(message, (err: Error | null) => (err ? reject(err) : resolve()));
  });
}

/** In a child: report an unexpected failure to the parent instead of dying silently. */
export function reportFatal(err: unknown): void {
  const text = err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`${text}\n`);
  if (process.send) process.send({ error: err instanceof Error ? err.message : String(err) }, () => process.exit(1));
  else process.exit(1);
}
