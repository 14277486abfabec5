// `confvault device list|show|add|import|export` as an operator runs them: the real CLI process on a real database.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { deleteDevice } from '../../src/features/devices/devices.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { runCliAsync, startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { seedCredential, seedGroup } from '../helpers/seed';

let t: TestAppliance;
let dir = '';
let data: string[] = [];
let core = 0;
const cli = (args: string[], input = '') => runCliAsync([...args, ...data], { input });
const db = () => t.services.db;
const deviceCount = () => db().prepare('SELECT count(*) FROM devices').pluck().get() as number;

before(async () => {
  t = await startTestAppliance();
  data = ['--data-dir', t.services.dataDir];
  dir = tempDir();
  seedCredential(db(), t.appliance.secrets, { name: 'lab-cred', username: 'u', password: 'p' });
  core = seedGroup(db(), 'core');
});
after(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

test('device add takes names, prints the id; a bad device names each problem (exit 1), a missing flag is a usage error (exit 2)', async () => {
  const ok = await cli([
    'device',
    'add',
    '--name',
    'core1',
    '--hostname',
    '192.0.2.1',
    '--credential',
    'lab-cred',
    '--template',
    'cisco-ios',
    '--group',
    'core',
  ]);
  assert.equal(ok.status, 0, ok.stderr);
  const id = Number(ok.stdout.trim());
  assert.equal(db().prepare('SELECT group_id FROM devices WHERE id = ?').pluck().get(id), core);
  assert.equal(db().prepare("SELECT door FROM audit_log WHERE action = 'device.create' AND target = ?").pluck().get(`device ${id}`), 'cli');

  const bad = await cli(['device', 'add', '--name', 'core2', '--hostname', '300.1.1.1', '--credential', 'nope', '--template', 'cisco-ios', '--port', 'x']);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /hostname: must be an IPv4 or IPv6 address or a DNS name/);
  assert.match(bad.stderr, /credential: credential "nope" does not exist/);
  assert.match(bad.stderr, /port: must be a number/);

  const usage = await cli(['device', 'add', '--name', 'core3', '--hostname', '192.0.2.3', '--template', 'cisco-ios']);
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /--credential is required/);
  assert.equal(deviceCount(), 1);
});

test('device list and show: names of template, group and credential, the schedule, by id or by name', async () => {
  const list = await cli(['device', 'list']);
  assert.equal(list.status, 0, list.stderr);
  const [line] = list.stdout.trim().split('\n');
  assert.match(line, /^\d+\tcore1\t192\.0\.2\.1\tcisco-ios\tcore\tnever\t-$/);
  const json = await cli(['device', 'list', '--group', String(core), '--json']);
  const items = JSON.parse(json.stdout) as { name: string; template: string; credential: string; group: string }[];
  assert.deepEqual(
    items.map((d) => [d.name, d.template, d.credential, d.group]),
    [['core1', 'cisco-ios', 'lab-cred', 'core']],
  );
  assert.equal((await cli(['device', 'list', '--group', '999'])).status, 1);
  assert.equal((await cli(['device', 'list', '--group', 'core'])).status, 2);

  const show = await cli(['device', 'show', 'CORE1']);
  assert.equal(show.status, 0, show.stderr);
  assert.match(show.stdout, /template: +cisco-ios/);
  assert.match(show.stdout, /credential: +lab-cred/);
  assert.match(show.stdout, /held: +no/);
  assert.match(show.stdout, /schedule: +0 2 \* \* \* \(inherited\)/);
  assert.match(show.stdout, /host key: +- \(none recorded yet\)/);
  assert.match(show.stdout, /last backup: +never/);
  const missing = await cli(['device', 'show', 'nope']);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /device "nope" not found/);
});

test('device import: --dry-run prints "row N: field: message" and writes nothing; --mode valid creates the good rows; exit 1 while a row is bad', async () => {
  const file = path.join(dir, 'inventory.csv');
  writeFileSync(
    file,
    [
      'name,hostname,group,credential,template',
      'i1,192.0.2.11,core,lab-cred,cisco-ios',
      'i2,192.0.2.12,nowhere,lab-cred,cisco-ios',
      'core1,192.0.2.13,,lab-cred,cisco-ios',
    ].join('\n'),
  );
  const dry = await cli(['device', 'import', file, '--dry-run']);
  assert.equal(dry.status, 1);
  assert.match(dry.stderr, /^row 3: group: group "nowhere" does not exist/m);
  assert.match(dry.stderr, /^row 4: name: a device named "core1" already exists/m);
  assert.match(dry.stderr, /dry run: 1 valid, 2 invalid; nothing written/);
  const all = await cli(['device', 'import', file]);
  assert.equal(all.status, 1);
  assert.match(all.stderr, /nothing written/);
  assert.equal(deviceCount(), 1);
  const valid = await cli(['device', 'import', file, '--mode', 'valid']);
  assert.equal(valid.status, 1);
  assert.match(valid.stdout, /^\d+\ti1\tcreated$/m);
  assert.equal(deviceCount(), 2);
  assert.equal((await cli(['device', 'import', file, '--mode', 'some'])).status, 2);
});

test('device import of an Oxidized router.db with one credential for all', async () => {
  const file = path.join(dir, 'router.db');
  writeFileSync(file, '# oxidized\nsw1:procurve:core\nsw2:eos:core:admin:secret\n');
  const r = await cli(['device', 'import', file, '--credential', 'lab-cred']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /2 device\(s\) created, 0 updated/);
  assert.equal(db().prepare("SELECT t.name FROM devices d JOIN templates t ON t.id = d.template_id WHERE d.name = 'sw1'").pluck().get(), 'aruba-procurve');
  const none = await cli(['device', 'import', file]);
  assert.equal(none.status, 1);
  assert.match(none.stderr, /needs one credential/);
});

test('device export writes the CSV the import reads back', async () => {
  const file = path.join(dir, 'export.csv');
  const r = await cli(['device', 'export', file, '--group', String(core)]);
  assert.equal(r.status, 0, r.stderr);
  const csv = readFileSync(file, 'utf8');
  assert.equal(csv.split('\n')[0], 'name,hostname,port,protocol,group,credential,template,enabled,description,schedule');
  assert.deepEqual(
    csv
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(',')[0]),
    ['core1', 'i1', 'sw1', 'sw2'],
  );
  const stdout = await cli(['device', 'export']);
  assert.equal(stdout.stdout, csv);
  for (const id of db().prepare("SELECT id FROM devices WHERE name IN ('i1', 'sw1')").pluck().all() as number[]) deleteDevice(db(), SYSTEM_ACTOR, id);
  const back = await cli(['device', 'import', '-', '--mode', 'valid'], csv);
  assert.equal(back.status, 1);
  assert.match(back.stderr, /2 device\(s\) created, 0 updated, 2 invalid row\(s\) left out/);
  assert.equal((await cli(['device', 'export'])).stdout, csv);

  // Edited in a spreadsheet and read back with --update: the changed device is updated, the others left alone.
  const edited = csv.replace('\ni1,192.0.2.11,', '\ni1,192.0.2.111,');
  const updated = await cli(['device', 'import', '-', '--update'], edited);
  assert.equal(updated.status, 0, updated.stderr);
  assert.match(updated.stdout, /^\d+\ti1\tupdated$/m);
  assert.match(updated.stdout, /^\d+\tcore1\tunchanged$/m);
  assert.match(updated.stderr, /0 device\(s\) created, 1 updated/);
  assert.equal(db().prepare("SELECT hostname FROM devices WHERE name = 'i1'").pluck().get(), '192.0.2.111');
});
