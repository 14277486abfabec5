// Terminal clean-up of raw device output and turning captured text into the stored configuration (strip, redact, trim).
import { patternProblems } from '../templates/index';
import { PatternError } from '../lib/re2';
import { compilePattern } from '../templates/patterns';
import { storedText, type Redaction } from '../templates/stored-text';
import type { OutputRule, TemplateSpec } from '../templates/types';
import { CollectError } from './types';
import { LineChunks, type CapturedOutput } from './captured-output';

/**
 * A one-line-at-a-time terminal model fed with decoded device output.
 * Devices draw on a terminal, not into a file: pagers erase themselves with backspaces, `\r` or `ESC[K`,
 * shells wrap echoes in bracketed-paste codes, BIRD pads with NUL. Emulating a cursor on the current line
 * (and discarding everything else that cannot change text) recovers what a person would have seen.
 */
export class TerminalScreen {
  /** Completed lines since the last takeLines(). */
  private done: string[] = [];
  private line = '';
  private col = 0;
  /** An escape sequence cut by a chunk boundary, completed by the next feed(). */
  private pending = '';
  /**
   * Screen rows, known only after cursor addressing (ESC[row;colH) and forgotten at the next LF: `cursorRow` is
   * where the cursor is, `lineRow` where the current line was drawn. They let a scroll done with escape codes
   * (ArubaOS-Switch deletes the top row and inserts one at the bottom instead of sending CR/LF) end the line.
   */
  private cursorRow: number | null = null;
  private lineRow: number | null = null;
  /** Texts of the current line erased whole (ESC[2K, CR + ESC[K) since the last takeLines(), most recent last. */
  private erased: string[] = [];
  /** While capturing (spillAfter): completed lines beyond the first few, packed as UTF-8 instead of kept as strings. */
  private spill: { head: number; rest: LineChunks } | null = null;

  feed(text: string): void {
    const s = this.pending ? this.pending + text : text;
    this.pending = '';
    // eslint-disable-next-line no-control-regex -- matching control characters is the point of this pattern
    const special = /[\x00-\x08\x0a-\x1f\x7f]/g;
    let pos = 0;
    while (pos < s.length) {
      special.lastIndex = pos;
      const m = special.exec(s);
      const end = m ? m.index : s.length;
      if (end > pos) this.put(s.slice(pos, end));
      if (!m) break;
      pos = this.control(s, end);
      if (pos < 0) {
        // Incomplete escape sequence at the end of the chunk: keep it for the next one (bounded).
        const rest = s.slice(end);
        this.pending = rest.length <= 4096 ? rest : '';
        break;
      }
    }
  }

  /** The line being drawn (where a prompt or pager sits). */
  get current(): string {
    return this.line;
  }

  /** Completed lines since the last takeLines(), without taking them (while spilling, only the first `head`). */
  get lines(): readonly string[] {
    return this.done;
  }

  /** Number of completed lines since the last takeLines() (spilled ones included). */
  get lineCount(): number {
    return this.done.length + (this.spill?.rest.lines ?? 0);
  }

  /**
   * From now until takeSpilled(), completed lines after the first `head` are packed into deflated UTF-8 chunks as they
   * come: a big capture is held as a few buffers, not as a million strings on the heap, and never rescanned.
   */
  spillAfter(head: number): void {
    this.spill = { head, rest: new LineChunks() };
  }

  /** The completed lines since the last takeLines() (the first `head`) and the packed rest, each line ending with LF; spilling stops. */
  takeSpilled(): CapturedOutput {
    const rest = this.spill?.rest.finish() ?? { parts: [], bytes: 0 };
    this.spill = null;
    return { head: this.takeLines(), rest };
  }

  /**
   * What the current line held each time it was erased whole since the last takeLines() (at most 8, latest
   * last): a CLI that redraws its prompt in place wipes the echo of the command it just received.
   */
  get wiped(): readonly string[] {
    return this.erased;
  }

