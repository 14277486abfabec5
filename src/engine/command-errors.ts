// Recognises a CLI refusing a capture command, so that its error message is never stored as a configuration.
import type { LinePattern } from '../lib/re2';
import { defaultVocabulary } from './prompts';

/** A configuration is never this short and an error; a longer output that mentions one is not a refusal. */
export const MAX_REFUSAL_LINES = 4;

/**
 * True when a capture command's whole output is the CLI refusing the command (unknown, invalid or incomplete):
 * a short output one of whose lines matches a refusal line (the template's `session.command_errors`, then the
 * engine defaults in src/templates/defaults.yaml).
 */
export function isCommandRejected(output: string, refusals: readonly LinePattern[] = defaultVocabulary().commandErrors): boolean {
  // A long output is no refusal: told by its first few line breaks, not by splitting (a 30 MB configuration is a
  // million lines, and this runs on the event loop).
  if (nonBlankLinesExceed(output, MAX_REFUSAL_LINES)) return false;
  const lines = output
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.length > 0 && lines.length <= MAX_REFUSAL_LINES && lines.some((l) => refusals.some((re) => re.test(l)));
}

/** Whether `text` has more than `max` non-blank lines, looking no further than the line that proves it. */
function nonBlankLinesExceed(text: string, max: number): boolean {
  let count = 0;
  for (let start = 0; start < text.length;) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    if (text.slice(start, end).trim() !== '' && ++count > max) return true;
    start = end + 1;
  }
  return false;
}
