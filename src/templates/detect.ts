// Platform detection's scoring: which template's `detect` patterns the login banner, the prompt and the probe outputs match, and the verdict.
import { usablePatterns } from './patterns';
import type { TemplateSpec } from './types';

/** What one source of evidence weighs; a template's score is the sum over the sources that matched (each counted once). */
export const DETECT_WEIGHTS = { probe: 10, banner: 5, prompt: 3 } as const;
/** Below this score a template is never picked: a prompt match alone (3) is the least that counts. */
export const DETECT_THRESHOLD = 3;
export const DEFAULT_DETECT_PRIORITY = 50;

export type DetectSource = keyof typeof DETECT_WEIGHTS;

/** What a session showed: the text before the first prompt, the prompt, and each probe command's output (null: not run or it failed). */
export interface DetectObservation {
  banner: string;
  prompt: string;
  probes: Record<string, string | null>;
}

/** One reason: which pattern matched which line, and where the line came from. */
export interface DetectEvidence {
  source: DetectSource;
  /** The probe command, for a probe match. */
  command?: string;
  pattern: string;
  line: string;
}

export interface DetectCandidate {
  template: string;
  score: number;
  priority: number;
  evidence: DetectEvidence[];
}

/** The pick (null: none, or a tie), every template that scored, best first, and one sentence saying why. */
export interface DetectVerdict {
  template: string | null;
  candidates: DetectCandidate[];
  reason: string;
}

type Detectable = Pick<TemplateSpec, 'name' | 'detect'>;

/**
 * The distinct probe commands of `templates`, each once: the commands most templates share first (show version
 * before a platform's own), then by name, so a session answers the likeliest question early.
 */
export function probeCommands(templates: readonly Detectable[]): string[] {
  const count = new Map<string, number>();
  for (const t of templates) {
    const c = t.detect?.probe?.command;
    if (c) count.set(c, (count.get(c) ?? 0) + 1);
  }
  return [...count.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([c]) => c);
}

function linesOf(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** The first line any of `patterns` matches, with the pattern, or null. */
function firstMatch(patterns: readonly string[] | undefined, lines: readonly string[]): { pattern: string; line: string } | null {
  if (!patterns?.length) return null;
  const compiled = usablePatterns(patterns);
  for (const line of lines) {
    for (let i = 0; i < compiled.length; i++) if (compiled[i].test(line)) return { pattern: patterns[i], line };
  }
  return null;
}

function scoreOne(t: Detectable, seen: { banner: string[]; prompt: string[] }, probes: Record<string, string | null>): DetectCandidate | null {
  const d = t.detect;
  if (!d) return null;
  const evidence: DetectEvidence[] = [];
  const banner = firstMatch(d.banner, seen.banner);
  if (banner) evidence.push({ source: 'banner', ...banner });
  const prompt = firstMatch(d.prompt, seen.prompt);
  if (prompt) evidence.push({ source: 'prompt', ...prompt });
  const output = d.probe ? probes[d.probe.command] : null;
  const probe = d.probe && output ? firstMatch(d.probe.patterns, linesOf(output)) : null;
  if (probe && d.probe) evidence.push({ source: 'probe', command: d.probe.command, ...probe });
  if (evidence.length === 0) return null;
  const score = evidence.reduce((sum, e) => sum + DETECT_WEIGHTS[e.source], 0);
  return { template: t.name, score, priority: d.priority ?? DEFAULT_DETECT_PRIORITY, evidence };
}

function because(c: DetectCandidate): string {
  return c.evidence.map((e) => `${e.source === 'probe' ? `'${e.command}'` : `the ${e.source}`} showed "${e.line.slice(0, 120)}"`).join(', ');
}

/**
 * Scores every template against what the session showed and picks the best at or above DETECT_THRESHOLD: the highest
 * score, then the highest priority. Two templates equal in both are twins the evidence cannot tell apart: no pick.
 */
export function scoreTemplates(templates: readonly Detectable[], obs: DetectObservation): DetectVerdict {
  const seen = { banner: linesOf(obs.banner), prompt: linesOf(obs.prompt).slice(-1) };
  const candidates = templates
    .map((t) => scoreOne(t, seen, obs.probes))
    .filter((c): c is DetectCandidate => c !== null)
    .sort((a, b) => b.score - a.score || b.priority - a.priority || a.template.localeCompare(b.template));
  const [best, next] = candidates;
  if (!best || best.score < DETECT_THRESHOLD) {
    return { template: null, candidates, reason: 'could not tell: no template recognised the banner, the prompt or the probe output' };
  }
  if (next && next.score === best.score && next.priority === best.priority) {
    const twins = candidates.filter((c) => c.score === best.score && c.priority === best.priority).map((c) => c.template);
    return { template: null, candidates, reason: `could not tell: top candidates ${twins.join(', ')} match equally well` };
  }
  return { template: best.template, candidates, reason: `${best.template}: ${because(best)}` };
}