  /** Completed lines since the last call; the current line stays. */
  takeLines(): string[] {
    const out = this.done;
    this.done = [];
    this.erased = [];
    return out;
  }

  /** Everything including the unfinished current line (for one-shot clean-up). */
  finish(): string[] {
    const out = this.takeLines();
    if (this.line) out.push(this.line);
    this.line = '';
    this.col = 0;
    return out;
  }

  private put(run: string): void {
    if (this.lineRow === null) this.lineRow = this.cursorRow;
    if (this.col === this.line.length) this.line += run;
    else if (this.col > this.line.length) this.line += ' '.repeat(this.col - this.line.length) + run;
    else this.line = this.line.slice(0, this.col) + run + this.line.slice(this.col + run.length);
    this.col += run.length;
  }

  private newline(): void {
    if (this.spill && this.done.length >= this.spill.head) this.spill.rest.push(this.line);
    else this.done.push(this.line);
    this.line = '';
    this.col = 0;
    this.cursorRow = null;
    this.lineRow = null;
  }

  /** The current line moved up the screen (scrolled by escape codes): it is complete, and the row it left is blank. */
  private scrolledAway(): void {
    if (this.line.trim() === '') return;
    const row = this.lineRow;
    const cursor = this.cursorRow;
    const col = this.col;
    this.newline();
    this.lineRow = row;
    this.cursorRow = cursor;
    this.col = col;
  }

  private eraseLine(): void {
    if (this.line.trim() !== '') {
      this.erased.push(this.line);
      if (this.erased.length > 8) this.erased.shift();
    }
    this.line = '';
  }

  /** Handles the control character at s[i]; returns the next position, or -1 when a sequence is cut off. */
  private control(s: string, i: number): number {
    const c = s.charCodeAt(i);
    if (c === 0x0a) {
      this.newline();
      return i + 1;
    }
    if (c === 0x0d) {
      this.col = 0; // bare CR returns to column 0; CRLF ends the line at the LF anyway
      return i + 1;
    }
    if (c === 0x08) {
      // Destructive at the end of the line: devices only send backspaces to erase what they drew.
      if (this.col > 0) {
        this.col--;
        if (this.col === this.line.length - 1) this.line = this.line.slice(0, this.col);
      }
      return i + 1;
    }
    if (c === 0x09) {
      this.put('\t');
      return i + 1;
    }
    if (c === 0x1b) return this.escape(s, i);
    return i + 1; // NUL padding, BEL, SO/SI and other controls draw nothing
  }

  private escape(s: string, i: number): number {
    if (i + 1 >= s.length) return -1;
    const kind = s[i + 1];
    if (kind === '[') {
      // Parameter and intermediate bytes are 0x20-0x3f; the final byte is 0x40-0x7e.
      let j = i + 2;
      while (j < s.length && s.charCodeAt(j) >= 0x20 && s.charCodeAt(j) <= 0x3f) j++;
      if (j >= s.length) return j - i > 64 ? j : -1;
      const final = s.charCodeAt(j);
      if (final < 0x40 || final > 0x7e) return j; // malformed: drop what was read, keep the odd byte
      this.csi(s.slice(i + 2, j), s[j]);
      return j + 1;
    }
    if (kind === ']' || kind === 'P' || kind === 'X' || kind === '^' || kind === '_') {
      // OSC/DCS strings (window titles and the like) end with BEL or ESC \.
      for (let j = i + 2; j < s.length; j++) {
        if (s[j] === '\x07') return j + 1;
        if (s[j] === '\x1b' && j + 1 < s.length && s[j + 1] === '\\') return j + 2;
      }
      return -1;
    }
    if ('()*+#%'.includes(kind)) return i + 3 <= s.length ? i + 3 : -1; // charset selection
    if (kind === 'E' || kind === 'D') {
      // NEL / IND: next line (HP ProCurve firmware uses them in place of CR/LF)
      this.newline();
      return i + 2;
    }
    return i + 2; // ESC=, ESC>, ESC7, ESC8, ESCM ...
  }

