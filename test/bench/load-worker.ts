// Load generator as its own process (autocannon's programmatic API), so it never shares the event loop of the server it measures.
import { createRequire } from 'node:module';
import { isEntryPoint, percentile, reportFatal, sendToParent } from './common';

export interface LoadJob {
  url: string;
  /** Request paths, used in turn (one per request, across all connections). */
  paths: string[];
  headers: Record<string, string>;
  /** A header that takes the next of these values on each request (with `headers` on every request). */
  rotate?: { header: string; values: string[] };
  connections: number;
  seconds: number;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  mb_per_s: number;
}

export function isLoadJob(m: unknown): m is { load: LoadJob } {
  return !!m && typeof m === 'object' && 'load' in m;
}

export function isLoadResult(m: unknown): m is { result: LoadResult } {
  return !!m && typeof m === 'object' && 'result' in m;
}

interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  setupRequest?: (req: AutocannonRequest) => AutocannonRequest;
}
interface AutocannonResult {
  duration: number;
  requests: { total: number; average: number };
  throughput: { average: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
interface AutocannonInstance {
  on(event: 'response', fn: (client: unknown, status: number, bytes: number, ms: number) => void): void;
}
type Autocannon = (
  opts: { url: string; connections: number; duration: number; headers: Record<string, string>; requests: AutocannonRequest[] },
  done: (err: Error | null, result: AutocannonResult) => void,
) => AutocannonInstance;

// autocannon ships no type declarations; the little used here is typed above.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

function run(job: LoadJob): Promise<LoadResult> {
  let next = 0;
  let turn = 0;
  const rotate = job.rotate;
  const setupRequest = rotate
    ? (req: AutocannonRequest) => ({
        ...req,
        path: job.paths[next++ % job.paths.length],
        headers: { ...job.headers, [rotate.header]: rotate.values[turn++ % rotate.values.length] },
      })
    : (req: AutocannonRequest) => ({ ...req, path: job.paths[next++ % job.paths.length] });
  // Latencies of every response, fractional ms (autocannon's own histogram keeps whole milliseconds).
  let samples = new Float64Array(1 << 16);
  let n = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: job.url,
        connections: job.connections,
        duration: job.seconds,
        headers: job.headers,
        requests: [{ method: 'GET', setupRequest }],
      },
      (err, r) => {
        if (err) return reject(err);
        const lat = samples.subarray(0, n);
        resolve({
          requests: r.requests.total,
          rps: r.requests.total / r.duration,
          p50_ms: percentile(lat, 50),
          p99_ms: percentile(lat, 99),
          max_ms: percentile(lat, 100),
          non2xx: r.non2xx,
          errors: r.errors,
          timeouts: r.timeouts,
          mb_per_s: r.throughput.average / 2 ** 20,
        });
      },
    );
    instance.on('response', (_client, _status, _bytes, ms) => {
      if (n === samples.length) {
        const bigger = new Float64Array(samples.length * 2);
        bigger.set(samples);
        samples = bigger;
      }
      samples[n++] = ms;
    });
  });
}

if (isEntryPoint(import.meta.url)) {
  process.on('message', (m: unknown) => {
    if (!isLoadJob(m)) return;
    run(m.load).then((result) => sendToParent({ result }), reportFatal);
  });
}
