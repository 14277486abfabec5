import { createHash } from 'node:crypto';
import { changeFingerprint, usablePatterns } from '../src/templates/patterns';
function old(text: string, ig: string[]) { const ignore = usablePatterns(ig); const lines = text.replace(/\r\n/g, '\n').split('\n').filter((l) => !ignore.some((re) => re.test(l))); return createHash('sha256').update(lines.join('\n')).digest('hex'); }
const ig = ['^! Last', '^ntp clock'];
const cases = ['', '\n', 'a', 'a\n', '! Last x', '! Last x\n', 'a\n! Last x', '! Last x\na', 'a\n! Last\nb\n', 'a\r\nb\r\n! Last\r\n', '\n\n! Last\n\n', 'ntp clock\n! Last\n', 'x\nntp clock 1\ny\n! Last\nz'];
for (let i = 0; i < 2000; i++) { const parts = ['a', '', '! Last', 'ntp clock', 'b c', '\r']; let t = ''; const n = Math.floor(Math.random() * 8); for (let k = 0; k < n; k++) t += parts[Math.floor(Math.random() * parts.length)] + (Math.random() < 0.8 ? '\n' : ''); cases.push(t); }
let bad = 0; for (const c of cases) for (const g of [ig, []]) if (old(c, g) !== changeFingerprint(c, g)) { bad++; if (bad < 5) console.log(JSON.stringify(c), g); }
console.log('mismatches', bad, 'of', cases.length * 2);
