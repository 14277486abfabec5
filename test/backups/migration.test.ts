// Moving from Oxidized or RANCID (issue #29): their git histories imported, then a live backup of the same devices is no change.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { getBackupRow, readBackupText } from '../../src/features/backups/backups.service';
import { loadTranscript, startSimulator, type RunningSimulator } from '../sim/simulator';
import { REPO_ROOT, runCli, runCliAsync, startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { apiCall } from '../helpers/api';
import { changeFingerprint, importFingerprint, lenientFingerprint, sameConfiguration } from '../../src/templates/patterns';
import { commitHistory, oxidizedIos, rancidIos } from './migration-fixtures';

const ios = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/cisco-ios.json'));
const running = ios.commands['show running-config'];
/** The configuration a month earlier: one interface description differs. */
const older = running.replace(' description printer-2F', ' description printer-1F');
const OX = ['ox-sw1', 'ox-sw2', 'ox-sw3'];
const RA = ['ra-sw1', 'ra-sw2', 'ra-sw3'];
const FILE = 'file-sw1';
const DATES = ['2026-02-01T08:00:00Z', '2026-03-01T08:00:00Z'];

let t: TestAppliance;
let sim: RunningSimulator;
let dataArgs: string[];
let scratch: string;
const ids = new Map<string, number>();

before(async () => {
  t = await startTestAppliance();
  dataArgs = ['--data-dir', t.services.dataDir];
  scratch = tempDir('confvault-migration-');
  const names = [...OX, ...RA, FILE];
  sim = await startSimulator({ devices: names.map((name) => ({ name, hostname: name, transcript: ios, username: name, password: ios.password })) });
  const { db, secrets } = t.services;
  const template_id = seedBuiltinTemplate(db, 'cisco-ios');
  const group_id = seedGroup(db, 'migrated');
  for (const name of names) {
    const credential_id = seedCredential(db, secrets, { name: `c-${name}`, username: name, password: ios.password, enable_secret: ios.enable?.password });
    ids.set(name, seedDevice(db, { name, port: sim.port, credential_id, template_id, group_id }));
  }
});

after(async () => {
  await sim.close();
  await t.close();
  rmSync(scratch, { recursive: true, force: true });
});

const changedRows = (deviceId: number) =>
  t.services.db.prepare('SELECT trigger, changed FROM backups WHERE device_id = ? ORDER BY started_at').all(deviceId) as { trigger: string; changed: number }[];

async function importThenRun(repo: string, layout: string, names: string[]): Promise<void> {
  const r = runCli(['backup', 'import-git', '--repo', repo, '--layout', layout, ...dataArgs]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^imported\\t${names.length * 2}$`, 'm'));
  for (const name of names) {
    const live = await runCliAsync(['backup', 'run', '--device', String(ids.get(name)), ...dataArgs]);
    assert.equal(live.status, 0, live.stderr);
    assert.match(live.stdout, /\tok\t/);
    assert.deepEqual(
      changedRows(ids.get(name)!),
      [
        { trigger: 'import', changed: 0 },
        { trigger: 'import', changed: 1 },
        { trigger: 'cli', changed: 0 },
      ],
      `${name}: the older import is a change (the description), the live backup of the same configuration is not`,
    );
  }
}

test('an Oxidized history (ios model output, with its show version / inventory comments) then a live backup: no change', async () => {
  const repo = path.join(scratch, 'oxidized');
  commitHistory(
    repo,
    DATES.map((date, i) => ({ date, files: Object.fromEntries(OX.map((n) => [n, oxidizedIos(i === 0 ? older : running, n)])) })),
  );
  await importThenRun(repo, 'oxidized', OX);
  const text = newestImport(ids.get('ox-sw1')!);
  assert.doesNotMatch(text, /^! Last configuration change|^! NVRAM config last updated/m, 'the template strip rules applied to the import');
});

test('a RANCID history (content type, header, secrets commented out, users sorted) then a live backup: no change', async () => {
  const repo = path.join(scratch, 'rancid');
  commitHistory(
    repo,
    DATES.map((date, i) => ({
      date,
      files: Object.fromEntries(RA.map((n) => [`networking/configs/${n}`, rancidIos(i === 0 ? older : running, n)])),
    })),
  );
  writeFileSync(path.join(repo, 'networking', 'router.db'), RA.map((n) => `${n};cisco;up`).join('\n'));
  await importThenRun(repo, 'rancid', RA);
  const text = newestImport(ids.get('ra-sw1')!);
  assert.doesNotMatch(text, /RANCID-CONTENT-TYPE|^!Chassis type:|^!Image:/m, "RANCID's header is not stored as configuration");
  assert.match(text, /^enable secret <removed>$/m, 'a secret RANCID removed is stored as removed, uncommented');
  assert.doesNotMatch(text, /^!.*<removed>/m);
  assert.doesNotMatch(text, /<secret:[0-9a-f]{8}>.*<removed>|<removed>.*<secret:/m);
});

test('backup import --file of a raw show running-config (build lines, byte count, change stamps) then a live backup: no change', async () => {
  const file = path.join(scratch, 'raw.cfg');
  writeFileSync(file, running.replaceAll('core-sw1', FILE));
  const r = runCli(['backup', 'import', '--device', String(ids.get(FILE)), '--file', file, ...dataArgs]);
  assert.equal(r.status, 0, r.stderr);
  const live = await runCliAsync(['backup', 'run', '--device', String(ids.get(FILE)), ...dataArgs]);
  assert.equal(live.status, 0, live.stderr);
  assert.deepEqual(changedRows(ids.get(FILE)!), [
    { trigger: 'import', changed: 0 },
    { trigger: 'cli', changed: 0 },
  ]);
  assert.doesNotMatch(newestImport(ids.get(FILE)!), /^Building configuration|^Current configuration|^ntp clock-period/m);
});

test('the history shows the imported versions at their commit times', async () => {
  const key = await t.keyFor({ permissions: ['backups.view', 'devices.view'] });
  for (const name of [OX[0], RA[0]]) {
    const r = await apiCall(t, `/devices/${ids.get(name)}/backups?limit=10`, { key });
    assert.equal(r.status, 200, r.text);
    const started = (r.body.items as { started_at: string }[]).map((i) => i.started_at).slice(1);
    assert.deepEqual(started, ['2026-03-01 08:00:00', '2026-02-01 08:00:00'], `${name}: newest first, after the live backup`);
  }
});

test('after an import, only secret values, comment headers, separators and block order are left out of the comparison, once', () => {
  const imported = importFingerprint('!header: x\nenable secret <removed>\nusername b secret <removed>\nusername a secret <removed>\n!\n!\nhostname r1\n', []);
  const live = (text: string) => [changeFingerprint(text, []), text] as const;
  const same = (previous: string, [fp, text]: readonly [string, string]) => sameConfiguration(previous, fp, () => lenientFingerprint(text, []));
  const liveText = '!\nenable secret 9 <secret:0123abcd>\nusername a secret 9 <secret:1111aaaa>\nusername b secret 9 <secret:2222bbbb>\n!\nhostname r1\n';
  assert.equal(same(imported, live(liveText)), true);
  assert.equal(same(imported, live(liveText.replace('hostname r1', 'hostname r2'))), false, 'a changed line is a change');
  assert.equal(same(imported, live(liveText + 'ip routing\n')), false, 'an added line is a change');
  assert.equal(same(imported, live(liveText.replace('username b', 'username c'))), false, 'a renamed user is a change');
  const first = live(liveText);
  assert.equal(same(first[0], live(liveText.replace('<secret:0123abcd>', '<secret:9999eeee>'))), false, 'between live versions a changed secret is a change');
  assert.equal(same(imported, [importFingerprint(liveText, []), liveText]), false, 'between imported versions the full text counts');
});

function newestImport(deviceId: number): string {
  const id = t.services.db
    .prepare("SELECT id FROM backups WHERE device_id = ? AND trigger = 'import' ORDER BY started_at DESC LIMIT 1")
    .pluck()
    .get(deviceId) as string;
  return readBackupText(t.services.snapshots, null, getBackupRow(t.services.db, id)!) ?? '';
}
