// The shell session's decoder (src/lib/decode.ts): the same answer whatever the chunk boundaries, and odd bytes marked, never U+FFFD.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigStreamDecoder, decodeConfigBytes } from '../../src/lib/decode';

const TEXT = 'hostname r\u00e9seau-1\nsnmp-server community S3cr\u00eat RO\nbanner \u2713 \u20ac\n';

function streamed(bytes: Buffer, size: number): { text: string; encoding: string | null } {
  const d = new ConfigStreamDecoder();
  let text = '';
  for (let i = 0; i < bytes.length; i += size) text += d.write(bytes.subarray(i, i + size));
  return { text: text + d.end(), encoding: d.encoding };
}

test('UTF-8, UTF-16LE/BE and a UTF-8 mark decode to the same text in chunks of every size', () => {
  const cases: [Buffer, string | null][] = [
    [Buffer.from(TEXT), null],
    [Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(TEXT, 'utf16le')]), 'utf-16le'],
    [Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(TEXT, 'utf16le').swap16()]), 'utf-16be'],
    [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(TEXT)]), 'utf-8-bom'],
  ];
  for (const [bytes, encoding] of cases) {
    assert.deepEqual(decodeConfigBytes(bytes), { text: TEXT, encoding });
    for (const size of [1, 2, 3, 5, 7, 64]) assert.deepEqual(streamed(bytes, size), { text: TEXT, encoding }, `${encoding} in chunks of ${size}`);
  }
});

test('bytes that are not UTF-8 are read as Windows-1252 and marked, in one piece or streamed', () => {
  const latin = Buffer.from('description caf\u00e9 \u00a7\n', 'latin1');
  assert.deepEqual(decodeConfigBytes(latin), { text: 'description caf\u00e9 \u00a7\n', encoding: 'windows-1252' });
  const mixed = Buffer.concat([Buffer.from('hostname a\n'), latin]);
  for (const size of [1, 4, 100]) {
    const r = streamed(mixed, size);
    assert.equal(r.text, 'hostname a\ndescription caf\u00e9 \u00a7\n');
    assert.equal(r.encoding, 'windows-1252');
  }
});

test('a few NUL bytes in UTF-8 terminal output do not make it UTF-16; a short prompt is not held back', () => {
  const withNul = Buffer.from('line one\0\nline two\nline three\n');
  assert.deepEqual(decodeConfigBytes(withNul), { text: 'line one\0\nline two\nline three\n', encoding: null });
  const d = new ConfigStreamDecoder();
  assert.equal(d.write(Buffer.from('> ')), '> ', 'a two-byte prompt arrives at once');
});
