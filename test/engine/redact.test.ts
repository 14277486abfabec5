// Keyed secret tokens: the URL credential rule every template has, token equality, and notification diffs redacted with the appliance's key.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { redactLines, secretToken } from '../../src/templates/redact';
import { computeNotificationDiffs } from '../../src/features/notifications/notification-diffs';
import { getTemplateSpec } from '../../src/features/templates/templates.service';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate } from '../helpers/seed';

const KEY = Buffer.alloc(32, 5);
const tok = (s: string) => secretToken(KEY, s);
const redactOne = (line: string) => redactLines([line], [], KEY)[0];

describe('URL credentials, whatever the template', () => {
  const cases: [string, string, string][] = [
    ['scheme://user:password@host', 'archive path ftp://cfg:Ftp-Pw1@10.0.0.5/$h', `archive path ftp://cfg:${tok('Ftp-Pw1')}@10.0.0.5/$h`],
    ['inside a quoted string', 'set url "https://u:S3cr%40t@h.example/x"', `set url "https://u:${tok('S3cr%40t')}@h.example/x"`],
    ['user:password@ at the start of a quoted string', 'set proxy "svc:Pr0xy@10.0.0.9:3128"', `set proxy "svc:${tok('Pr0xy')}@10.0.0.9:3128"`],
    ['two URLs on a line', 'a http://x:p1@h b http://y:p2@h', `a http://x:${tok('p1')}@h b http://y:${tok('p2')}@h`],
  ];
  for (const [what, line, expected] of cases) test(`tokenises the password: ${what}`, () => assert.equal(redactOne(line), expected));

  const kept: [string, string][] = [
    ['an IPv6 address', 'destination http://[2001:db8::1]:8080/index'],
    ['user@host without a password', 'set archive-sites "ftp://backup@10.0.0.5/cfg"'],
    ['a port without credentials', 'url https://h.example:8443/path'],
    ['an e-mail address', 'snmp-server contact noc@corp.example.net'],
    ['a time of day before an @', 'logging at 10:15@host'],
  ];
  for (const [what, line] of kept) test(`leaves ${what} alone`, () => assert.equal(redactOne(line), line));

  test('a token written by a template rule is not hashed again', () => {
    const line = `path ftp://u:${tok('x')}@h/`;
    assert.equal(redactOne(line), line);
  });
});

describe('tokens', () => {
  test('equal secrets give equal tokens; a changed secret or another key gives another', () => {
    assert.equal(secretToken(KEY, 'public'), secretToken(KEY, 'public'));
    assert.notEqual(secretToken(KEY, 'public'), secretToken(KEY, 'public2'));
    assert.notEqual(secretToken(KEY, 'public'), secretToken(Buffer.alloc(32, 6), 'public'));
    assert.match(secretToken(KEY, 'public'), /^<secret:[0-9a-f]{8}>$/);
  });
});

describe('notification diffs', () => {
  let t: TestAppliance;
  before(async () => {
    t = await startTestAppliance();
  });
  after(() => t.close());

  test('are redacted with the appliance key and the template rules, even when the stored versions are in clear', () => {
    const { db, snapshots, secrets } = t.services;
    const before = snapshots.put('hostname r1\nsnmp-server community 0ldC0mm RO\nend\n').hash;
    const after = snapshots.put('hostname r1\nsnmp-server community N3wC0mm RO\nend\n').hash;
    const tpl = getTemplateSpec(db, seedBuiltinTemplate(db, 'cisco-ios'));
    const [r] = computeNotificationDiffs(
      {
        diffs: [{ device_name: 'r1', snapshot: after, previous_snapshot: before, redact_patterns: tpl?.redact_patterns ?? [] }],
        redaction_key: secrets.redactionKey.toString('hex'),
        deadline_at: Date.now() + 5000,
        snapshotsRoot: snapshots.root,
      },
      (hash) => snapshots.read(hash),
    );
    assert.ok(!r.diff.includes('0ldC0mm') && !r.diff.includes('N3wC0mm'));
    assert.ok(r.diff.includes(`-snmp-server community ${secretToken(secrets.redactionKey, '0ldC0mm')} RO`));
    assert.ok(r.diff.includes(`+snmp-server community ${secretToken(secrets.redactionKey, 'N3wC0mm')} RO`));
  });
});
