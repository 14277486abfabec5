// Secrets in the forms a live backup never records but an import does (Junos and PAN-OS brace configurations,
// PAN-OS set exports, F5's imish routing shell): each becomes its token, and the structure around it stays.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { redactLines, secretToken } from '../../src/templates/redact';
import { getBuiltinTemplate } from '../../src/templates/index';

const KEY = Buffer.alloc(32, 9);
const tok = (secret: string) => secretToken(KEY, secret);

function redacted(template: string, lines: string[]): string[] {
  return redactLines(lines, getBuiltinTemplate(template)!.redact_patterns, KEY);
}

/** Each case: a configuration excerpt and what is stored; `null` means the line is kept as it is. */
function check(template: string, cases: [string, string | null][]): void {
  const got = redacted(
    template,
    cases.map(([line]) => line),
  );
  cases.forEach(([line, want], i) => assert.equal(got[i], want ?? line, `${template}: ${line}`));
}

describe('import forms', () => {
  test('Junos brace form: an SNMP community inside snmp { } and a trap group name (sent as the community of its traps) are secrets, a policy community is a name', () => {
    check('juniper-junos', [
      ['snmp {', null],
      ['    community school-ro {', `    community ${tok('school-ro')} {`],
      ['        authorization read-only;', null],
      ['    }', null],
      ['    community "ops team";', `    community "${tok('ops team')}";`],
      ['    trap-group noc-traps {', `    trap-group ${tok('noc-traps')} {`],
      ['        targets {', null],
      ['    }', null],
      ['}', null],
      ['policy-options {', null],
      ['    community CUST members 65000:100;', null],
      ['}', null],
      ['set snmp trap-group noc-traps targets 10.0.0.5', `set snmp trap-group ${tok('noc-traps')} targets 10.0.0.5`],
    ]);
  });

  test('Junos: an NTP key value is the secret, its number is not; pre-shared-key hexadecimal like ascii-text', () => {
    check('juniper-junos', [
      ['set system ntp authentication-key 1 value "$9$abc.def"', `set system ntp authentication-key 1 value "${tok('$9$abc.def')}"`],
      ['    authentication-key 2 type sha256 value plainK3y; ## SECRET-DATA', `    authentication-key 2 type sha256 value ${tok('plainK3y')}; ## SECRET-DATA`],
      ['set security ike policy P pre-shared-key hexadecimal "f00ba4"', `set security ike policy P pre-shared-key hexadecimal "${tok('f00ba4')}"`],
    ]);
  });

  test('PAN-OS set and brace forms: phash, auth-profile password, brace password and key; a public key stays', () => {
    check('paloalto-panos', [
      ['set mgt-config users admin phash $1$vqgaovyp$BA8m4uld.cxY2T/n9ihK2.', `set mgt-config users admin phash ${tok('$1$vqgaovyp$BA8m4uld.cxY2T/n9ihK2.')}`],
      [
        'set network virtual-router vr1 protocol ospf auth-profile apr1 password -AQ==Jan8Q2Hw3pnWb1afI9wBVOcGTjU=b1lCQOAbU',
        `set network virtual-router vr1 protocol ospf auth-profile apr1 password ${tok('-AQ==Jan8Q2Hw3pnWb1afI9wBVOcGTjU=b1lCQOAbU')}`,
      ],
      ['              password pass;', `              password ${tok('pass')};`],
      ['          pre-shared-key {', null],
      ['            key "a b";', `            key "${tok('a b')}";`],
      ['set deviceconfig setting management initcfg public-key c3NoLXJzYQ==', null],
    ]);
  });

  test('F5: a brace opening a block is never a community; imish BGP neighbour passwords are secrets', () => {
    check('f5-tmos', [
      ['                community {', null],
      ['            community Tr4pComm', `            community ${tok('Tr4pComm')}`],
      [' neighbor pg1 password PASSWORD', ` neighbor pg1 password ${tok('PASSWORD')}`],
    ]);
  });
});
