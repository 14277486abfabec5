// The HTTP request metrics: tallied in plain objects on the request path, handed to prom-client only when scraped.
import { Counter, Histogram, type Registry } from 'prom-client';

const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** Requests of one method, route pattern and status not yet added to the counter. */
interface CountTally {
  labels: { method: string; route: string; status: string };
  pending: number;
}

/** Durations of one method and route pattern: per-bucket counts (not cumulative), sum and count. */
interface DurationTally {
  labels: { method: string; route: string };
  buckets: Float64Array;
  sum: number;
  count: number;
}

/** One value line of prom-client's histogram export (the shape Histogram.getForPromString returns). */
interface HistogramValue {
  labels: { le?: number | string };
  sharedLabels: { method: string; route: string };
  value: number;
  metricName: string;
  exemplar: null | undefined;
}

const DURATION_NAME = 'confvault_http_request_duration_seconds';

/**
 * The duration histogram, exported from its tallies in exactly the lines prom-client's own Histogram writes (same
 * names, labels, order and values). prom-client's observe() hashes and checks the labels on every call, a clear share
 * of a request that costs thirty microseconds in all; here a request adds to a tally found through one map lookup.
 */
class TalliedHistogram extends Histogram<'method' | 'route'> {
  /** In the order their label sets were first seen: the order prom-client keeps and exports them in. */
  private tallies: DurationTally[] = [];
  private byKey = new Map<string, DurationTally>();

  constructor(registry: Registry) {
    super({
      name: DURATION_NAME,
      help: 'HTTP request durations by method and route pattern',
      labelNames: ['method', 'route'] as const,
      buckets: BUCKETS,
      registers: [registry],
    });
  }

  add(key: string, method: string, route: string, seconds: number): void {
    let t = this.byKey.get(key);
    if (!t) {
      this.byKey.set(key, (t = { labels: { method, route }, buckets: new Float64Array(BUCKETS.length), sum: 0, count: 0 }));
      this.tallies.push(t);
    }
    // The first bucket whose bound is not below the value (none past the last bound: only +Inf counts it).
    let i = 0;
    while (i < BUCKETS.length && seconds > BUCKETS[i]) i++;
    if (i < BUCKETS.length) t.buckets[i]++;
    t.sum += seconds;
    t.count++;
  }

  /** Read by the registry when it writes the text format (and by get()). */
  getForPromString(): Promise<{ name: string; help: string; type: 'histogram'; values: HistogramValue[]; aggregator: 'sum' }> {
    const values: HistogramValue[] = [];
    const bucketName = `${DURATION_NAME}_bucket`;
    for (const t of this.tallies) {
      let acc = 0;
      for (let i = 0; i < BUCKETS.length; i++) {
        acc += t.buckets[i];
        values.push({ labels: { le: BUCKETS[i] }, sharedLabels: t.labels, value: acc, metricName: bucketName, exemplar: null });
      }
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: t.labels, value: t.count, metricName: bucketName, exemplar: null },
        { labels: {}, sharedLabels: t.labels, value: t.sum, metricName: `${DURATION_NAME}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: t.labels, value: t.count, metricName: `${DURATION_NAME}_count`, exemplar: undefined },
      );
    }
    return Promise.resolve({ name: DURATION_NAME, help: 'HTTP request durations by method and route pattern', type: 'histogram', values, aggregator: 'sum' });
  }

  override reset(): void {
    this.tallies = [];
    this.byKey = new Map();
  }
}

/** Counts and durations of HTTP requests by method and route pattern (never a raw path), registered on `registry`. */
export function createRequestMetrics(registry: Registry): (method: string, route: string, status: number, seconds: number) => void {
  // In the order their label sets were first seen, as prom-client would have added them.
  const counts: CountTally[] = [];
  const countsByKey = new Map<string, Map<number, CountTally>>();
  new Counter({
    name: 'confvault_http_requests_total',
    help: 'HTTP requests by method, route pattern (never the raw path) and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
    collect() {
      for (const t of counts) {
        if (t.pending === 0) continue;
        this.inc(t.labels, t.pending);
        t.pending = 0;
      }
    },
  });
  const durations = new TalliedHistogram(registry);
  return (method, route, status, seconds) => {
    const m = HTTP_METHODS.has(method) ? method : 'OTHER';
    // Label values come from fixed lists and route patterns only, so these maps stay small.
    const key = `${m} ${route}`;
    let byStatus = countsByKey.get(key);
    if (!byStatus) countsByKey.set(key, (byStatus = new Map<number, CountTally>()));
    let count = byStatus.get(status);
    if (!count) {
      byStatus.set(status, (count = { labels: { method: m, route, status: String(status) }, pending: 0 }));
      counts.push(count);
    }
    count.pending++;
    durations.add(key, m, route, seconds);
  };
}
