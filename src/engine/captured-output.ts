// A capture command's output held as UTF-8 chunks while it arrives (TerminalScreen.spillAfter), and turned back into text only where a rule needs the text.
import { deflateRawSync, inflateRawSync, constants as zlib } from 'node:zlib';

/** Characters gathered before they are encoded into one chunk: few chunks for a big capture, each encoded in well under a millisecond. */
const CHUNK_CHARS = 256 * 1024;

/**
 * Lines packed into UTF-8 buffers, each buffer owning its memory so it can be moved to a worker. The lines are joined
 * with LF and end with one, unless the last line is empty: the text of `lines.join('\n')` with one newline at its end.
 */
export class LineChunks {
  lines = 0;
  private pending: string[] = [];
  private chars = 0;
  private readonly chunks: Buffer[] = [];

  push(line: string): void {
    // Packed before a line is added, so the last line is still pending at finish().
    if (this.chars >= CHUNK_CHARS) this.flush('\n');
    this.pending.push(line);
    this.lines++;
    this.chars += line.length + 1;
  }

  /** The chunks; the object is spent. */
  finish(): Buffer[] {
    if (this.pending.length > 0) this.flush(this.pending[this.pending.length - 1] === '' ? '' : '\n');
    return this.chunks;
  }

  private flush(end: string): void {
    this.chunks.push(ownedBuffer(this.pending.join('\n') + end));
    this.pending = [];
    this.chars = 0;
  }
}

/** `text` as UTF-8 in a buffer of its own (not a slice of Node's shared pool), so it can be transferred. */
export function ownedBuffer(text: string): Buffer {
  const b = Buffer.from(text, 'utf8');
  if (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength) return b;
  const own = Buffer.alloc(b.byteLength);
  b.copy(own);
  return own;
}

/** A command's captured output: its first lines as text (where the echo is looked for) and the rest as UTF-8 chunks. */
export interface CapturedOutput {
  /** The output's first lines. */
  head: string[];
  /** The lines after them (LineChunks); empty for a short output. */
  rest: Buffer[];
}

/**
 * The whole output as one string (lines joined with LF, as PromptSession.runCommand returns them; with a trailing LF
 * when there is a rest): for the rules that need the text (command_output cuts, a short refusal).
 */
export function capturedText(c: CapturedOutput): string {
  const head = c.head.join('\n');
  if (c.rest.length === 0) return head;
  return (c.head.length > 0 ? head + '\n' : '') + Buffer.concat(c.rest).toString('utf8');
}

/** Total bytes of UTF-8 chunks. */
export function byteLength(parts: readonly Uint8Array[]): number {
  return parts.reduce((n, p) => n + p.byteLength, 0);
}

/**
 * A big capture's parts deflated, each on its own (raw deflate, fastest level), each owning its memory: what waits
 * for a capture worker after the session ended (a 30 MB configuration in about 4 MB). The parts given are spent.
 */
export function deflateParts(parts: Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < parts.length; i++) {
    const packed = deflateRawSync(parts[i], { level: zlib.Z_BEST_SPEED });
    out.push(packed.byteOffset === 0 && packed.byteLength === packed.buffer.byteLength ? packed : Buffer.from(new Uint8Array(packed).buffer));
    parts[i] = EMPTY;
  }
  return out;
}

const EMPTY = Buffer.alloc(0);

/** The text of parts deflated by deflateParts, `bytes` long in UTF-8: inflated into one buffer, part by part. */
export function inflatedText(parts: readonly Uint8Array[], bytes: number): string {
  const all = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (const p of parts) at += inflateRawSync(p).copy(all, at);
  if (at !== bytes) throw new Error(`a deflated capture inflated to ${at} bytes instead of ${bytes}`);
  return all.toString('utf8');
}
