// Output of the benchmark: a table per section on the terminal, MISS lines repeated at the end, results.json and RESULTS.md.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { BENCH_DIR, type MachineInfo, type Section } from './common';

export interface Report {
  machine: MachineInfo;
  load_average: { start: string; end: string };
  seed: Record<string, unknown>;
  sections: Section[];
  total_seconds: number;
}

const pad = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length));

export function printSection(s: Section, out: (line: string) => void): void {
  const w = [
    Math.max(10, ...s.rows.map((r) => r.name.length)),
    Math.max(10, ...s.rows.map((r) => r.value.length)),
    Math.max(8, ...s.rows.map((r) => r.target.length)),
  ];
  out('');
  out(`== ${s.title}`);
  out(`   ${pad('figure', w[0])}  ${pad('measured', w[1])}  ${pad('target', w[2])}  result`);
  for (const r of s.rows) {
    const mark = r.status === 'MISS' ? 'MISS  <<<<<<' : r.status === 'PASS' ? 'PASS' : '-';
    out(`${r.status === 'MISS' ? '!! ' : '   '}${pad(r.name, w[0])}  ${pad(r.value, w[1])}  ${pad(r.target, w[2])}  ${mark}`);
  }
  for (const n of s.notes) out(`   note: ${n}`);
}

export function printSummary(sections: Section[], out: (line: string) => void): void {
  const misses = sections.flatMap((s) => s.rows.filter((r) => r.status === 'MISS').map((r) => ({ s, r })));
  const passes = sections.flatMap((s) => s.rows.filter((r) => r.status === 'PASS')).length;
  out('');
  if (misses.length === 0) {
    out(`== All ${passes} targets met.`);
    return;
  }
  out(`!! ${misses.length} TARGET(S) MISSED (${passes} met):`);
  for (const { s, r } of misses) out(`!!   ${r.name}: ${r.value} (target ${r.target}) [${s.title.split(':')[0]}]`);
}

function markdown(report: Report): string {
  const m = report.machine;
  const lines = [
    '# Benchmark results',
    '',
    'Written by `npm run bench` (test/bench/run.ts); see test/bench/README.md for what each figure measures.',
    '',
    `- Date: ${m.date}`,
    `- Machine: ${m.cpus} CPUs (nproc), ${m.model}, ${m.memory_gb} GB RAM`,
    `- Node: ${m.node}`,
    `- Load average (1/5/15 min): ${report.load_average.start} at the start, ${report.load_average.end} at the end (a shared machine: other work runs beside the benchmark)`,
    `- Seeded database: ${String(report.seed.summary ?? '')}`,
    `- Whole run: ${report.total_seconds.toFixed(0)} s`,
  ];
  for (const s of report.sections) {
    lines.push('', `## ${s.title}`, '', '| Figure | Measured | Target | Result |', '|---|---|---|---|');
    for (const r of s.rows) lines.push(`| ${r.name.trim()} | ${r.value} | ${r.target} | ${r.status === 'INFO' ? '' : `**${r.status}**`} |`);
    if (s.notes.length) lines.push('', ...s.notes.map((n) => `- ${n}`));
  }
  return lines.join('\n') + '\n';
}

/** results.json always; RESULTS.md (committed, quoted by docs/benchmarks.md) only for a complete run. */
export function writeReport(report: Report, complete: boolean): string[] {
  const written = [path.join(BENCH_DIR, 'results.json')];
  writeFileSync(written[0], JSON.stringify(report, null, 2) + '\n');
  if (complete) {
    written.push(path.join(BENCH_DIR, 'RESULTS.md'));
    writeFileSync(written[1], markdown(report));
  }
  return written;
}
