// Recognises a CLI refusing a capture command, so that its error message is never stored as a configuration.

/**
 * How network CLIs say "no such command" (FRR, Cisco IOS/NX-OS/ASA, Arista, Huawei, Comware, ProCurve, Junos,
 * RouterOS, FortiOS, PAN-OS, BIRD, a POSIX shell). Matched against each line of a short output only.
 */
const REJECTIONS: readonly RegExp[] = [
  /^(?:ERROR:\s*)?%\s*(?:Invalid (?:input|command)|Unknown command|Incomplete command|Ambiguous command|Command incomplete|Unrecognized command)\b/i,
  /^(?:Error:\s*)?Unrecognized command found at\b/i,
  /^Invalid input: /,
  /^unknown command\.?$/i,
  /^Unknown command: /,
  /^Unknown action -?\d+$/,
  /^bad command name /,
  /^syntax error, unexpected /,
  /^-?[\w./-]*sh: (?:line \d+: )?.+: (?:command not found|not found)$/,
];

/** A configuration is never this short and an error; a longer output that mentions one is not a refusal. */
const MAX_REFUSAL_LINES = 4;

/** True when a capture command's whole output is the CLI refusing the command (unknown, invalid or incomplete). */
export function isCommandRejected(output: string): boolean {
  const lines = output
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.length > 0 && lines.length <= MAX_REFUSAL_LINES && lines.some((l) => REJECTIONS.some((re) => re.test(l)));
}
