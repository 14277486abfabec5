// The one decoder of configuration bytes (live sessions, exec output, imports): UTF-16 and odd bytes become honest UTF-8 text.
import { isUtf8 } from 'node:buffer';

/**
 * How the stored text was obtained from the bytes, when they were not plain UTF-8 (null: they were, and the text is
 * exactly the device's bytes). `windows-1252` means the bytes were not valid UTF-8 and were read as Windows-1252
 * (Latin-1 with the C1 printables): every byte has a character, none became U+FFFD, but the reading is a guess.
 */
export type SourceEncoding = 'utf-8-bom' | 'utf-16le' | 'utf-16be' | 'windows-1252';

export const SOURCE_ENCODINGS: readonly SourceEncoding[] = ['utf-8-bom', 'utf-16le', 'utf-16be', 'windows-1252'];

/** What each encoding means for the person reading a version (the web interface's version page). */
export const SOURCE_ENCODING_WORDS: Record<SourceEncoding, string> = {
  'utf-8-bom': 'UTF-8 with a byte-order mark (removed)',
  'utf-16le': 'UTF-16 little-endian, converted to UTF-8',
  'utf-16be': 'UTF-16 big-endian, converted to UTF-8',
  'windows-1252': 'not valid UTF-8: read as Windows-1252 (Latin-1), so some characters may differ from the device',
};

export interface DecodedText {
  text: string;
  encoding: SourceEncoding | null;
}

/** How many leading bytes the UTF-16 guess looks at. */
const SNIFF_BYTES = 4096;

/**
 * UTF-16 without a byte-order mark: mostly ASCII text has a NUL in every other byte. At least a third of the
 * sampled pairs must have their NUL on the same side, and (almost) none on the other, so the odd NUL a
 * terminal sends in UTF-8 output never turns it into UTF-16.
 */
function sniffUtf16(buf: Uint8Array): 'utf-16le' | 'utf-16be' | null {
  const n = Math.min(buf.length, SNIFF_BYTES) & ~1;
  if (n < 4) return null;
  let even = 0;
  let odd = 0;
  for (let i = 0; i < n; i += 2) {
    if (buf[i] === 0) even++;
    if (buf[i + 1] === 0) odd++;
  }
  const pairs = n / 2;
  if (odd >= pairs / 3 && even <= pairs / 50) return 'utf-16le';
  if (even >= pairs / 3 && odd <= pairs / 50) return 'utf-16be';
  return null;
}

/** The encoding a byte-order mark or NUL pattern at the start says, and how many bytes of mark to skip. */
function detect(buf: Uint8Array): { encoding: SourceEncoding; skip: number } | null {
  if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) return { encoding: 'utf-8-bom', skip: 3 };
  if (buf[0] === 0xff && buf[1] === 0xfe) return { encoding: 'utf-16le', skip: 2 };
  if (buf[0] === 0xfe && buf[1] === 0xff) return { encoding: 'utf-16be', skip: 2 };
  const utf16 = sniffUtf16(buf);
  return utf16 ? { encoding: utf16, skip: 0 } : null;
}

function decoderFor(encoding: SourceEncoding | 'utf-8'): TextDecoder {
  // utf-8-bom: the mark is skipped before decoding (ignoreBOM keeps TextDecoder from eating a second one).
  const label = encoding === 'utf-8-bom' ? 'utf-8' : encoding;
  return new TextDecoder(label, { ignoreBOM: true });
}

/** Decodes a whole file or command output: detection first, then UTF-8, else Windows-1252 (never U+FFFD for odd bytes). */
export function decodeConfigBytes(bytes: Uint8Array | string): DecodedText {
  if (typeof bytes === 'string') return { text: bytes, encoding: null };
  const found = detect(bytes);
  if (found) {
    const body = bytes.subarray(found.skip);
    if (found.encoding !== 'utf-8-bom' || isUtf8(body)) return { text: decoderFor(found.encoding).decode(body), encoding: found.encoding };
  }
  if (isUtf8(bytes)) return { text: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'), encoding: null };
  return { text: decoderFor('windows-1252').decode(found ? bytes.subarray(found.skip) : bytes), encoding: 'windows-1252' };
}

/** Length of an incomplete UTF-8 sequence at the end of `buf` (0-3 bytes), kept for the next chunk. */
function incompleteTail(buf: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, buf.length); back++) {
    const b = buf[buf.length - back];
    if ((b & 0xc0) === 0x80) continue; // continuation byte: look further back
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

/** The first bytes of a stream so far could still become a byte-order mark: wait for the next chunk before deciding. */
function startsLikeMark(buf: Uint8Array): boolean {
  if (buf.length === 0) return true;
  if (buf.length === 1) return buf[0] === 0xef || buf[0] === 0xff || buf[0] === 0xfe;
  return buf.length === 2 && buf[0] === 0xef && buf[1] === 0xbb;
}

/**
 * decodeConfigBytes for a byte stream (a shell session): the encoding is detected on the first bytes; UTF-8 is
 * checked chunk by chunk and, at the first invalid sequence, the rest of the stream is read as Windows-1252.
 */
export class ConfigStreamDecoder {
  encoding: SourceEncoding | null = null;
  private mode: 'start' | 'utf-8' | 'other' = 'start';
  private decoder: TextDecoder | null = null;
  private carry: Buffer = Buffer.alloc(0);

  write(chunk: Buffer): string {
    let buf = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    this.carry = Buffer.alloc(0);
    if (this.mode === 'start') {
      if (startsLikeMark(buf)) {
        this.carry = buf;
        return '';
      }
      const found = detect(buf);
      if (found && found.encoding !== 'utf-8-bom') {
        this.switchTo(found.encoding);
        buf = buf.subarray(found.skip);
      } else {
        if (found) {
          this.encoding = found.encoding;
          buf = buf.subarray(found.skip);
        }
        this.mode = 'utf-8';
      }
    }
    if (this.mode === 'other') return (this.decoder as TextDecoder).decode(buf, { stream: true });
    const tail = incompleteTail(buf);
    const whole = buf.subarray(0, buf.length - tail);
    if (isUtf8(whole)) {
      this.carry = Buffer.from(buf.subarray(buf.length - tail));
      return whole.toString('utf8');
    }
    this.switchTo('windows-1252');
    return (this.decoder as TextDecoder).decode(buf, { stream: true });
  }

  /** Whatever is left at the end of the stream (an incomplete last character). */
  end(): string {
    const rest = this.carry;
    this.carry = Buffer.alloc(0);
    if (this.mode === 'other') return (this.decoder as TextDecoder).decode(rest);
    return rest.length ? decodeConfigBytes(rest).text : '';
  }

  private switchTo(encoding: SourceEncoding): void {
    this.mode = 'other';
    this.encoding = encoding;
    this.decoder = decoderFor(encoding);
  }
}
