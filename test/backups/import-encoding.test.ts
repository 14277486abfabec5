// Bytes that are not UTF-8 (issue #19, item 4): UTF-16 and Latin-1 files are decoded before normalisation and redaction, and the record says so.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { getBackupRow, readBackupText } from '../../src/features/backups/backups.service';
import { secretToken } from '../../src/templates/redact';
import { loadTranscript, type Transcript } from '../sim/simulator';
import { REPO_ROOT, runCli, startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';

/** A cisco-ios configuration with its SNMP community and enable secret in clear, as the old tool kept it. */
const transcript = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/cisco-ios.json')) as Transcript & { secrets: string[] };
const unredacted = readFileSync(path.join(REPO_ROOT, 'test/sim/transcripts/cisco-ios.expected.txt'), 'utf8');

let t: TestAppliance;
let dataArgs: string[];
let scratch: string;
let seq = 0;

before(async () => {
  t = await startTestAppliance();
  dataArgs = ['--data-dir', t.services.dataDir];
  scratch = tempDir('confvault-import-encoding-');
});

after(async () => {
  await t.close();
  rmSync(scratch, { recursive: true, force: true });
});

function device(name: string): number {
  const { db, secrets } = t.services;
  const credential_id = seedCredential(db, secrets, { name: `cred-${name}`, username: 'u', password: 'p' });
  return seedDevice(db, { name, port: 22, credential_id, template_id: seedBuiltinTemplate(db, 'cisco-ios') });
}

function stored(backupId: string): { text: string; encoding: string | null } {
  const row = getBackupRow(t.services.db, backupId)!;
  return { text: readBackupText(t.services.snapshots, null, row) ?? '', encoding: row.source_encoding };
}

function importFile(deviceId: number, bytes: Buffer): string {
  const file = path.join(scratch, `import-${++seq}.cfg`);
  writeFileSync(file, bytes);
  const r = runCli(['backup', 'import', '--device', String(deviceId), '--file', file, ...dataArgs]);
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

const utf16le = (text: string, bom = true) => Buffer.concat([bom ? Buffer.from([0xff, 0xfe]) : Buffer.alloc(0), Buffer.from(text, 'utf16le')]);
const utf16be = (text: string) => Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]);

describe('backup import decodes the bytes before it normalises and redacts', () => {
  test('a UTF-16LE file with a byte-order mark is stored as UTF-8 with its SNMP community and enable secret as tokens', () => {
    assert.ok(transcript.secrets.length >= 2 && unredacted.includes('snmp-server community') && unredacted.includes('enable secret'));
    const plain = stored(importFile(device('enc-utf8'), Buffer.from(unredacted, 'utf8')));
    const id = importFile(device('enc-utf16'), utf16le(unredacted.replace(/\n/g, '\r\n')));
    const { text, encoding } = stored(id);
    assert.ok(!text.includes('\0'), 'no NUL bytes between the characters');
    for (const secret of transcript.secrets) assert.ok(!text.includes(secret), `secret ${JSON.stringify(secret)} stored in clear`);
    assert.ok(text.includes(secretToken(t.services.secrets.redactionKey, transcript.secrets[0])), 'the keyed token is stored in its place');
    assert.equal(text, plain.text, 'the same configuration as its UTF-8 copy, byte for byte');
    assert.equal(encoding, 'utf-16le', 'the record says the text was converted');
    assert.equal(plain.encoding, null, 'a UTF-8 file is the device bytes: nothing to say');
  });

  test('UTF-16 without a mark (NUL pattern) and big-endian UTF-16 are decoded too', () => {
    const noBom = stored(importFile(device('enc-nobom'), utf16le(unredacted, false)));
    assert.equal(noBom.encoding, 'utf-16le');
    const be = stored(importFile(device('enc-be'), utf16be(unredacted)));
    assert.equal(be.encoding, 'utf-16be');
    for (const { text } of [noBom, be]) {
      assert.ok(text.startsWith('!') || text.includes('hostname'), text.slice(0, 80));
      for (const secret of transcript.secrets) assert.ok(!text.includes(secret), `secret ${JSON.stringify(secret)} stored in clear`);
    }
  });

  test('Latin-1 bytes are decoded (no U+FFFD) and the record says the text is a Windows-1252 reading', () => {
    const latin1 = Buffer.from('hostname core\ninterface Gi0/1\n description Caf\u00e9 r\u00e9seau \u00a7 3\n', 'latin1');
    const id = importFile(device('enc-latin1'), latin1);
    const { text, encoding } = stored(id);
    assert.ok(!text.includes('\ufffd'), 'no replacement characters');
    assert.match(text, /description Café réseau § 3/);
    assert.equal(encoding, 'windows-1252');
  });

  test('a UTF-8 file with a byte-order mark: the mark is not stored, the record says it was there', () => {
    const { text, encoding } = stored(importFile(device('enc-bom8'), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('hostname bom\n')])));
    assert.equal(text, 'hostname bom\n');
    assert.equal(encoding, 'utf-8-bom');
  });

  test('import-git decodes every blob the same way: a UTF-16LE file in the history is redacted', () => {
    const id = device('git-utf16');
    const repo = path.join(scratch, 'oxidized-repo');
    mkdirSync(repo);
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', repo, ...args], {
        env: { ...process.env, GIT_AUTHOR_NAME: 'o', GIT_AUTHOR_EMAIL: 'o@x', GIT_COMMITTER_NAME: 'o', GIT_COMMITTER_EMAIL: 'o@x' },
      });
    git('init', '-q');
    writeFileSync(path.join(repo, 'git-utf16'), utf16le(unredacted));
    git('add', 'git-utf16');
    git('commit', '-q', '-m', 'v1');
    const r = runCli(['backup', 'import-git', '--repo', repo, '--layout', 'oxidized', ...dataArgs]);
    assert.equal(r.status, 0, r.stderr);
    const backupId = t.services.db.prepare('SELECT id FROM backups WHERE device_id = ?').pluck().get(id) as string;
    const { text, encoding } = stored(backupId);
    assert.equal(encoding, 'utf-16le');
    assert.ok(!text.includes('\0'));
    for (const secret of transcript.secrets) assert.ok(!text.includes(secret), `secret ${JSON.stringify(secret)} stored in clear`);
  });
});
