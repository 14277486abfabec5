// Terminal clean-up, stored-text shaping and change fingerprints on nasty raw streams.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TerminalScreen, applyTemplate, cleanTerminalOutput, dropEcho } from '../../src/engine/normalise';
import { changeFingerprint } from '../../src/templates/patterns';
import { IOS_TEMPLATE } from '../sim/fixtures/engine-fixtures';

const NONE = { strip_patterns: [], redact_patterns: [] };
/** Redaction on, with any 32 bytes as the appliance's key. */
const REDACT = { redact: true, key: Buffer.alloc(32, 1) } as const;

describe('cleanTerminalOutput', () => {
  const cases: [string, string, string][] = [
    ['CRLF becomes LF', 'a\r\nb\r\n', 'a\nb\n'],
    ['doubled CR before LF', 'a\r\r\nb\r\n', 'a\nb\n'],
    ['bare CR returns to column 0 and overwrites', 'abcdef\rxy\n', 'xycdef\n'],
    ['CR then erase-line (BIRD)', 'bird> show\r\x1b[Kout\n', 'out\n'],
    ['NUL padding', '\0\0\0ab\0c\n', 'abc\n'],
    ['colours and modes', '\x1b[1;32mup\x1b[0m \x1b[?25lok\x1b[?25h\n', 'up ok\n'],
    ['bracketed paste codes', '\x1b[?2004hlinuxops@srv1:~$ cat x\r\n\x1b[?2004l\rline\r\n', 'linuxops@srv1:~$ cat x\nline\n'],
    ['xterm title (OSC)', '\x1b]0;user@host: ~\x07prompt$ \n', 'prompt$ \n'],
    ['charset selection and keypad modes', '\x1b(B\x1b=\x1b>text\n', 'text\n'],
    ['backspaces erase the pager (Cisco)', 'line1\r\n --More-- \b\b\b\b\b\b\b\b\b\b          \b\b\b\b\b\b\b\b\b\bline2\r\n', 'line1\nline2\n'],
    ['CR and spaces erase the pager', ' --More-- \r          \rab\n', 'ab        \n'],
    ['cursor back and spaces (Huawei)', '  ---- More ----\x1b[16D                \x1b[16Dx\n', 'x               \n'],
    ['backspaces at the end of a line delete', 'abc\b\bX\n', 'aX\n'],
    ['backspace inside a line only moves left', 'abcd\x1b[2D\bX\n', 'aXcd\n'],
    ['backspace at column 0 is ignored', '\bab\n', 'ab\n'],
    ['BEL and SO/SI dropped', 'a\x07b\x0ec\x0fd\n', 'abcd\n'],
    ['tabs kept', 'a\tb\n', 'a\tb\n'],
    ['erase whole line', 'junk\x1b[2Kgood\n', '    good\n'],
    ['delete characters', 'abcdef\r\x1b[2Pxy\n', 'xyef\n'],
    ['UTF-8 text untouched', 'descripción ünïcode ✓\n', 'descripción ünïcode ✓\n'],
    ['no trailing newline kept as is', 'a\nb', 'a\nb'],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(cleanTerminalOutput(input), expected));
  }

  it('resolves escape sequences split across chunks', () => {
    const screen = new TerminalScreen();
    for (const part of ['ab\x1b', '[3', '2mcd\x1b[', '0m', 'ef\r', '\n']) screen.feed(part);
    assert.deepEqual(screen.finish(), ['abcdef']);
  });

  it('keeps the unfinished line as the current line', () => {
    const screen = new TerminalScreen();
    screen.feed('out1\r\nout2\r\ncore-sw1#');
    assert.equal(screen.current, 'core-sw1#');
    assert.deepEqual(screen.takeLines(), ['out1', 'out2']);
    assert.equal(screen.lineCount, 0);
  });

  it('handles a 4 MiB stream quickly', () => {
    const line = 'interface GigabitEthernet0/1\r\n description \x1b[1mx\x1b[0m\r\n';
    const big = line.repeat(Math.ceil((4 * 1024 * 1024) / line.length));
    const t0 = performance.now();
    const out = cleanTerminalOutput(big);
    assert.ok(performance.now() - t0 < 2000);
    assert.ok(out.startsWith('interface GigabitEthernet0/1\n description x\n'));
  });
});

