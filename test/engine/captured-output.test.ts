// A capture's output packed into UTF-8 chunks as it arrives (TerminalScreen.spillAfter, src/engine/captured-output.ts) reads back as the lines the screen kept before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TerminalScreen } from '../../src/engine/normalise';
import { capturedText } from '../../src/engine/captured-output';

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
