// What RANCID and Oxidized add to the configurations they keep, understood on import so that only configuration is stored.
import { REMOVED_SECRET } from '../../templates/patterns';
import { secretToken, type RedactionKey } from '../../templates/redact';

/** The first line of every file RANCID writes (`!RANCID-CONTENT-TYPE: cisco`, `#RANCID-CONTENT-TYPE: juniper`). */
const RANCID_MARK = /^[!#]RANCID-CONTENT-TYPE:/;
/** RANCID's header after it: `!Chassis type: ...`, `!Image: ...`, `!NAME: "1", DESCR: ...`, and the bare `!` between them. */
const RANCID_HEADER = /^[!#](?:\s*$|\s?[A-Z][\w /().-]{0,40}:)/;
/** A secret the old tool took out: RANCID's `<removed>`, Oxidized's `<secret hidden>` and `<configuration removed>`. */
const TOOL_REMOVED = /<removed>|<secret hidden>|<configuration removed>/;

/**
 * The lines of normalised imported text without the tool's additions: a RANCID file loses its content-type and header
 * lines, and a line whose secret RANCID commented out (`!enable secret <removed>`) is uncommented. Every removed secret
 * is written REMOVED_SECRET, which the change rule treats like a token (templates/patterns.ts importFingerprint).
 */
export function understoodLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const rancid = lines.length > 0 && RANCID_MARK.test(lines[0]);
  let start = 0;
  if (rancid) {
    start = 1;
    while (start < lines.length && RANCID_HEADER.test(lines[start])) start++;
  }
  return lines.slice(start).map((line) => {
    if (!TOOL_REMOVED.test(line)) return line;
    const uncommented = rancid && /^[!#]/.test(line) ? line.slice(1) : line;
    return uncommented.replace(new RegExp(TOOL_REMOVED.source, 'g'), REMOVED_SECRET);
  });
}

/** Redaction tokenises the marker like any secret (`<secret:...>` of "<removed>"): it is put back, as no secret is known. */
export function markersRestored(text: string, key: RedactionKey | null): string {
  return key ? text.split(secretToken(key, REMOVED_SECRET)).join(REMOVED_SECRET) : text;
}
