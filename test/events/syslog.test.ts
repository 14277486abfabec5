// Syslog wire formats: RFC 3164 and RFC 5424 parsing, TCP octet counting and newline framing, garbage and oversize.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_MESSAGE_BYTES, SyslogFramer, parseSyslog } from '../../src/events/syslog';

test('RFC 3164: PRI, the HOSTNAME after the timestamp, and the text the patterns see', () => {
  const m = parseSyslog('<189>Mar  5 02:09:10 core-sw1 %SYS-5-CONFIG_I: Configured from console by admin on vty0 (192.0.2.9)');
  assert.ok(m);
  assert.equal(m.format, '3164');
  assert.equal(m.pri, 189);
  assert.equal(m.hostname, 'core-sw1');
  assert.match(m.text, /%SYS-5-CONFIG_I: Configured from console by admin/);
});

test('RFC 3164 as Cisco IOS sends it (sequence number, no HOSTNAME) has no hostname', () => {
  const m = parseSyslog('<189>226: *Mar  1 18:46:11: %SYS-5-CONFIG_I: Configured from console by vty2 (10.34.195.36)');
  assert.ok(m);
  assert.equal(m.hostname, null);
  const tagOnly = parseSyslog('<29>Nov 24 10:00:01 mgd[1234]: UI_COMMIT_COMPLETED: commit complete');
  assert.equal(tagOnly?.hostname, null, 'a tag right after the timestamp is not a hostname');
});

test('RFC 5424: HOSTNAME field, "-" for none, a BOM before the message', () => {
  const m = parseSyslog(
    "<165>1 2026-11-24T10:00:00.003Z mx1.example.net mgd 1234 UI_COMMIT [junos@2636.1.1.1.2.9 username=\"ops\"] \uFEFFUser 'ops' requested 'commit' operation",
  );
  assert.ok(m);
  assert.equal(m.format, '5424');
  assert.equal(m.hostname, 'mx1.example.net');
  assert.match(m.text, /User 'ops' requested 'commit'/);
  assert.equal(parseSyslog('<14>1 - - app - - - hello')?.hostname, null);
});

test('garbage is refused: no PRI, PRI out of range or zero-padded, empty, oversize', () => {
  for (const raw of ['', 'hello', '<>x', '<192>x', '<01>x', '<999>x', `<14>${'a'.repeat(MAX_MESSAGE_BYTES)}`]) {
    assert.equal(parseSyslog(raw), null, JSON.stringify(raw.slice(0, 20)));
  }
});

test('control characters cannot smuggle a second line into the text', () => {
  const m = parseSyslog('<14>Nov 24 10:00:00 h tag: one\nUI_COMMIT_COMPLETED\0two');
  assert.ok(m);
  assert.equal(m.text.includes('\n'), false);
  assert.equal(m.text.includes('\0'), false);
});

test('TCP octet counting: frames split anywhere are reassembled, several per chunk', () => {
  const f = new SyslogFramer();
  const a = '<14>1 - h app - - - first';
  const b = '<14>1 - h app - - - second message';
  const stream = `${a.length} ${a}${b.length} ${b}`;
  const got: string[] = [];
  for (let i = 0; i < stream.length; i += 7) {
    const r = f.push(stream.slice(i, i + 7));
    assert.equal(r.error, null);
    got.push(...r.messages);
  }
  assert.deepEqual(got, [a, b]);
  assert.equal(f.pending, 0);
});

test('TCP newline framing (LF, CRLF or NUL) and mixed with octet counting', () => {
  const f = new SyslogFramer();
  const r = f.push('<14>a one\n<14>b two\r\n<14>c three\0' + '9 <14>d fou' + '<14>e fi');
  assert.deepEqual(r.messages, ['<14>a one', '<14>b two', '<14>c three', '<14>d fou']);
  assert.deepEqual(f.push('ve\n').messages, ['<14>e five']);
});

test('TCP oversize: a frame announcing more than the limit, or a line running past it, is an error', () => {
  assert.equal(new SyslogFramer().push(`${MAX_MESSAGE_BYTES + 1} <14>x`).error, 'oversize');
  assert.equal(new SyslogFramer().push('1234567 ').error, 'oversize');
  const f = new SyslogFramer();
  assert.equal(f.push('<14>' + 'x'.repeat(MAX_MESSAGE_BYTES - 4)).error, null);
  assert.equal(f.push('x').error, 'oversize');
  assert.equal(f.pending, 0, 'nothing is held after an error');
});