describe('applyTemplate', () => {
  it('drops strip lines, redacts, trims, LF with exactly one trailing newline', () => {
    const raw =
      'Building configuration...\r\n\r\nCurrent configuration : 10 bytes\r\n!   \r\nenable secret 5 $1$abc$def\r\nsnmp-server community public RO\r\nend\r\n\r\n\r\n';
    const text = applyTemplate(raw, IOS_TEMPLATE, REDACT);
    assert.equal(text, '!\nenable secret 5 <redacted>\nsnmp-server community <redacted> RO\nend\n');
  });

  it('leaves secrets alone when redaction is off', () => {
    const text = applyTemplate('enable secret 5 $1$abc$def\n', IOS_TEMPLATE, { redact: false });
    assert.equal(text, 'enable secret 5 $1$abc$def\n');
  });

  it('redacts every occurrence on a line and supports groups', () => {
    const tpl = { strip_patterns: [], redact_patterns: [{ pattern: 'key (\\w+)', replacement: 'key <$1-hidden>' }] };
    assert.equal(applyTemplate('key a key b\n', tpl, REDACT), 'key <a-hidden> key <b-hidden>\n');
  });

  it('redacts the body of a multi-line PEM private key, keeping its BEGIN and END lines, with any template', () => {
    const raw = [
      'config vpn certificate local',
      '    edit "vpn-cert"',
      '        set password ENC abc',
      '        set private-key "-----BEGIN ENCRYPTED PRIVATE KEY-----',
      'MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI',
      'QmFzZTY0IGJvZHkgb2YgYSBrZXk=',
      '-----END ENCRYPTED PRIVATE KEY-----"',
      '        set certificate "-----BEGIN CERTIFICATE-----',
      'MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa',
      '-----END CERTIFICATE-----"',
      '    next',
      'end',
      '',
    ].join('\n');
    const text = applyTemplate(raw, NONE, REDACT);
    assert.ok(!text.includes('MIIFHDBOBgkq') && !text.includes('QmFzZTY0'), 'no line of the key body is stored');
    assert.match(text, /set private-key "-----BEGIN ENCRYPTED PRIVATE KEY-----\n<redacted private key>\n-----END ENCRYPTED PRIVATE KEY-----"\n/);
    assert.ok(text.includes('MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkq'), 'a certificate is public and stays');
    assert.ok(text.endsWith('    next\nend\n'));
    assert.equal(applyTemplate(raw, NONE, { redact: false }), raw, 'kept whole without redaction');
  });

  it('redacts a private key written on one line with escaped newlines, keeping the rest of the line', () => {
    const raw = 'set tls-key "-----BEGIN EC PRIVATE KEY-----\\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oWz\\n-----END EC PRIVATE KEY-----" comment "lab"\n';
    assert.equal(
      applyTemplate(raw, NONE, REDACT),
      'set tls-key "-----BEGIN EC PRIVATE KEY-----<redacted private key>-----END EC PRIVATE KEY-----" comment "lab"\n',
    );
  });

  it('redacts to the end a private key whose END line never came (a truncated capture)', () => {
    const raw = 'hostname h\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAAAAAAAA\n';
    assert.equal(applyTemplate(raw, NONE, REDACT), 'hostname h\n-----BEGIN OPENSSH PRIVATE KEY-----\n<redacted private key>\n');
  });

  it('cleans terminal codes left in the raw text', () => {
    assert.equal(applyTemplate('\x1b[32mhostname r1\x1b[0m\rhostname r1\r\n\0', NONE, { redact: false }), 'hostname r1\n');
  });

  it('returns an empty string when nothing is left', () => {
    assert.equal(applyTemplate('\r\n\r\n', NONE, { redact: false }), '');
    assert.equal(applyTemplate('Building configuration...\n', IOS_TEMPLATE, { redact: false }), '');
  });

  it('adds the missing trailing newline', () => {
    assert.equal(applyTemplate('a\nb', NONE, { redact: false }), 'a\nb\n');
  });
});

describe('changeFingerprint', () => {
  const ignore = ['^! NVRAM config last updated', '^ntp clock-period'];

  it('ignores lines matching an ignore pattern', () => {
    const a = 'hostname r1\n! NVRAM config last updated at 10:00\nntp clock-period 17208\nend\n';
    const b = 'hostname r1\n! NVRAM config last updated at 11:00\nntp clock-period 17210\nend\n';
    assert.equal(changeFingerprint(a, ignore), changeFingerprint(b, ignore));
    assert.match(changeFingerprint(a, ignore), /^[0-9a-f]{64}$/);
  });

  it('sees a real change', () => {
    assert.notEqual(changeFingerprint('hostname r1\nend\n', ignore), changeFingerprint('hostname r2\nend\n', ignore));
  });

  it('is the same for CRLF and LF text', () => {
    assert.equal(changeFingerprint('a\r\nb\r\n', []), changeFingerprint('a\nb\n', []));
  });
});

describe('dropEcho', () => {
  it('removes the prompt line holding the echoed command', () => {
    assert.deepEqual(dropEcho(['core-sw1#show run', 'a', 'b'], 'core-sw1#', 'show run'), ['a', 'b']);
  });
  it('removes a bare prompt line (no echo)', () => {
    assert.deepEqual(dropEcho(['core-sw1#', 'a'], 'core-sw1#', 'show run'), ['a']);
  });
  it('keeps output that began on the prompt line', () => {
    assert.deepEqual(dropEcho(['core-sw1#a', 'b'], 'core-sw1#', 'show run'), ['a', 'b']);
  });
  it('drops a log message and reprinted prompt that came before the echo', () => {
    assert.deepEqual(dropEcho(['core-sw1#', '%LINK-3-UPDOWN: Interface Gi0/1, changed state to up', 'core-sw1#show run', 'a'], 'core-sw1#', 'show run'), ['a']);
  });
  it('drops a command echoed twice: by the terminal while typed ahead, then after the prompt readline draws', () => {
    assert.deepEqual(dropEcho(['show protocols all', 'bird> show protocols all', 'Name Proto'], 'bird>', 'show protocols all'), ['Name Proto']);
    assert.deepEqual(dropEcho(['bird> show protocols all', 'show protocols all', 'x'], 'bird>', 'show protocols all'), ['x']);
  });
  it('keeps the first line when it is output', () => {
    assert.deepEqual(dropEcho(['Name Proto', 'x'], 'bird>', 'show protocols'), ['Name Proto', 'x']);
  });
});
