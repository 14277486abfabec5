// A capture command's output held as deflated UTF-8 chunks while it arrives (TerminalScreen.spillAfter) and until its capture worker takes it, and turned back into text only where a rule needs the text.
import { deflateRawSync, inflateRawSync, constants as zlib } from 'node:zlib';

/** Characters gathered before they are encoded into one chunk: few chunks for a big capture, each encoded in well under a millisecond. */
const CHUNK_CHARS = 256 * 1024;

/**
 * UTF-8 text deflated part by part (raw deflate, zlib's fastest level: a 30 MB configuration in about 4 MB; a part of up to
 * 64 KB as one stored block, see STORED_MAX), each part owning its memory so it can be moved to another thread, and the text's size in UTF-8 (inflatedText).
 */
export interface DeflatedOutput {
  parts: Buffer[];
  bytes: number;
}

/**
 * Lines packed into deflated UTF-8 buffers as they come. The lines are joined with LF and end with one, unless the
 * last line is empty: the text of `lines.join('\n')` with one newline at its end.
 */
export class LineChunks {
  lines = 0;
  private pending: string[] = [];
  private chars = 0;
  private readonly out: DeflatedOutput = { parts: [], bytes: 0 };

  push(line: string): void {
    // Packed before a line is added, so the last line is still pending at finish().
    if (this.chars >= CHUNK_CHARS) this.flush('\n');
    this.pending.push(line);
    this.lines++;
    this.chars += line.length + 1;
  }

  /** The chunks; the object is spent. */
  finish(): DeflatedOutput {
    if (this.pending.length > 0) this.flush(this.pending[this.pending.length - 1] === '' ? '' : '\n');
    return this.out;
  }

  private flush(end: string): void {
    addDeflated(this.out, this.pending.join('\n') + end);
    this.pending = [];
    this.chars = 0;
  }
}

/** Appends `text` (deflated, as one more part) to `out`. */
export function addDeflated(out: DeflatedOutput, text: string): void {
  if (text === '') return;
  const utf8 = Buffer.from(text, 'utf8');
  out.parts.push(deflatePart(utf8));
  out.bytes += utf8.byteLength;
}

/** `text` deflated (DeflatedOutput). */
export function deflatedText(text: string): DeflatedOutput {
  const out: DeflatedOutput = { parts: [], bytes: 0 };
  addDeflated(out, text);
  return out;
}

/** `text` as UTF-8 in a buffer of its own (not a slice of Node's shared pool), so it can be transferred. */
export function ownedBuffer(text: string): Buffer {
  const b = Buffer.from(text, 'utf8');
  if (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength) return b;
  const own = Buffer.alloc(b.byteLength);
  b.copy(own);
  return own;
}

/** A command's captured output: its first lines as text (where the echo is looked for) and the rest as deflated UTF-8 chunks. */
export interface CapturedOutput {
  /** The output's first lines. */
  head: string[];
  /** The lines after them (LineChunks); no parts for a short output. */
  rest: DeflatedOutput;
}

/**
 * The whole output as one string (lines joined with LF, as PromptSession.runCommand returns them; with a trailing LF
 * when there is a rest): for the rules that need the text (command_output cuts, a short refusal).
 */
export function capturedText(c: CapturedOutput): string {
  const head = c.head.join('\n');
  if (c.rest.parts.length === 0) return head;
  return (c.head.length > 0 ? head + '\n' : '') + inflatedText(c.rest);
}

/** Total bytes of UTF-8 chunks. */
export function byteLength(parts: readonly Uint8Array[]): number {
  return parts.reduce((n, p) => n + p.byteLength, 0);
}

/**
 * A part this small is kept as one stored (uncompressed) deflate block, written here rather than by zlib: most
 * configurations fit, and deflating then inflating them cost a site about 4 % of its CPU (collectors-bench, #27).
 * Up to 64 KB per session at most, against the fleet's few dozen sessions at once.
 */
const STORED_MAX = 0xffff;

/** `utf8` as a raw deflate stream of one final stored block (RFC 1951 3.2.4): any inflater reads it back. */
function storedPart(utf8: Uint8Array): Buffer {
  const len = utf8.byteLength;
  const out = Buffer.allocUnsafeSlow(5 + len);
  out[0] = 0x01; // BFINAL = 1, BTYPE = 00 (stored); the rest of the byte is padding
  out.writeUInt16LE(len, 1);
  out.writeUInt16LE(~len & 0xffff, 3);
  out.set(utf8, 5);
  return out;
}

/** The bytes of a part written by storedPart, or null for any other deflate stream (zlib inflates those). */
function storedBytes(part: Uint8Array): Uint8Array | null {
  if (part.byteLength < 5 || part[0] !== 0x01) return null;
  const len = part[1] | (part[2] << 8);
  const nlen = part[3] | (part[4] << 8);
  return (len ^ 0xffff) === nlen && part.byteLength === 5 + len ? part.subarray(5) : null;
}

/** One part deflated, owning its memory (zlib may hand back a view of a larger buffer). */
function deflatePart(utf8: Uint8Array): Buffer {
  if (utf8.byteLength <= STORED_MAX) return storedPart(utf8);
  const packed = deflateRawSync(utf8, { level: zlib.Z_BEST_SPEED });
  return packed.byteOffset === 0 && packed.byteLength === packed.buffer.byteLength ? packed : Buffer.from(new Uint8Array(packed).buffer);
}

/** The text of a DeflatedOutput: inflated into one buffer, part by part. */
export function inflatedText(d: { parts: readonly Uint8Array[]; bytes: number }): string {
  const all = Buffer.allocUnsafe(d.bytes);
  let at = 0;
  for (const p of d.parts) {
    const part = storedBytes(p) ?? inflateRawSync(p);
    if (at + part.byteLength > d.bytes) throw new Error(`deflated output longer than its ${d.bytes} bytes`);
    all.set(part, at);
    at += part.byteLength;
  }
  if (at !== d.bytes) throw new Error(`deflated output inflated to ${at} bytes instead of ${d.bytes}`);
  return all.toString('utf8');
}
