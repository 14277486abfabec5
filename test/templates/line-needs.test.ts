// What a line must hold for a redact rule to change it (src/templates/line-needs.ts) is a necessary condition: every
// line the rule's pattern matches holds it, on every device's real output the lab holds. Redaction skips a rule for a
// line without it, so a wrong need would leave a secret in clear.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtinTemplates } from '../../src/templates/index';
import { leadIndex, lineNeed, meetsNeed, type LineNeed } from '../../src/templates/line-needs';
import { redactLines } from '../../src/templates/redact';
import { loadTranscript } from '../sim/simulator';

const TRANSCRIPTS = fileURLToPath(new URL('../sim/transcripts', import.meta.url));

const start = (...texts: string[]): LineNeed => ({ at: 'start', texts });
const anywhere = (...texts: string[]): LineNeed => ({ at: 'anywhere', texts });

test('needs read from a pattern: anchored literal starts, alternatives, unanchored literals; null when unsure', () => {
  const cases: [string, LineNeed | null][] = [
    ['^snmp-server community (?<secret>\\S+)', start('snmp-server community ')],
    ['^\\s*ip ospf (?:authentication-key|message-digest-key \\d+ md5) (?<secret>\\S+)', start('ip ospf ')],
    ['^\\s+(?:password|secret)(?: [0-9])? (?<secret>\\S+)', start('password', 'secret')],
    ['^(?:tacacs|radius)-server key (?<secret>\\S+)', start('tacacs', 'radius')],
    ['^\\s*(?:wpa-psk|priority \\d+ set-key) (?:ascii|hex)', start('wpa-psk', 'priority ')],
    ['^ key [0-7] (?<secret>\\S+)$', start('key ')],
    ['^\\tpassword (?<secret>\\S+)', start('password ')],
    ['^set\\.x (?<secret>\\S+)', start('set.x ')],
    // The character before a quantifier is not required.
    ['^keys? (?<secret>\\S+)', start('key')],
    ['^ab\\.?c', start('ab')],
    ['\\bserver-key (?<secret>\\S+)', anywhere('server-key ')],
    ['\\b(?:password|secret) (?<secret>\\S+)', anywhere('password', 'secret')],
    ['\\s-(?:password|radKey) (?<secret>\\S+)', anywhere('-')],
    ['\\bneighbor \\S+ password', anywhere('neighbor ')],
    // A class or an escape first, an optional group, an empty or indented alternative, a flag group.
    ['^\\S+ password (?<secret>\\S+)', null],
    ['^[a-z]+ key', null],
    ['^(?:set )?password (?<secret>\\S+)', null],
    ['^(?:|x)y', null],
    ['^(?: key|x)', null],
    ['^(?i)password', null],
    ['(?i)password', null],
    ['^(?<secret>\\S+)', null],
    ['^ {2}key', null],
    ['\\S+ key', null],
  ];
  for (const [source, expected] of cases) assert.deepEqual(lineNeed(source), expected, source);
});

test('a line’s text starts past its leading whitespace, Unicode spaces too (what \\s matches); a need is met or not', () => {
  assert.equal(leadIndex('password x'), 0);
  assert.equal(leadIndex('  \tpassword x'), 3);
  assert.equal(leadIndex('\u00a0password x'), 1);
  assert.equal(leadIndex('\u3000\ufeffpassword x'), 2);
  assert.equal(leadIndex('   '), 3);
  assert.equal(meetsNeed('  password x', 2, start('secret', 'password')), true);
  assert.equal(meetsNeed('interface x', 0, start('secret', 'password')), false);
  assert.equal(meetsNeed('interface x password', 0, anywhere('password')), true);
  assert.equal(meetsNeed('interface x', 0, null), true);
});

test('every built-in redact pattern, on every line of every lab device’s output: a line it matches holds its need', () => {
  const sources = [...new Set(builtinTemplates().flatMap((t) => t.redact_patterns.map((r) => r.pattern)))];
  const withNeeds = sources.map((s) => ({ s, re: new RegExp(s), need: lineNeed(s) })).filter((r) => r.need !== null);
  // The saving needs most rules to have one: fails if the reader stops understanding the built-in patterns.
  assert.ok(withNeeds.length >= sources.length * 0.9, `${withNeeds.length} of ${sources.length} patterns have a need`);
  const lines = new Set<string>();
  for (const file of readdirSync(TRANSCRIPTS).filter((f) => f.endsWith('.json'))) {
    const t = loadTranscript(path.join(TRANSCRIPTS, file));
    for (const out of Object.values(t.commands)) for (const line of String(out).split(/\r?\n/)) lines.add(line);
  }
  let matched = 0;
  for (const line of lines) {
    // The line as the device wrote it, and indented otherwise: with a tab, a no-break space, spaces, none.
    const bare = line.trimStart();
    for (const variant of [line, bare, `\t${bare}`, `\u00a0${bare}`, `   ${bare}`]) {
      const lead = leadIndex(variant);
      for (const r of withNeeds) {
        if (!r.re.test(variant)) continue;
        matched++;
        assert.ok(meetsNeed(variant, lead, r.need), `${r.s} matches ${JSON.stringify(variant)} but its need ${JSON.stringify(r.need)} is not met`);
      }
    }
  }
  assert.ok(matched > 500, `the lab's outputs exercise the patterns (${matched} matches)`);
});

test('a user’s rule (RE2) with a prefix still redacts its lines, indented or not; other lines are left as they are', () => {
  const key = Buffer.alloc(32, 7);
  const rules = [{ pattern: '^\\s*vault-token (?<secret>\\S+)' }, { pattern: '^(?:api|cli)-key (?<secret>\\S+)' }];
  const out = redactLines(['vault-token abc123', '   vault-token def456', 'api-key k1', 'cli-key k2', 'note vault-token zzz', 'interface x'], rules, key);
  assert.match(out[0], /^vault-token <secret:[0-9a-f]{8}>$/);
  assert.match(out[1], /^ {3}vault-token <secret:[0-9a-f]{8}>$/);
  assert.match(out[2], /^api-key <secret:[0-9a-f]{8}>$/);
  assert.match(out[3], /^cli-key <secret:[0-9a-f]{8}>$/);
  assert.equal(out[4], 'note vault-token zzz');
  assert.equal(out[5], 'interface x');
});
