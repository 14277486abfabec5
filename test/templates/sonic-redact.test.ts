// The SONiC built-in redacts SNMP communities (JSON keys) only inside SNMP_COMMUNITY: port and neighbor keys stay.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactLines, secretToken } from '../../src/templates/redact';
import { getBuiltinTemplate } from '../../src/templates/index';

const KEY = Buffer.alloc(32, 5);
const tok = (s: string) => secretToken(KEY, s);

const CONFIG_DB = [
  '{',
  '    "BGP_NEIGHBOR": {',
  '        "10.0.0.57": {',
  '            "name": "ARISTA01T1",',
  '            "password": "bgp-pw-1"',
  '        }',
  '    },',
  '    "NTP_KEY": {',
  '        "42": {',
  '            "value": "ntp-key-1"',
  '        }',
  '    },',
  '    "PORT": {',
  '        "Ethernet0": {',
  '            "alias": "Eth1/1"',
  '        }',
  '    },',
  '    "SNMP_COMMUNITY": {',
  '        "comm-ro-1": {',
  '            "TYPE": "RO"',
  '        },',
  '        "comm-rw-2": {',
  '            "TYPE": "RW"',
  '        }',
  '    },',
  '    "SYSLOG_CONFIG": {',
  '        "GLOBAL": {',
  '            "value": "not-a-secret"',
  '        }',
  '    }',
  '}',
];

test('sonic: community keys and NTP key values become tokens inside their tables only; other keys stay', () => {
  const out = redactLines(CONFIG_DB, getBuiltinTemplate('sonic')!.redact_patterns, KEY);
  assert.equal(out[4], `            "password": "${tok('bgp-pw-1')}"`);
  assert.equal(out[9], `            "value": "${tok('ntp-key-1')}"`);
  assert.equal(out[18], `        "${tok('comm-ro-1')}": {`);
  assert.equal(out[21], `        "${tok('comm-rw-2')}": {`);
  const changed = new Set([4, 9, 18, 21]);
  out.forEach((line, i) => {
    if (!changed.has(i)) assert.equal(line, CONFIG_DB[i], `line ${i} kept`);
  });
});
