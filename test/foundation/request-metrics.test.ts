// The HTTP request metrics, tallied outside prom-client, scrape exactly as prom-client's own Counter and Histogram would.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { createRequestMetrics } from '../../src/features/metrics/request-metrics';

const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The metrics as they were written before the tallies: prom-client's classes, one inc and one observe per request. */
function promClientReference(registry: Registry) {
  const requests = new Counter({
    name: 'confvault_http_requests_total',
    help: 'HTTP requests by method, route pattern (never the raw path) and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const seconds = new Histogram({
    name: 'confvault_http_request_duration_seconds',
    help: 'HTTP request durations by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  return (method: string, route: string, status: number, s: number) => {
    const m = HTTP_METHODS.has(method) ? method : 'OTHER';
    requests.inc({ method: m, route, status: String(status) });
    seconds.observe({ method: m, route }, s);
  };
}

test('request metrics: text and JSON scrapes equal prom-client own counter and histogram, scrape after scrape', async () => {
  const reference = new Registry();
  const tallied = new Registry();
  const observeReference = promClientReference(reference);
  const observe = createRequestMetrics(tallied);
  let seed = 42;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const methods = ['GET', 'POST', 'PATCH', 'FOO', 'DELETE', 'HEAD'];
  const routes = ['/api/v1/devices/:device_id', '/metrics', 'unmatched', '/a"b\\c\n'];
  const statuses = [200, 201, 401, 404, 500];
  // Bucket bounds themselves, past the last bound, zero and tiny values, besides a spread of ordinary durations.
  const edges = [0.005, 0.01, 2.5, 10, 10.5, 0, 1e-7];
  for (let scrape = 0; scrape < 4; scrape++) {
    for (let i = 0; i < 1500; i++) {
      const args = [pick(methods), pick(routes), pick(statuses), rnd() < 0.2 ? pick(edges) : rnd() ** 3 * 12] as const;
      observeReference(...args);
      observe(...args);
    }
    assert.equal(await tallied.metrics(), await reference.metrics());
    assert.deepEqual(await tallied.getMetricsAsJSON(), await reference.getMetricsAsJSON());
  }
});
