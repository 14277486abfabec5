// Device import and export (issue #14): per-row errors by the rules of device creation, all-or-nothing or valid rows, router.db, CSV round trip.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedCredential, seedGroup } from '../helpers/seed';
import { SYSTEM_ACTOR, type Actor } from '../../src/identity/actor';
import type { Permission } from '../../src/identity/permissions';
import { applyDeviceImport, previewDeviceImport, type ImportReport } from '../../src/features/devices/devices-import.service';
import { exportDevicesCsv } from '../../src/features/devices/devices-csv.service';
import { deleteDevice } from '../../src/features/devices/devices.service';
import { IMPORT_LIMITS } from '../../src/features/devices/devices-csv';
import { SCOPE_ALL } from '../../src/identity/principal';
import { ApiError } from '../../src/errors';
import { createTemplate } from '../../src/features/templates/templates.service';
import { templateWithDefaults } from '../../src/templates/files';

let t: TestAppliance;
let core = 0;
let edge = 0;

const db = () => t.services.db;
const count = (sql: string) => db().prepare(`SELECT count(*) FROM ${sql}`).pluck().get() as number;
const errorsOf = (r: ImportReport) => r.rows.filter((x) => x.errors.length).map((x) => [x.row, x.errors.map((e) => e.field).join(',')]);

function actor(permissions: Permission[], groups: number[] | null): Actor {
  return {
    principal: {
      userId: 0,
      username: 'importer',
      roleName: 'importer',
      permissions: new Set(permissions),
      scope: groups === null ? SCOPE_ALL : { all: false, groupIds: new Set(groups) },
      timezone: null,
      apiKeyId: null,
    },
    door: { kind: 'cli', osUser: 'test' },
    requestId: null,
  };
}

const HEADER = 'name,hostname,port,protocol,group,credential,template,enabled,description,schedule';

before(async () => {
  t = await startTestAppliance();
  seedCredential(db(), t.appliance.secrets, { name: 'lab', username: 'u', password: 'p' });
  core = seedGroup(db(), 'core');
  edge = seedGroup(db(), 'edge');
  seedGroup(db(), 'access', core);
  seedGroup(db(), 'access', edge);
});
after(() => t.close());

