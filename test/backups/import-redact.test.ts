// `confvault backup import` and `import-git` store secrets as a live backup would: redacted with the appliance's key (issue #14), whatever the bytes' encoding (issue #19).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { getBackupRow, readBackupText } from '../../src/features/backups/backups.service';
import { secretToken } from '../../src/templates/redact';
import { loadTranscript, startSimulator, type RunningSimulator, type Transcript } from '../sim/simulator';
import { REPO_ROOT, runCli, runCliAsync, startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';

/** What Oxidized or RANCID kept of the device: the configuration with its secrets in clear. */
const transcript = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/cisco-ios.json')) as Transcript & { secrets: string[] };
const unredacted = readFileSync(path.join(REPO_ROOT, 'test/sim/transcripts/cisco-ios.expected.txt'), 'utf8');

let t: TestAppliance;
let sim: RunningSimulator;
let dataArgs: string[];
let scratch: string;
let seq = 0;

before(async () => {
  t = await startTestAppliance();
  dataArgs = ['--data-dir', t.services.dataDir];
  scratch = tempDir('confvault-import-redact-');
  sim = await startSimulator({ devices: [{ name: transcript.hostname, transcript }] });
});

after(async () => {
  await sim.close();
  await t.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A cisco-ios device that the simulator answers for. */
function device(name: string): number {
  const { db, secrets } = t.services;
  const credential_id = seedCredential(db, secrets, {
    name: `cred-${name}`,
    username: transcript.username,
    password: transcript.password,
    enable_secret: transcript.enable?.password,
  });
  return seedDevice(db, { name, port: sim.port, credential_id, template_id: seedBuiltinTemplate(t.services.db, 'cisco-ios') });
}

function storedText(backupId: string): string {
  const row = getBackupRow(t.services.db, backupId)!;
  return readBackupText(t.services.snapshots, null, row) ?? '';
}

function assertRedacted(text: string): void {
  for (const secret of transcript.secrets) assert.ok(!text.includes(secret), `secret ${JSON.stringify(secret)} stored in clear`);
  assert.ok(text.includes(secretToken(t.services.secrets.redactionKey, transcript.secrets[0])), 'the keyed token is stored in its place');
}

function fileWith(text: string | Buffer): string {
  const file = path.join(scratch, `import-${++seq}.cfg`);
  writeFileSync(file, text);
  return file;
}

/** A new git repository, as the old tool's committer; returns a runner of git commands in it. */
function gitRepo(repo: string): (...args: string[]) => Buffer {
  execFileSync('git', ['init', '-q', repo]);
  return (...args) =>
    execFileSync('git', ['-C', repo, ...args], {
      env: { ...process.env, GIT_AUTHOR_NAME: 'oxidized', GIT_AUTHOR_EMAIL: 'o@x', GIT_COMMITTER_NAME: 'oxidized', GIT_COMMITTER_EMAIL: 'o@x' },
    });
}

function latest(deviceId: number): { id: string; changed: number; trigger: string } {
  return t.services.db.prepare('SELECT id, changed, trigger FROM backups WHERE device_id = ? ORDER BY started_at DESC LIMIT 1').get(deviceId) as {
    id: string;
    changed: number;
    trigger: string;
  };
}

describe('backup import with redact_secrets on (the default)', () => {
  test('the imported version holds tokens, and the next live backup of the same configuration is not a change', async () => {
    const id = device('imp-core');
    const r = runCli(['backup', 'import', '--device', String(id), '--file', fileWith(unredacted), '--started-at', '2024-03-05 10:20:30', ...dataArgs]);
    assert.equal(r.status, 0, r.stderr);
    assertRedacted(storedText(r.stdout.trim()));

    const live = await runCliAsync(['backup', 'run', '--device', String(id), ...dataArgs]);
    assert.equal(live.status, 0, live.stderr);
    const row = latest(id);
    assert.notEqual(row.trigger, 'import');
    assert.equal(row.changed, 0, 'the live backup equals the imported version');
    assert.equal(storedText(row.id), storedText(r.stdout.trim()));
  });

  test('import-git: every version of the history is redacted, and a second run imports nothing twice', () => {
    const id = device('git-core');
    const repo = path.join(scratch, 'oxidized-repo');
    const git = gitRepo(repo);
    writeFileSync(path.join(repo, 'git-core'), unredacted);
    git('add', 'git-core');
    git('commit', '-q', '-m', 'v1', '--date', '2023-01-01T00:00:00Z');
    writeFileSync(path.join(repo, 'git-core'), unredacted + 'ntp server 192.0.2.123\n');
    git('add', 'git-core');
    git('commit', '-q', '-m', 'v2', '--date', '2023-02-01T00:00:00Z');

    const r = runCli(['backup', 'import-git', '--repo', repo, '--layout', 'oxidized', ...dataArgs]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^imported\t2$/m);
    const ids = t.services.db.prepare('SELECT id FROM backups WHERE device_id = ? ORDER BY started_at').pluck().all(id) as string[];
    assert.equal(ids.length, 2);
    for (const b of ids) assertRedacted(storedText(b));

    const again = runCli(['backup', 'import-git', '--repo', repo, '--layout', 'oxidized', ...dataArgs]);
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stdout, /^imported\t0$/m, 'the redacted versions are recognised as already imported');
  });
});

describe('backup import with redact_secrets off', () => {
  test('the file is stored as read, as a live backup would be', () => {
    const id = device('imp-clear');
    const conf = path.join(scratch, 'no-redaction.conf');
    writeFileSync(conf, '[backup]\nredact_secrets = false\n');
    const r = runCli(['backup', 'import', '--device', String(id), '--file', fileWith(unredacted), '--config', conf, ...dataArgs]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(storedText(r.stdout.trim()), unredacted);
  });
});

/** The stored text of an import and how its bytes were decoded (schema 0018). */
function storedWithEncoding(backupId: string): { text: string; encoding: string | null } {
  return { text: storedText(backupId), encoding: getBackupRow(t.services.db, backupId)!.source_encoding };
}

function importBytes(name: string, bytes: Buffer): { text: string; encoding: string | null } {
  const r = runCli(['backup', 'import', '--device', String(device(name)), '--file', fileWith(bytes), ...dataArgs]);
  assert.equal(r.status, 0, r.stderr);
  return storedWithEncoding(r.stdout.trim());
}

const utf16le = (text: string, bom = true) => Buffer.concat([bom ? Buffer.from([0xff, 0xfe]) : Buffer.alloc(0), Buffer.from(text, 'utf16le')]);
const utf16be = (text: string) => Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]);

describe('backup import decodes the bytes before it normalises and redacts (issue #19)', () => {
  test('a UTF-16LE file with a byte-order mark is stored as UTF-8 with its SNMP community and enable secret as tokens', () => {
    assert.ok(unredacted.includes('snmp-server community') && unredacted.includes('enable secret'));
    const plain = importBytes('enc-utf8', Buffer.from(unredacted, 'utf8'));
    const { text, encoding } = importBytes('enc-utf16', utf16le(unredacted.replace(/\n/g, '\r\n')));
    assert.ok(!text.includes('\0'), 'no NUL bytes between the characters');
    assertRedacted(text);
    assert.equal(text, plain.text, 'the same configuration as its UTF-8 copy, byte for byte');
    assert.equal(encoding, 'utf-16le', 'the record says the text was converted');
    assert.equal(plain.encoding, null, 'a UTF-8 file is the bytes as they came: nothing to say');
  });

  test('UTF-16 without a mark (NUL pattern) and big-endian UTF-16 are decoded too', () => {
    const noBom = importBytes('enc-nobom', utf16le(unredacted, false));
    assert.equal(noBom.encoding, 'utf-16le');
    const be = importBytes('enc-be', utf16be(unredacted));
    assert.equal(be.encoding, 'utf-16be');
    for (const { text } of [noBom, be]) assertRedacted(text);
  });

  test('Latin-1 bytes are decoded (no U+FFFD) and the record says the text is a Windows-1252 reading', () => {
    const latin1 = Buffer.from('hostname core\ninterface Gi0/1\n description Caf\u00e9 r\u00e9seau \u00a7 3\n', 'latin1');
    const { text, encoding } = importBytes('enc-latin1', latin1);
    assert.ok(!text.includes('\ufffd'), 'no replacement characters');
    assert.match(text, /description Café réseau § 3/);
    assert.equal(encoding, 'windows-1252');
  });

  test('a UTF-8 file with a byte-order mark: the mark is not stored, the record says it was there', () => {
    const { text, encoding } = importBytes('enc-bom8', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('hostname bom\n')]));
    assert.equal(text, 'hostname bom\n');
    assert.equal(encoding, 'utf-8-bom');
  });

  test('import-git decodes every blob the same way: a UTF-16LE file in the history is redacted', () => {
    const id = device('git-utf16');
    const repo = path.join(scratch, 'utf16-repo');
    const git = gitRepo(repo);
    writeFileSync(path.join(repo, 'git-utf16'), utf16le(unredacted));
    git('add', 'git-utf16');
    git('commit', '-q', '-m', 'v1');
    const r = runCli(['backup', 'import-git', '--repo', repo, '--layout', 'oxidized', ...dataArgs]);
    assert.equal(r.status, 0, r.stderr);
    const { text, encoding } = storedWithEncoding(latest(id).id);
    assert.equal(encoding, 'utf-16le');
    assert.ok(!text.includes('\0'));
    assertRedacted(text);
  });
});
