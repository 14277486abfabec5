// The lenient fingerprint (an imported version against the first live backup) keeps its values while it is computed in bounded memory: fixed values for texts that exercise its ordering rules, and a big configuration within a small heap.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lenientFingerprint } from '../../src/templates/patterns';

/** Lines that exercise the rules: header comments, separators, secrets, repeated and prefixed top-level lines, children before any parent, characters outside the BMP and above the surrogates. */
const MIXED = [
  '! Last configuration change at 10:00',
  '# exported by a tool',
  ' orphan child before any parent',
  '  deeper orphan',
  'hostname core-1   ',
  '!',
  'interface Gi0/1',
  ' description uplink \u{1F600} rack',
  ' description uplink \uFF01 rack',
  ' ip address 10.0.0.1 255.255.255.0',
  '!',
  'interface Gi0/1.100',
  ' encapsulation dot1Q 100',
  'interface Gi0/1',
  ' shutdown',
  ' description again',
  'interface Gi0/10',
  ' no shutdown',
  'username admin privilege 15 secret 5 <secret:0a1b2c3d>',
  'username ops password <removed>',
  'snmp-server community <secret:deadbeef> RO',
  'router bgp 1',
  ' neighbor 10.0.0.2 password 7 <secret:00ff00ff>',
  '  address-family ipv4',
  'router bgp 10',
  '',
  '   ',
  '# a comment after the header stays',
  'ntp clock-period 17179',
  'end',
];

/** A seeded text of many short lines from a small vocabulary: many equal keys, equal parents and prefixes of each other. */
function seededText(lines: number, seed: number): string {
  let s = seed >>> 0;
  const next = (n: number) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % n;
  };
  const words = ['interface', 'ip', 'route', 'vlan', 'a', 'ab', 'abc', 'b', 'x\u00e9', '\u{1F600}', '\uFFFD', '<secret:12345678>', '1', '!', '#'];
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const indent = [' ', '', '', '  ', '\t'][next(5)];
    const n = 1 + next(4);
    const parts: string[] = [];
    for (let j = 0; j < n; j++) parts.push(words[next(words.length)]);
    out.push(indent + parts.join(' ') + (next(7) === 0 ? '  ' : ''));
  }
  return out.join(next(2) ? '\n' : '\r\n');
}

const CASES: { name: string; text: string; ignore: string[]; print: string }[] = [
  { name: 'mixed', text: MIXED.join('\n'), ignore: [], print: '2d29bb93dd2cd56c0d5c81a2a6ab12ff4030a5f00cc0c89c7eae8971e030c148' },
  { name: 'mixed, CRLF', text: MIXED.join('\r\n') + '\r\n', ignore: [], print: '2d29bb93dd2cd56c0d5c81a2a6ab12ff4030a5f00cc0c89c7eae8971e030c148' },
  {
    name: 'mixed, an ignore pattern',
    text: MIXED.join('\n'),
    ignore: ['^ntp clock-period'],
    print: '24a65c600a40e78a79bb5b9b829956d53846de2fef78a855ec01c92a93cc5232',
  },
  {
    name: 'a NUL inside a line',
    text: 'interface a\0b\n x\ninterface a\n y\ninterface a\0\n z',
    ignore: [],
    print: 'f45f104cc7442421bb85a4b3b4938e5317423c80298557b2edc38f9026d6c386',
  },
  { name: 'empty', text: '', ignore: [], print: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
  { name: 'seeded 20,000 lines', text: seededText(20_000, 7), ignore: ['^vlan'], print: 'def2786ffdc1b2d77df8c407fdf041ae14de130c8f48846ed19973a573b79ba4' },
  { name: 'seeded 5,000 lines', text: seededText(5_000, 11), ignore: [], print: 'b8c36ee0f242c832b8295428f247611606bfd67673d2ad49fbb4149eec43355f' },
];

test('lenient fingerprints keep their values (computed by the sorting implementation before 26 Nov 2026)', () => {
  for (const c of CASES) assert.equal(lenientFingerprint(c.text, c.ignore), c.print, c.name);
});
