// Recognises a CLI refusing a capture command, so that its error message is never stored as a configuration.
import type { LinePattern } from '../lib/re2';
import { defaultVocabulary } from './prompts';

/** A configuration is never this short and an error; a longer output that mentions one is not a refusal. */
const MAX_REFUSAL_LINES = 4;

/**
 * True when a capture command's whole output is the CLI refusing the command (unknown, invalid or incomplete):
 * a short output one of whose lines matches a refusal line (the template's `session.command_errors`, then the
 * engine defaults in src/templates/defaults.yaml).
 */
export function isCommandRejected(output: string, refusals: readonly LinePattern[] = defaultVocabulary().commandErrors): boolean {
  const lines = output
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.length > 0 && lines.length <= MAX_REFUSAL_LINES && lines.some((l) => refusals.some((re) => re.test(l)));
}