describe('CSV import', () => {
  const file = [
    HEADER,
    'r1,192.0.2.1,,,core,lab,cisco-ios,,first,',
    'r2,192.0.2.2,2222,ssh,core/access,lab,arista-eos,no,,@daily',
    'r3,300.1.1.1,,,core,lab,cisco-ios,,,', // bad hostname
    'r4,192.0.2.4,,,nowhere,lab,cisco-ios,,,', // unknown group
    'R1,192.0.2.5,,,,lab,cisco-ios,,,', // same name as row 2, case folded
    'r6,192.0.2.6,70000,,,lab,no-such-template,maybe,,0 0 31 2 *', // port, template, enabled, schedule
    'r7,192.0.2.7,,,access,lab,cisco-ios,,,', // two groups are named access
  ].join('\n');

  test('the preview reports every bad row by line and column, and writes nothing', () => {
    const devices = count('devices');
    const audit = count('audit_log');
    const r = previewDeviceImport(db(), SYSTEM_ACTOR, { format: 'csv', text: file });
    assert.equal(r.mode, null);
    assert.deepEqual(errorsOf(r), [
      [4, 'hostname'],
      [5, 'group'],
      [6, 'name'],
      [7, 'port,template,enabled,schedule'],
      [8, 'group'],
    ]);
    assert.match(r.rows[3].errors[0].message, /group "nowhere" does not exist/);
    assert.match(r.rows[4].errors[0].message, /same name as row 2/);
    assert.match(r.rows[6].errors[0].message, /2 groups are named "access" \(core\/access, edge\/access\)/);
    assert.equal(r.valid, 2);
    assert.equal(r.created, 0);
    assert.equal(count('devices'), devices);
    assert.equal(count('audit_log'), audit);
  });

  test('mode all with a bad row writes nothing; mode valid creates the good rows, each audited', () => {
    const before = count('devices');
    const all = applyDeviceImport(db(), SYSTEM_ACTOR, { format: 'csv', text: file }, 'all');
    assert.equal(all.created, 0);
    assert.ok(all.rows.every((x) => x.deviceId === null));
    assert.equal(count('devices'), before);

    const valid = applyDeviceImport(db(), SYSTEM_ACTOR, { format: 'csv', text: file }, 'valid');
    assert.equal(valid.created, 2);
    assert.equal(count('devices'), before + 2);
    const r2 = db().prepare("SELECT port, protocol, enabled, schedule, group_id FROM devices WHERE name = 'r2'").get();
    assert.deepEqual({ ...(r2 as object) }, { port: 2222, protocol: 'ssh', enabled: 0, schedule: '@daily', group_id: 3 });
    assert.equal(count("audit_log WHERE action = 'device.create' AND target IN ('device ' || (SELECT id FROM devices WHERE name = 'r1'))"), 1);
    const summary = db().prepare("SELECT details FROM audit_log WHERE action = 'device.import' ORDER BY id DESC").pluck().get() as string;
    assert.deepEqual(JSON.parse(summary), { format: 'csv', mode: 'valid', rows: 7, created: 2, updated: 0, refused: 5 });

    // The same file again: its devices exist now, which import refuses (it never changes a device).
    const again = previewDeviceImport(db(), SYSTEM_ACTOR, { format: 'csv', text: file });
    assert.match(again.rows[0].errors[0].message, /already exists.*--update, changes it/);
  });

  test('mode all with only good rows creates them all in one go', () => {
    const text = [HEADER, 'a1,192.0.2.11,,,edge,lab,cisco-ios,,,', 'a2,192.0.2.12,,telnet,edge,lab,cisco-ios,,,'].join('\r\n');
    const r = applyDeviceImport(db(), SYSTEM_ACTOR, { format: 'csv', text }, 'all');
    assert.equal(r.created, 2);
    assert.equal(db().prepare("SELECT port FROM devices WHERE name = 'a2'").pluck().get(), 23);
  });

  test('the caller needs devices.create; a caller not entitled to the credential creates held devices', () => {
    const text = [HEADER, `h1,192.0.2.21,,,core,lab,cisco-ios,,,`].join('\n');
    assert.throws(
      () => previewDeviceImport(db(), actor(['devices.view'], null), { format: 'csv', text }),
      (e: unknown) => e instanceof ApiError && e.code === 'PERMISSION_DENIED',
    );
    const r = applyDeviceImport(db(), actor(['devices.create', 'devices.view'], [core]), { format: 'csv', text }, 'all');
    assert.equal(r.created, 1);
    assert.equal(r.rows[0].held, true);
    assert.equal(count(`device_credential_holds WHERE device_id = ${r.rows[0].deviceId}`), 1);
  });

  test('file-level problems are one error and nothing is read further', () => {
    const bad = (text: string, re: RegExp) =>
      assert.throws(
        () => previewDeviceImport(db(), SYSTEM_ACTOR, { format: 'csv', text }),
        (e: unknown) => e instanceof ApiError && re.test(e.message),
      );
    bad('', /empty/);
    bad('name,hostname,colour\nx,192.0.2.1,red', /unknown column "colour"/);
    bad('name,template\nx,cisco-ios', /lacks the column hostname/);
    bad(`name,hostname\n${'x,192.0.2.1\n'.repeat(IMPORT_LIMITS.rows + 1)}`, /at most 5000/);
    bad('name,hostname\n"x,192.0.2.1', /not a readable CSV/);
  });

  test('semicolons, a BOM, a default credential and names of any case', () => {
    const text = '\uFEFFName;Hostname;Template;Group\ns1;192.0.2.31;CISCO-IOS;EDGE\n';
    const r = previewDeviceImport(db(), SYSTEM_ACTOR, { format: 'csv', text, credential: 'lab' });
    assert.deepEqual(errorsOf(r), []);
    const none = previewDeviceImport(db(), SYSTEM_ACTOR, { format: 'csv', text });
    assert.deepEqual(errorsOf(none), [[2, 'credential']]);
  });
});

