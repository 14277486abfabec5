// Preloaded into a measured CLI process (node --require): writes its peak RSS (VmHWM) and the largest V8 heap and external
// memory a 20 ms sampler saw, in MiB as JSON, to CONFVAULT_BENCH_RSS_FILE at exit.
const fs = require('node:fs');
const peak = { heap_total: 0, heap_used: 0, external: 0 };
const sampler = setInterval(() => {
  const m = process.memoryUsage();
  peak.heap_total = Math.max(peak.heap_total, m.heapTotal);
  peak.heap_used = Math.max(peak.heap_used, m.heapUsed);
  peak.external = Math.max(peak.external, m.external);
}, 20);
sampler.unref();
process.on('exit', () => {
  const kb = Number(/^VmHWM:\s*(\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);
  const mib = (b) => Math.round((b / 1048576) * 10) / 10;
  const out = { rss: mib(kb * 1024), heap_total: mib(peak.heap_total), heap_used: mib(peak.heap_used), external: mib(peak.external) };
  if (process.env.CONFVAULT_BENCH_RSS_FILE) fs.writeFileSync(process.env.CONFVAULT_BENCH_RSS_FILE, JSON.stringify(out));
});
