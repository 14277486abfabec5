// A capture's output packed into UTF-8 chunks as it arrives (TerminalScreen.spillAfter, src/engine/captured-output.ts) reads back as the lines the screen kept before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { TerminalScreen } from '../../src/engine/normalise';
import { addDeflated, capturedText, inflatedText, type DeflatedOutput } from '../../src/engine/captured-output';

/** What the screen gives without spilling, and what it gives spilling after `head` lines, for the same bytes. */
function both(text: string, head: number, chunk: number) {
  const plain = new TerminalScreen();
  const spilled = new TerminalScreen();
  spilled.spillAfter(head);
  for (let i = 0; i < text.length; i += chunk) {
    plain.feed(text.slice(i, i + chunk));
    spilled.feed(text.slice(i, i + chunk));
  }
  assert.equal(spilled.lineCount, plain.lineCount, 'spilled lines are counted');
  assert.equal(spilled.current, plain.current, 'the line being drawn (the prompt) stays on the screen');
  const lines = plain.takeLines();
  return { plain: lines.join('\n'), spilled: capturedText(spilled.takeSpilled()), spilledAny: lines.length > head };
}

test('spilled output reads back as the joined lines, with one newline at its end unless its last line is empty', () => {
  const body = Array.from({ length: 300_000 }, (_, i) => `interface Gi0/${i}\r\n description é ${i}\x1b[K`).join('\r\n');
  for (const [text, head, chunk] of [
    [body + '\r\nrouter#', 16, 4096],
    [body + '\r\n\r\nrouter#', 16, 777],
    ['a\r\nb\r\nrouter#', 16, 1],
    ['a\r\nb\r\nc\r\nrouter#', 1, 2],
    ['--More--\b\b\b\b\b\b\b\bx\r\ny\r\n\r\nrouter#', 0, 3],
  ] as const) {
    const { plain, spilled, spilledAny } = both(text, head, chunk);
    assert.equal(spilled, spilledAny && !plain.endsWith('\n') ? plain + '\n' : plain);
  }
});

test('a big capture deflated part by part (as it waits for a capture worker) inflates to the same text, each part movable', () => {
  const lines: string[] = [];
  for (let i = 0; i < 40_000; i++) lines.push(`interface Gi${i} \u00e9\u{1F600} description ${i % 97}`);
  const out: DeflatedOutput = { parts: [], bytes: 0 };
  for (const text of [lines.slice(0, 20_000).join('\n') + '\n', '', lines.slice(20_000).join('\n') + '\n', 'end\n']) addDeflated(out, text);
  const text = lines.join('\n') + '\nend\n';
  assert.equal(out.bytes, Buffer.byteLength(text));
  assert.equal(out.parts.length, 3, 'an empty text adds no part');
  assert.ok(
    out.parts.every((p) => p.byteOffset === 0 && p.byteLength === p.buffer.byteLength),
    'each part owns its memory',
  );
  assert.ok(out.parts.reduce((n, p) => n + p.byteLength, 0) < out.bytes / 4, 'much smaller while it waits');
  assert.equal(inflatedText(out), text);
  assert.throws(() => inflatedText({ ...out, bytes: out.bytes + 1 }), /inflated to/);
  assert.throws(() => inflatedText({ ...out, bytes: out.bytes - 1 }), /longer than/);
});

test('a part of up to 64 KB is one stored deflate block: any inflater reads it, and a big part next to it is still deflated', () => {
  const small = 'hostname core-sw1\n interface Gi0/1\n  description caf\u00e9 \u{1F600}\n';
  const big = 'x'.repeat(70_000) + '\n';
  const out: DeflatedOutput = { parts: [], bytes: 0 };
  addDeflated(out, small);
  addDeflated(out, big);
  addDeflated(out, 'y'.repeat(0xffff)); // exactly the largest stored block
  assert.equal(out.parts[0].byteLength, 5 + Buffer.byteLength(small), 'kept as it is, after a 5-byte block header');
  assert.equal(inflateRawSync(out.parts[0]).toString('utf8'), small, 'a valid raw deflate stream');
  assert.ok(out.parts[1].byteLength < 1_000, 'past 64 KB deflated');
  assert.equal(out.parts[2].byteLength, 5 + 0xffff);
  assert.equal(inflateRawSync(out.parts[2]).byteLength, 0xffff);
  assert.ok(out.parts[0].byteOffset === 0 && out.parts[0].byteLength === out.parts[0].buffer.byteLength, 'owns its memory');
  assert.equal(inflatedText(out), small + big + 'y'.repeat(0xffff));
  // zlib's own stored output (level 0) reads back the same way.
  assert.equal(inflatedText({ parts: [deflateRawSync(Buffer.from(small), { level: 0 })], bytes: Buffer.byteLength(small) }), small);
});
