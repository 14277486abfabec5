// The stored form of configuration lines under a template: what a live backup and an import both keep (strip, redact, trim).
import { compilePattern } from './patterns';
import { redactLines, type RedactionKey } from './redact';
import type { TemplateSpec } from './types';

export type Redaction = { redact: false } | { redact: true; key: RedactionKey };

function trimBlankEdges(lines: string[]): string[] {
  let start = 0;
  let end = lines.length;
  while (start < end && lines[start] === '') start++;
  while (end > start && lines[end - 1] === '') end--;
  return lines.slice(start, end);
}

/**
 * Lines matching a strip pattern dropped, redact rules applied (secrets become keyed tokens), trailing whitespace
 * removed per line, leading and trailing blank lines removed; LF endings and exactly one final newline ("" when
 * nothing is left). The patterns must compile (the engine checks them first and fails the backup as data).
 */
export function storedText(lines: readonly string[], template: Pick<TemplateSpec, 'strip_patterns' | 'redact_patterns'>, options: Redaction): string {
  const strip = template.strip_patterns.map((p) => compilePattern(p));
  const kept = lines.filter((line) => !strip.some((re) => re.test(line)));
  const out = trimBlankEdges((options.redact ? redactLines(kept, template.redact_patterns, options.key) : kept).map((line) => line.trimEnd()));
  return out.length === 0 ? '' : out.join('\n') + '\n';
}
