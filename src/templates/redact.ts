// Secret redaction of configuration lines: a template's redact rules, and PEM private keys whatever the template.
import { compileRedaction } from './patterns';
import type { TemplateSpec } from './types';

const PRIVATE_KEY_BEGIN = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;
const PRIVATE_KEY_END = /-----END [A-Z0-9 ]*PRIVATE KEY-----/;
/** A whole key on one line, its newlines escaped ("\\n" in JSON or quoted strings). */
const PRIVATE_KEY_INLINE = /(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----).*?(-----END [A-Z0-9 ]*PRIVATE KEY-----)/g;
export const PRIVATE_KEY_PLACEHOLDER = '<redacted private key>';

/**
 * The lines with the template's redact rules applied, and the body of any PEM private key (FortiOS "set
 * private-key", certificates on Linux hosts, SSH host keys) replaced by one placeholder line between its BEGIN and
 * END lines. A key whose END line never comes is redacted to the end. Used by backups (engine) and by anything
 * that shows configuration text elsewhere (notification diffs), so both hide the same secrets.
 */
export function redactLines(lines: readonly string[], redact_patterns: TemplateSpec['redact_patterns']): string[] {
  const rules = redact_patterns.map((r) => ({ replace: compileRedaction(r.pattern), to: r.replacement }));
  const out: string[] = [];
  let inPrivateKey = false;
  for (const line of lines) {
    if (inPrivateKey) {
      if (!PRIVATE_KEY_END.test(line)) continue;
      inPrivateKey = false;
      out.push(PRIVATE_KEY_PLACEHOLDER);
    } else if (PRIVATE_KEY_BEGIN.test(line) && !PRIVATE_KEY_END.test(line)) {
      inPrivateKey = true;
    }
    let text = line.replace(PRIVATE_KEY_INLINE, `$1${PRIVATE_KEY_PLACEHOLDER}$2`);
    for (const r of rules) text = r.replace(text, r.to);
    out.push(text);
  }
  if (inPrivateKey) out.push(PRIVATE_KEY_PLACEHOLDER);
  return out;
}
