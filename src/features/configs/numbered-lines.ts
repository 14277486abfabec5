// The configuration view's text as HTML: every line numbered and anchored (#L12), built in one pass on a worker.

export interface NumberedText {
  /** The lines as HTML, escaped: `<span class="line" id="L1"><a class="n" href="#L1" data-n="1"></a>text</span>`. */
  html: string;
  lines: number;
  /** Lines past NUMBERED_MAX_LINES are shown as plain text, without numbers or anchors. */
  numberedLines: number;
}

/**
 * Past this many lines the rest of a version is plain text: numbering adds about 90 bytes a line, and a
 * 300,000-line file would triple its page. Search links to later lines open the version at its top.
 */
export const NUMBERED_MAX_LINES = 50_000;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/**
 * The number is drawn by CSS from data-n (generated content), so neither selecting the text nor the copy button
 * picks it up: the element's text is exactly the configuration.
 */
export function numberedLinesHtml(text: string, maxLines = NUMBERED_MAX_LINES): NumberedText {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const shown = Math.min(lines.length, maxLines);
  const parts: string[] = new Array<string>(shown + 1);
  for (let i = 0; i < shown; i++) {
    const n = i + 1;
    parts[i] = `<span class="line" id="L${n}"><a class="n" href="#L${n}" data-n="${n}" aria-label="line ${n}"></a>${escapeHtml(lines[i])}</span>\n`;
  }
  parts[shown] = shown < lines.length ? escapeHtml(lines.slice(shown).join('\n') + '\n') : '';
  return { html: parts.join(''), lines: lines.length, numberedLines: shown };
}