  private csi(params: string, final: string): void {
    const n = Number.parseInt(params.replace(/^\?/, ''), 10);
    const count = Number.isFinite(n) && n > 0 ? n : 1;
    switch (final) {
      case 'K': // erase in line
        if ((params === '' || params === '0') && this.col === 0) this.eraseLine();
        else if (params === '' || params === '0') this.line = this.line.slice(0, this.col);
        else if (params === '1') this.line = ' '.repeat(Math.min(this.col, this.line.length)) + this.line.slice(this.col);
        else if (params === '2') this.eraseLine();
        return;
      case 'M': // delete lines at the cursor: a line below it moves up, so deleting above the current line scrolls it
        if (this.cursorRow !== null && this.lineRow !== null && this.cursorRow < this.lineRow) this.scrolledAway();
        return;
      case 'L': // insert lines at the cursor: the current line is pushed down, off the row being drawn
        if (this.cursorRow !== null && this.cursorRow === this.lineRow) this.scrolledAway();
        return;
      case 'S': // scroll up
        if (this.lineRow !== null) this.scrolledAway();
        return;
      case 'A':
        if (this.cursorRow !== null) this.cursorRow = Math.max(1, this.cursorRow - count);
        return;
      case 'B':
        if (this.cursorRow !== null) this.cursorRow += count;
        return;
      case 'C':
        this.col += count;
        return;
      case 'D':
        this.col = Math.max(0, this.col - count);
        return;
      case 'G':
        this.col = count - 1;
        return;
      case 'P': // delete characters
        this.line = this.line.slice(0, this.col) + this.line.slice(this.col + count);
        return;
      case 'X': // erase characters
        if (this.col < this.line.length) {
          const k = Math.min(count, this.line.length - this.col);
          this.line = this.line.slice(0, this.col) + ' '.repeat(k) + this.line.slice(this.col + k);
        }
        return;
      case 'H':
      case 'f': {
        // Cursor positioning: the column, and the row only to recognise a scroll done with escape codes.
        const parts = params.split(';');
        const rowParam = Number.parseInt(parts[0] ?? '', 10);
        const colParam = Number.parseInt(parts[1] ?? '', 10);
        this.cursorRow = Number.isFinite(rowParam) && rowParam > 0 ? rowParam : 1;
        this.col = Number.isFinite(colParam) && colParam > 0 ? colParam - 1 : 0;
        return;
      }
      default:
        return; // colours (m), modes (h/l, bracketed paste), scrolling, screen clears: nothing to keep
    }
  }
}

/** Cleans a complete raw terminal stream: escape codes, NUL, backspaces and bare CR resolved, LF line endings. */
export function cleanTerminalOutput(raw: string): string {
  const screen = new TerminalScreen();
  screen.feed(raw);
  const endsWithNewline = /\n$/.test(raw);
  const lines = screen.finish();
  return lines.join('\n') + (endsWithNewline && lines.length > 0 ? '\n' : '');
}

/** CRLF as LF, without copying a text that has none (a capture can be 30 MB). */
function lf(text: string): string {
  return text.includes('\r\n') ? text.replace(/\r\n/g, '\n') : text;
}

function splitLines(text: string): string[] {
  const unix = lf(text);
  // eslint-disable-next-line no-control-regex -- matching control characters is the point of this pattern
  return /[\x00-\x08\x0b-\x1f\x7f]/.test(unix) ? lf(cleanTerminalOutput(text)).split('\n') : unix.split('\n');
}

/**
 * Turns captured output into the stored text: lines matching a strip pattern dropped, redact rules applied
 * (when `redact` is true: secrets become tokens keyed with `key`), trailing whitespace removed per line, leading and
 * trailing blank lines removed, LF line endings and exactly one trailing newline ("" when nothing is left).
 *
 * Redaction also covers what line rules cannot: the body of a PEM private key spread over many lines (FortiOS
 * "set private-key", certificates on Linux hosts, SSH host keys) becomes one placeholder line between its BEGIN
 * and END lines, whatever the template. A key whose END line never comes is redacted to the end of the text.
 *
 * A saved pattern that no longer compiles (custom templates saved before patterns became RE2) fails the backup
 * as data (COMMAND_FAILED naming the field): skipping a redact rule would store the secret it was there to hide.
 */
