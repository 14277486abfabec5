import { runBigCaptures } from './helpers/big-captures';
const n = Number(process.argv[2] ?? 2), mb = Number(process.argv[3] ?? 30);
const r = await runBigCaptures({ devices: n, mb, captureMemoryMb: 512, timeoutMs: 600_000, cpuProfileDir: process.argv[4] });
console.log(JSON.stringify({ ...r, slow: r.slow.slice(0, 30) }));