describe('updating existing devices (update: true)', () => {
  test('a row naming a device sets its non-empty cells; unchanged rows write nothing; the permission and scope of update apply', () => {
    const text = [
      'name,hostname,group,description,template',
      'r1,,,moved to the new rack,', // only the description changes
      'a1,192.0.2.11,edge,,cisco-ios', // as it is
      'n1,192.0.2.51,edge,new one,cisco-ios', // a new device: the import's credential
    ].join('\n');
    const mark = count('audit_log');
    const refused = previewDeviceImport(db(), SYSTEM_ACTOR, { format: 'csv', text, credential: 'lab' });
    assert.deepEqual(errorsOf(refused), [
      [2, 'hostname,template'],
      [3, 'name'],
    ]);
    const r = applyDeviceImport(db(), SYSTEM_ACTOR, { format: 'csv', text, credential: 'lab', update: true }, 'all');
    assert.deepEqual(errorsOf(r), []);
    assert.deepEqual(
      r.rows.map((x) => x.action),
      ['update', 'unchanged', 'create'],
    );
    assert.equal(r.updated, 1);
    assert.equal(r.created, 1);
    assert.deepEqual(
      { ...(db().prepare("SELECT hostname, description FROM devices WHERE name = 'r1'").get() as object) },
      {
        hostname: '192.0.2.1',
        description: 'moved to the new rack',
      },
    );
    const actions = db().prepare('SELECT action FROM audit_log WHERE id > ? ORDER BY id').pluck().all(mark);
    assert.deepEqual(actions, ['device.update', 'device.create', 'device.import']);

    assert.throws(
      () => previewDeviceImport(db(), actor(['devices.create', 'devices.view'], null), { format: 'csv', text, update: true }),
      (e: unknown) => e instanceof ApiError && e.code === 'PERMISSION_DENIED',
    );
    const scoped = previewDeviceImport(db(), actor(['devices.create', 'devices.update', 'devices.view', 'credentials.view'], [edge]), {
      format: 'csv',
      text: 'name,description\nr1,not yours\na1,yours\n',
      update: true,
    });
    assert.deepEqual(errorsOf(scoped), [[2, 'row']]);
    assert.match(scoped.rows[0].errors[0].message, /outside your device-group scope/);
    assert.equal(scoped.rows[1].action, 'update');
  });
});

