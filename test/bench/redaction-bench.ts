// Redaction cost per MB of configuration: every backup and every import runs its template's rules over each line.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { builtinTemplates } from '../../src/templates/index';
import { redactLines } from '../../src/templates/redact';
import { REPO_ROOT, ms, row, type Section } from './common';

const TRANSCRIPTS = path.join(REPO_ROOT, 'test', 'sim', 'transcripts');
const KEY = Buffer.alloc(32, 3);
/** Text per measurement: a recorded configuration repeated up to this size. */
const TARGET_BYTES = 1_000_000;

/**
 * Best of 2 runs (after one warm-up) of redacting `lines` with `rules`: CPU time of this process in ms, which a
 * machine busy with other work changes much less than the wall clock.
 */
function bestMs(lines: string[], rules: Parameters<typeof redactLines>[1]): number {
  redactLines(lines, rules, KEY);
  let best = Infinity;
  for (let i = 0; i < 2; i++) {
    const t0 = process.cpuUsage();
    redactLines(lines, rules, KEY);
    const d = process.cpuUsage(t0);
    best = Math.min(best, (d.user + d.system) / 1000);
  }
  return best;
}

function repeatedTo(text: string, bytes: number): { lines: string[]; mb: number } {
  const once = text.split('\n');
  const size = Buffer.byteLength(text) || 1;
  const copies = Math.max(1, Math.ceil(bytes / size));
  const lines: string[] = [];
  for (let i = 0; i < copies; i++) lines.push(...once);
  return { lines, mb: (copies * size) / 1e6 };
}

/** The corpus of the corpus test (CONFVAULT_CORPUS), when there is one: its files by template folder. */
function corpusTexts(): Map<string, string[]> {
  const root = process.env.CONFVAULT_CORPUS ?? path.resolve(REPO_ROOT, '..', 'shared', 'corpus');
  const out = new Map<string, string[]>();
  if (!existsSync(root)) return out;
  const names = new Set(builtinTemplates().map((t) => t.name));
  for (const dir of readdirSync(root)) {
    if (!names.has(dir)) continue;
    const files = readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    out.set(
      dir,
      files.map((e) => readFileSync(path.join(e.parentPath, e.name), 'utf8')),
    );
  }
  return out;
}

export function runRedactionBench(say: (line: string) => void): Section {
  const perTemplate: { name: string; msPerMb: number }[] = [];
  for (const t of builtinTemplates()) {
    const file = path.join(TRANSCRIPTS, `${t.name}.expected.txt`);
    if (!existsSync(file)) continue;
    const { lines, mb } = repeatedTo(readFileSync(file, 'utf8'), TARGET_BYTES);
    perTemplate.push({ name: t.name, msPerMb: bestMs(lines, t.redact_patterns) / mb });
  }
  perTemplate.sort((a, b) => a.msPerMb - b.msPerMb);
  const median = perTemplate[Math.floor(perTemplate.length / 2)];
  const worst = perTemplate[perTemplate.length - 1];
  say(`  redaction: ${perTemplate.length} templates, median ${ms(median.msPerMb)}/MB, slowest ${worst.name} ${ms(worst.msPerMb)}/MB`);
  const rows = [
    row(
      'redaction per MB, built-in templates (median)',
      `${ms(median.msPerMb)} (${median.name}; ${(1000 / median.msPerMb).toFixed(1)} MB/s)`,
      '< 100 ms per MB',
      median.msPerMb < 100,
      { per_template_ms_per_mb: Object.fromEntries(perTemplate.map((p) => [p.name, Number(p.msPerMb.toFixed(2))])) },
    ),
    row('redaction per MB, slowest built-in template', `${ms(worst.msPerMb)} (${worst.name})`, '< 250 ms per MB', worst.msPerMb < 250),
  ];
  const corpus = corpusTexts();
  if (corpus.size > 0) {
    let total = 0;
    let bytes = 0;
    for (const [name, texts] of corpus) {
      const rules = builtinTemplates().find((t) => t.name === name)!.redact_patterns;
      const lines = texts.join('\n').split('\n');
      bytes += texts.reduce((n, t) => n + Buffer.byteLength(t), 0);
      total += bestMs(lines, rules);
    }
    rows.push(
      row(
        'redaction per MB, real-configuration corpus',
        `${ms(total / (bytes / 1e6))} (${(bytes / 1e6).toFixed(1)} MB, ${corpus.size} templates)`,
        'reported',
        null,
      ),
    );
  }
  return {
    title: 'Redaction (template rules, URL passwords, private keys) per MB of configuration',
    rows,
    notes: [
      "each template's recorded configuration (test/sim/transcripts/*.expected.txt) repeated to 1 MB, CPU time, best of 2 runs after a warm-up, one core;",
      "the corpus row appears when CONFVAULT_CORPUS (or ../shared/corpus) holds the corpus test's files: see docs/templates.md.",
    ],
  };
}