export function applyTemplate(
  raw: string,
  template: Pick<TemplateSpec, 'strip_patterns' | 'redact_patterns'> & Partial<Pick<TemplateSpec, 'name' | 'ignore_patterns'>>,
  options: Redaction,
): string {
  const bad = patternProblems({
    strip_patterns: template.strip_patterns,
    ignore_patterns: template.ignore_patterns,
    redact_patterns: template.redact_patterns,
  });
  if (bad.length > 0) {
    const list = bad.map((b) => `${b.field}: ${b.problem}`).join('; ');
    const who = template.name ? `Template "${template.name}"` : 'The template';
    throw new CollectError('COMMAND_FAILED', `${who} has patterns that are not valid RE2 syntax (edit the template): ${list}`, true);
  }
  return storedText(splitLines(raw), template, options);
}

/**
 * One capture command's output cut as its `command_output` rule says, in this order: everything up to and including
 * the first line matching `start_after` (nothing is cut when no line matches), the first line matching `stop_before`
 * and everything after it, then `drop_first` lines at the start and `drop_last` at the end. A trailing newline stays.
 */
export function cutOutput(text: string, rule: OutputRule | undefined, templateName?: string): string {
  if (!rule) return text;
  const newline = text.endsWith('\n');
  let lines = (newline ? text.slice(0, -1) : text).split('\n');
  const find = (field: 'start_after' | 'stop_before') => {
    const source = rule[field];
    if (!source) return -1;
    let re;
    try {
      re = compilePattern(source);
    } catch (err) {
      if (!(err instanceof PatternError)) throw err;
      const who = templateName ? `Template "${templateName}"` : 'The template';
      throw new CollectError(
        'COMMAND_FAILED',
        `${who} has a command_output ${field} pattern that is not valid RE2 syntax (edit the template): ${err.problem}`,
        true,
      );
    }
    return lines.findIndex((line) => re.test(line));
  };
  const start = find('start_after');
  if (start >= 0) lines = lines.slice(start + 1);
  const stop = find('stop_before');
  if (stop >= 0) lines = lines.slice(0, stop);
  lines = lines.slice(Math.max(0, rule.drop_first ?? 0), Math.max(0, lines.length - Math.max(0, rule.drop_last ?? 0)));
  if (lines.length === 0) return '';
  return lines.join('\n') + (newline ? '\n' : '');
}

/**
 * Removes the echoed command line, and anything the device printed before it (an unsolicited log message
 * with a reprinted prompt), from the captured lines.
 */
export function dropEcho(lines: string[], prompt: string, command: string): string[] {
  const cmd = command.trim();
  const isEcho = (line: string, first: boolean) => line === cmd || (prompt && line.startsWith(prompt) && line.endsWith(cmd)) || (first && line.endsWith(cmd));
  for (let i = 0; i < Math.min(lines.length, 5); i++) {
    if (!cmd) break;
    if (!isEcho(lines[i].trim(), i === 0)) continue;
    // Typed ahead while a readline CLI (birdc) had its terminal in cooked mode, the command is echoed twice: by the
    // terminal, then again after the prompt readline draws once it takes the input.
    let next = i + 1;
    while (next < lines.length && next <= i + 2 && isEcho(lines[next].trim(), false)) next++;
    return lines.slice(next);
  }
  if (lines.length === 0) return lines;
  const first = lines[0].trim();
  if (prompt && first.startsWith(prompt)) {
    const rest = first.slice(prompt.length).trim();
    if (rest === '') return lines.slice(1);
    return [rest, ...lines.slice(1)]; // no echo: output began on the prompt line
  }
  return lines;
}
