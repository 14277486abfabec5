import { processCapture } from '../src/engine/capture/capture-task';
import { getBuiltinTemplate } from '../src/templates/index';
const lines: string[] = ['hostname x', 'snmp-server community Secret RO'];
for (let i = 0, size = 0; size < 30e6; i++) { const b = `interface GigabitEthernet${i >> 6}/${i & 63}\n description uplink ${i % 97} to rack ${(i * 7919) % 10007}\n switchport access vlan ${i % 4000}\n!`; lines.push(b); size += b.length + 1; }
const buf = Buffer.from(lines.join('\n')); lines.length = 0;
(globalThis as any).gc?.();
const before = process.memoryUsage();
const tpl = getBuiltinTemplate('cisco-ios') as any;
let peak = 0; const t = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 5);
const t0 = performance.now();
const r = processCapture({ parts: [buf], template: tpl, redact_key: Buffer.alloc(32, 1), compress: true });
const ms = performance.now() - t0;
const after = process.memoryUsage();
clearInterval(t);
console.log({ ms, ok: r.ok, rssBefore: before.rss >> 20, rssAfter: after.rss >> 20, heapAfter: after.heapUsed >> 20, hwm: Number(/VmHWM:\s+(\d+)/.exec((await import('node:fs')).readFileSync('/proc/self/status','utf8'))![1]) >> 10 });
