// `confvault template ...` as an operator runs it (real child processes): usage errors, validate, export/import round trip, reload reaching a running `serve` (by the database and by SIGHUP), try on a simulated device.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { parseTemplateYaml } from '../../src/templates/files';
import { specFields } from '../../src/features/templates/templates.service';
import { REPO_ROOT, runCliAsync, spawnServe, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { loadTranscript, startSimulator, type RunningSimulator } from '../sim/simulator';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));

const LAB = (name: string, vendor = 'Lab switch') => `name: ${name}\nvendor: ${vendor}\ncommands:\n  - show running-config\n`;

describe('confvault template', () => {
  let t: TestAppliance;
  let dataDir: string;
  let folder: string;
  const cli = (...args: string[]) => runCliAsync(['template', ...args, '--data-dir', dataDir]);

  before(async () => {
    t = await startTestAppliance();
    dataDir = t.services.dataDir;
    folder = path.join(dataDir, 'templates');
    mkdirSync(folder, { recursive: true });
  });
  after(() => t.close());

  test('--help names every subcommand; a missing or unknown subcommand or argument is a usage error (exit 2)', async () => {
    const help = await cli('--help');
    assert.equal(help.status, 0);
    for (const sub of ['list', 'show NAME', 'export NAME [FILE]', 'import FILE', 'validate FILE', 'reload', 'try NAME --device ID']) {
      assert.ok(help.stdout.includes(`confvault template ${sub}`), sub);
    }
    for (const args of [[], ['frobnicate'], ['show'], ['try', 'frr'], ['try', 'frr', '--device', 'x'], ['list', 'extra'], ['validate']]) {
      const r = await cli(...args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^confvault template/);
    }
  });

  test('validate: "FILE: ok (template NAME)", or one "FILE: FIELD: MESSAGE" line per problem and exit 1', async () => {
    const good = path.join(t.dir, 'good.yaml');
    writeFileSync(good, LAB('lab-good'));
    const ok = await cli('validate', good);
    assert.equal(ok.status, 0, ok.stderr);
    assert.equal(ok.stdout, `${good}: ok (template lab-good)\n`);

    const bad = path.join(t.dir, 'bad.yaml');
    writeFileSync(bad, 'name: Lab Bad\nvendor: x\nmode: telnet\n');
    const r = await cli('validate', bad);
    assert.equal(r.status, 1);
    const lines = r.stderr.trim().split('\n');
    assert.deepEqual(lines.map((l) => l.split(': ')[1]).sort(), ['commands', 'mode', 'name']);
    for (const l of lines) assert.ok(l.startsWith(`${bad}: `), l);
    assert.equal((await cli('validate', path.join(t.dir, 'missing.yaml'))).status, 1);
  });

  test('export, validate, import, export again: the same template (round trip)', async () => {
    const file = path.join(t.dir, 'frr-export.yaml');
    const exp = await cli('export', 'frr', file);
    assert.equal(exp.status, 0, exp.stderr);
    assert.equal((await cli('validate', file)).status, 0);
    // A built-in's name is reserved: import it under a new name, as an engineer adapting it would.
    const renamed = path.join(t.dir, 'frr-lab.yaml');
    writeFileSync(renamed, readFileSync(file, 'utf8').replace(/^name: frr$/m, 'name: frr-lab'));
    const imp = await cli('import', renamed);
    assert.equal(imp.status, 0, imp.stderr);
    assert.match(imp.stderr, /template frr-lab imported \(id \d+\)/);
    const again = await cli('export', 'frr-lab');
    assert.equal(again.status, 0);
    const a = specFields(parseTemplateYaml(readFileSync(file, 'utf8'), file));
    const b = specFields(parseTemplateYaml(again.stdout, 'stdout'));
    assert.deepEqual(b, { ...a, name: 'frr-lab' });
    // Importing it twice fails on the name and makes nothing.
    const twice = await cli('import', renamed);
    assert.equal(twice.status, 1);
    assert.match(twice.stderr, /already exists/);

    const list = await cli('list');
    const row = list.stdout.split('\n').find((l) => l.split('\t')[1] === 'frr-lab');
    assert.deepEqual(row?.split('\t').slice(2), ['custom', 'FRRouting (vtysh)', '0', '-']);
    const show = await cli('show', 'frr-lab');
    assert.match(show.stdout, /^# id \d+, source custom, used by 0 devices\n/);
    assert.equal((await cli('show', 'no-such-template')).status, 1);
  });

  test('reload reaches a running serve through the database; SIGHUP reloads too; problems logged and printed', async () => {
    const key = await t.keyFor({ permissions: 'all' });
    const served = await spawnServe(['--data-dir', dataDir, '--listen', '127.0.0.1:0'], {
      CONFVAULT_LOG_LEVEL: 'info',
      CONFVAULT_BACKUP_SCHEDULE: '0 0 1 1 *',
    });
    const names = async () => {
      const res = await fetch(`${served.url}/api/v1/templates?builtin=false&limit=100`, { headers: { 'X-API-Key': key } });
      const body = (await res.json()) as { items: { name: string; source: string }[] };
      return Object.fromEntries(body.items.map((i) => [i.name, i.source]));
    };
    try {
      writeFileSync(path.join(folder, 'lab-a.yaml'), LAB('lab-a'));
      const r = await cli('reload');
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^created lab-a$/m);
      assert.match(r.stdout, /1 template file in force from .*; 0 not loaded/);
      assert.equal((await names())['lab-a'], 'file');
      const actor = t.services.db.prepare("SELECT actor FROM audit_log WHERE action = 'template.create' AND details LIKE '%lab-a%'").pluck().get();
      assert.equal(actor, `cli:${userInfo().username}`);

      // SIGHUP: a second file and a broken one; the server loads the first and logs the second.
      writeFileSync(path.join(folder, 'lab-b.yaml'), LAB('lab-b'));
      writeFileSync(path.join(folder, 'lab-c.yaml'), 'name: lab-c\nvendor: x\ncommands: show run\n');
      served.child.kill('SIGHUP');
      const deadline = Date.now() + 10_000;
      while (!(await names())['lab-b'] && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
      assert.equal((await names())['lab-b'], 'file');
      assert.equal((await names())['lab-c'], undefined);
      const log = served.output().stdout;
      assert.match(log, /"trigger":"SIGHUP"/);
      assert.match(log, /"file":"[^"]*lab-c\.yaml","errors":\[\{"field":"commands"/);

      // The CLI prints the same problem and exits 1; the loaded templates stay.
      const r2 = await cli('reload');
      assert.equal(r2.status, 1);
      assert.match(r2.stderr, /lab-c\.yaml: commands: must be a list/);
      assert.deepEqual(
        Object.keys(await names())
          .filter((n) => n.startsWith('lab-'))
          .sort(),
        ['lab-a', 'lab-b'],
      );

      // Files removed: lab-b goes; lab-a stays while a device uses it (said on stdout, not a failure).
      const labA = t.services.db.prepare("SELECT id FROM templates WHERE name = 'lab-a'").pluck().get() as number;
      const cred = seedCredential(t.services.db, t.services.secrets, { name: 'reload-cred', username: 'u', password: 'p' });
      seedDevice(t.services.db, { name: 'uses-lab-a', port: 22, credential_id: cred, template_id: labA });
      for (const f of ['lab-a.yaml', 'lab-b.yaml', 'lab-c.yaml']) rmSync(path.join(folder, f));
      const r3 = await cli('reload');
      assert.equal(r3.status, 0, r3.stderr);
      assert.match(r3.stdout, /^removed lab-b$/m);
      assert.match(r3.stdout, /^kept lab-a: its file .*lab-a\.yaml is gone, but 1 device use it$/m);
      assert.deepEqual(
        Object.keys(await names()).filter((n) => n.startsWith('lab-')),
        ['lab-a'],
      );
    } finally {
      assert.equal(await served.stop(), 0);
    }
  });

  describe('try', () => {
    let sim: RunningSimulator;
    let device = 0;
    before(async () => {
      sim = await startSimulator({ devices: [{ name: 'r1', transcript: frr, username: 'netops', password: 'netops123' }] });
      const cred = seedCredential(t.services.db, t.services.secrets, { name: 'lab', username: 'netops', password: 'netops123' });
      device = seedDevice(t.services.db, { name: 'r1-lab', port: sim.port, credential_id: cred, template_id: seedBuiltinTemplate(t.services.db, 'frr') });
    });
    after(() => sim.close());

    test('prints the configuration as it would be stored, and stores nothing', async () => {
      const backups = () => t.services.db.prepare('SELECT count(*) FROM backups').pluck().get() as number;
      const before = backups();
      const r = await cli('try', 'frr', '--device', String(device));
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^hostname r1-lab$/m);
      assert.doesNotMatch(r.stdout, /^Building configuration/m);
      assert.match(r.stderr, /template frr on r1-lab: ok in \d+ ms; nothing stored/);
      assert.equal(backups(), before);
      const tried = t.services.db.prepare("SELECT count(*) FROM audit_log WHERE action = 'template.try'").pluck().get() as number;
      assert.ok(tried >= 1);
    });

    test('a device that does not exist: exit 1, nothing tried', async () => {
      const r = await cli('try', 'frr', '--device', '99999');
      assert.equal(r.status, 1);
      assert.match(r.stderr, /device 99999/);
    });
  });
});