describe('Oxidized router.db import', () => {
  test('models map to templates; the file’s usernames and passwords are never read; unknown models are row errors', () => {
    const text = ['# core routers', 'ox1:ios:core:admin:hunter2', 'ox2:JunOS', '', 'ox3:enterprisesonic:edge', 'ox4:cumulusx:edge', 'ox5:eos:nowhere'].join(
      '\n',
    );
    const r = previewDeviceImport(db(), SYSTEM_ACTOR, { format: 'router.db', text, credential: 'lab' });
    assert.deepEqual(errorsOf(r), [
      [5, 'model'],
      [6, 'model'],
      [7, 'group'],
    ]);
    // Dell Enterprise SONiC's sonic-cli has no template here (the sonic template reads community SONiC's config_db).
    assert.match(r.rows[2].errors[0].message, /enterprisesonic" is not one this import knows \(.*\bios\b.*\) nor a template name/);
    assert.match(r.rows[3].errors[0].message, /cumulusx" is not one this import knows/);
    const applied = applyDeviceImport(db(), SYSTEM_ACTOR, { format: 'router.db', text, credential: 'lab' }, 'valid');
    assert.equal(applied.created, 2);
    const ox1 = db()
      .prepare("SELECT d.hostname, t.name AS template, d.group_id FROM devices d JOIN templates t ON t.id = d.template_id WHERE d.name = 'ox1'")
      .get();
    assert.deepEqual({ ...(ox1 as object) }, { hostname: 'ox1', template: 'cisco-ios', group_id: core });
    assert.equal(count("audit_log WHERE changes LIKE '%hunter2%' OR details LIKE '%hunter2%'"), 0);
  });

  test("models map by the templates' aliases: a custom template may name its own", () => {
    const line = 'ox-acme:acmeos:edge\n';
    const before = previewDeviceImport(db(), SYSTEM_ACTOR, { format: 'router.db', text: line, credential: 'lab' });
    assert.match(before.rows[0].errors[0]?.message ?? '', /acmeos" is not one this import knows/);
    const acme = createTemplate(
      db(),
      SYSTEM_ACTOR,
      templateWithDefaults({ name: 'acme-os', vendor: 'ACME', commands: ['show config'], aliases: { oxidized: ['acmeos'], rancid: ['ios'] } }),
    );
    const r = applyDeviceImport(db(), SYSTEM_ACTOR, { format: 'router.db', text: `${line}ox-ios:ios:edge\n`, credential: 'lab' }, 'all');
    assert.equal(r.created, 2);
    const templateOf = (name: string) => db().prepare('SELECT template_id FROM devices WHERE name = ?').pluck().get(name);
    assert.equal(templateOf('ox-acme'), acme.id);
    // A name a built-in already claims stays the built-in's.
    assert.equal(templateOf('ox-ios'), db().prepare("SELECT id FROM templates WHERE name = 'cisco-ios'").pluck().get());
    for (const d of r.rows) if (d.deviceId !== null) deleteDevice(db(), SYSTEM_ACTOR, d.deviceId);
  });

  test('a layout with the address, and a credential required for the whole file', () => {
    const text = 'rt9.example.net:192.0.2.99:routeros:oxidized:secret:enable\n';
    const r = applyDeviceImport(db(), SYSTEM_ACTOR, { format: 'router.db', text, credential: 'lab', fields: 'name:ip:model:username:password:enable' }, 'all');
    assert.equal(r.created, 1);
    assert.equal(db().prepare("SELECT hostname FROM devices WHERE name = 'rt9.example.net'").pluck().get(), '192.0.2.99');
    assert.throws(
      () => previewDeviceImport(db(), SYSTEM_ACTOR, { format: 'router.db', text }),
      (e: unknown) => e instanceof ApiError && /needs one credential/.test(e.message),
    );
  });
});

describe('CSV export', () => {
  test('round trip: the export, imported into an empty inventory, exports the same text', () => {
    applyDeviceImport(
      db(),
      SYSTEM_ACTOR,
      { format: 'csv', text: [HEADER, `"x, ""quoted""",192.0.2.41,,,edge/access,lab,cisco-ios,false,"=1+1 and\nmore",30 4 * * 1-5`].join('\n') },
      'all',
    );
    const first = exportDevicesCsv(db(), SCOPE_ALL, {}).csv;
    assert.match(first, /^name,hostname,port,protocol,group,credential,template,enabled,description,schedule\n/);
    assert.match(first, /"'=1\+1 and\nmore"/);
    assert.match(first, /,edge\/access,/);
    for (const id of db().prepare('SELECT id FROM devices').pluck().all() as number[]) deleteDevice(db(), SYSTEM_ACTOR, id);
    const r = applyDeviceImport(db(), SYSTEM_ACTOR, { format: 'csv', text: first }, 'all');
    assert.deepEqual(errorsOf(r), []);
    assert.equal(exportDevicesCsv(db(), SCOPE_ALL, {}).csv, first);
    assert.equal(db().prepare(`SELECT description FROM devices WHERE name = 'x, "quoted"'`).pluck().get(), '=1+1 and\nmore');
  });

  test('the list’s filters and the caller’s scope apply', () => {
    const lines = (csv: string) =>
      csv
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.split(',')[0]);
    assert.deepEqual(lines(exportDevicesCsv(db(), SCOPE_ALL, { group_id: core }).csv), ['h1', 'ox1', 'r1', 'r2']);
    // A principal's scope holds its groups' subgroups already; core/access is left out here.
    assert.deepEqual(lines(exportDevicesCsv(db(), { all: false, groupIds: new Set([core]) }, { q: 'r' }).csv), ['r1']);
    assert.deepEqual(lines(exportDevicesCsv(db(), { all: false, groupIds: new Set([999]) }, {}).csv), []);
  });
});
