// Audit viewing (web page filters, `confvault audit list`), manual backup runs audited through every door, audit retention.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { recordAudit } from '../../src/features/audit/audit.service';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { JobExecutor } from '../../src/engine/jobs';
import { BackupRunner } from '../../src/engine/runner';
import { SYSTEM_ACTOR, cliActor, type Actor } from '../../src/identity/actor';
import { SCOPE_ALL } from '../../src/identity/principal';
import { formatTimestamp } from '../../src/lib/time';
import { runCli, runCliAsync, startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { WebClient } from './web-client';

let t: TestAppliance;
let dataArgs: string[];
let scratch: string;
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 10, 12, 0, 0); // 2026-01-10 12:00:00 UTC = 21:00 in Tokyo
const ids = { inScope: 0, outScope: 0 };
let deadPort = 0;

function apiActor(username: string, keyId: number, requestId: string): Actor {
  const principal = { ...SYSTEM_ACTOR.principal, userId: 0, username, scope: SCOPE_ALL, apiKeyId: keyId };
  return { principal, door: { kind: 'api', apiKeyId: keyId }, requestId };
}

const rows = (sql: string, ...args: unknown[]) => t.services.db.prepare(sql).all(...args) as Record<string, unknown>[];

/** A loopback port nobody listens on: a backup against it fails at once. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

before(async () => {
  t = await startTestAppliance();
  dataArgs = ['--data-dir', t.services.dataDir];
  scratch = tempDir('confvault-audit-');
  const db = t.services.db;
  recordAudit(
    db,
    apiActor('alice', 3, 'req-alice-1'),
    { action: 'group.update', target: 'group 7', changes: { name: { before: 'core', after: 'backbone' } } },
    T0,
  );
  recordAudit(db, apiActor('bob', 4, 'req-bob-1'), { action: 'credential.update', target: 'credential 2', changes: { password: 'changed' } }, T0 + DAY);
  recordAudit(db, cliActor('root'), { action: 'device.delete', target: 'device 12', details: { name: 'old-sw' } }, T0 + 2 * DAY);
  deadPort = await closedPort();
  // Manual runs fail at once against the closed port instead of retrying for a minute.
  const config = t.services.config;
  t.services.jobs = new JobExecutor(
    t.services.db,
    new BackupRunner({ ...t.services, config: { ...config, backup: { ...config.backup, retries: 0, device_timeout: 5 } } }),
  );
  const A = seedGroup(db, 'aud-A');
  const B = seedGroup(db, 'aud-B');
  const cred = seedCredential(db, t.services.secrets, { name: 'aud-c', username: 'u', password: 'p' });
  const tpl = seedBuiltinTemplate(db, 'frr');
  ids.inScope = seedDevice(db, { name: 'aud-in', port: deadPort, credential_id: cred, template_id: tpl, group_id: A });
  ids.outScope = seedDevice(db, { name: 'aud-out', port: deadPort, credential_id: cred, template_id: tpl, group_id: B });
  createRole(db, SYSTEM_ACTOR, { name: 'aud-auditor', permissions: ['audit.view'] });
  await createUser(db, SYSTEM_ACTOR, { username: 'auditor', password: 'auditor-password-1', role: 'aud-auditor', timezone: 'Asia/Tokyo' });
  createRole(db, SYSTEM_ACTOR, { name: 'aud-operator', permissions: ['devices.view', 'backups.run', 'backups.view'] });
  await createUser(db, SYSTEM_ACTOR, { username: 'aud-op', password: 'aud-op-password-1', role: 'aud-operator', groups: [A] });
});
after(async () => {
  // Let the manual backups against the closed port finish before the database closes.
  await new Promise((r) => setTimeout(r, 300));
  await t.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('web Audit page', () => {
  let web: WebClient;
  before(async () => {
    web = new WebClient(t.url);
    assert.equal((await web.login('auditor', 'auditor-password-1')).status, 303);
  });

  const tableOf = (html: string) => /<table class="list" id="audit">([\s\S]*?)<\/table>/.exec(html)?.[1] ?? '';

  test('rows read as people read them: time in the user’s zone, never epoch numbers; changes as before → after; door and request id', async () => {
    const { res, html } = await web.get('/audit?actor=alice');
    assert.equal(res.status, 200);
    const table = tableOf(html);
    assert.match(table, new RegExp(formatTimestamp(T0, 'Asia/Tokyo')));
    assert.match(table, /2026-01-10 21:00:00/);
    assert.doesNotMatch(table, /\b1\d{12}\b/, 'no epoch milliseconds');
    assert.match(table, /name: core → backbone/);
    assert.match(table, /api key 3/);
    assert.match(table, /req-alice-1/);
    assert.match(html, /Times are in Asia\/Tokyo/);
  });

  test('filters: actor, action prefix, target, time range (in the user’s zone), and they combine', async () => {
    const has = async (q: string) => {
      const table = tableOf((await web.get(`/audit?${q}`)).html);
      // None of these records exists (the rows were written without them): each target is its id, said to be gone.
      return ['group 7', 'credential 2', 'device 12'].filter((x) => table.includes(`<td>${x} (deleted)</td>`));
    };
    assert.deepEqual(await has('actor=BOB'), ['credential 2']);
    assert.deepEqual(await has('action=device.'), ['device 12']);
    assert.deepEqual(await has('target=device%2012'), ['device 12']);
    // 2026-01-11 in Tokyo runs from 2026-01-10 15:00 UTC: the bob row (01-11 12:00 UTC = 21:00 Tokyo) only.
    assert.deepEqual(await has('from=2026-01-11&to=2026-01-11'), ['credential 2']);
    assert.deepEqual(await has('from=2026-01-10%2021:00&to=2026-01-10%2021:00'), ['group 7'], 'a minute includes its own rows');
    assert.deepEqual(await has('from=2026-01-10&actor=cli:root'), ['device 12']);
    assert.deepEqual(await has('actor=alice&action=device.'), []);
    const bad = await web.get('/audit?from=yesterday');
    assert.equal(bad.res.status, 200);
    assert.match(bad.html, /&quot;yesterday&quot; is not a date|"yesterday" is not a date/);
  });

  test('the filters survive paging links, and the page needs audit.view', async () => {
    const { html } = await web.get('/audit?actor=alice&page=1');
    assert.match(html, /name="actor" value="alice"/);
    const op = new WebClient(t.url);
    await op.login('aud-op', 'aud-op-password-1');
    assert.equal((await op.get('/audit')).res.status, 403);
  });
});

describe('manual backup runs are audited through every door', () => {
  let op: WebClient;
  before(async () => {
    op = new WebClient(t.url);
    assert.equal((await op.login('aud-op', 'aud-op-password-1')).status, 303);
  });
  const runRows = (target: string) => rows("SELECT actor, door, details FROM audit_log WHERE action = 'backup.run' AND target = ? ORDER BY id", target);

  test('web "Back up now" and the internal route: one row per request in scope; out of scope 403 and no row', async () => {
    const form = await op.post(`/devices/${ids.inScope}/backup`, {}, { csrf: true });
    assert.equal(form.res.status, 303);
    const internal = await op.fetch(`/api/devices/${ids.inScope}/backups`, { method: 'POST', headers: { 'X-CSRF-Token': await op.csrf() } });
    assert.equal(internal.status, 202);
    const job = ((await internal.json()) as { id: string }).id;
    const r = runRows(`device ${ids.inScope}`);
    assert.equal(r.length, 2);
    assert.deepEqual(
      r.map((x) => [x.actor, x.door]),
      [
        ['aud-op', 'web'],
        ['aud-op', 'web'],
      ],
    );
    assert.equal(JSON.parse(r[1].details as string).job, job);

    assert.equal((await op.post(`/devices/${ids.outScope}/backup`, {}, { csrf: true })).res.status, 403);
    const denied = await op.fetch(`/api/devices/${ids.outScope}/backups`, { method: 'POST', headers: { 'X-CSRF-Token': await op.csrf() } });
    assert.equal(denied.status, 403);
    assert.equal(runRows(`device ${ids.outScope}`).length, 0);
  });

  test('confvault backup run: one row with the OS user and the selection', async () => {
    const conf = path.join(scratch, 'run.conf');
    writeFileSync(conf, '[backup]\nretries = 0\ndevice_timeout = 5\n');
    const r = await runCliAsync(['backup', 'run', '--device', String(ids.outScope), '--config', conf, ...dataArgs]);
    assert.equal(r.status, 1, `the backup itself fails against a closed port: ${r.signal} ${r.stderr}`);
    const row = runRows(`device ${ids.outScope}`)[0];
    assert.equal(row.door, 'cli');
    assert.match(row.actor as string, /^cli:/);
    assert.equal(JSON.parse(row.details as string).devices, 1);
  });
});

test('confvault backup import: one backup.import row naming the device and the backup it made', () => {
  const file = path.join(scratch, 'aud-in.cfg');
  writeFileSync(file, 'hostname aud-in\n');
  const r = runCli(['backup', 'import', '--device', String(ids.inScope), '--file', file, ...dataArgs]);
  assert.equal(r.status, 0, r.stderr);
  const row = rows("SELECT actor, door, details FROM audit_log WHERE action = 'backup.import' AND target = ?", `device ${ids.inScope}`);
  assert.equal(row.length, 1);
  assert.equal(row[0].door, 'cli');
  assert.equal(JSON.parse(row[0].details as string).backup_id, r.stdout.trim());
});

describe('confvault audit list', () => {
  const list = (...args: string[]) => runCli(['audit', 'list', ...args, ...dataArgs]);

  test('one tab-separated line per row, newest first, readable time, changes and door', () => {
    const r = list('--actor', 'alice');
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 1);
    assert.deepEqual(lines[0].split('\t'), [
      '2026-01-10 12:00:00',
      'alice',
      'api key 3',
      'group.update',
      'group 7',
      'name: core → backbone',
      '-',
      'req-alice-1',
    ]);
  });

  test('--since (day, local time, ISO 8601), --action prefix, --json', () => {
    // The rows written here in January; the seeds' own rows (the system actor, today) are not what these lines test.
    const targets = (r: ReturnType<typeof list>) =>
      r.stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t'))
        .filter((cols) => cols[1] !== 'system')
        .map((cols) => cols[4]);
    assert.deepEqual(targets(list('--since', '2026-01-11', '--action', 'credential.')), ['credential 2']);
    assert.deepEqual(targets(list('--since', '2026-01-11 12:00', '--action', 'credential')), ['credential 2']);
    assert.deepEqual(targets(list('--since', '2026-01-11 12:00:01', '--action', 'credential')), []);
    assert.deepEqual(targets(list('--since', '2026-01-12T12:00:00Z', '--actor', 'cli:root', '--action', 'device.')), ['device 12']);
    const json = list('--actor', 'bob', '--json');
    assert.equal(json.status, 0);
    const objs = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(objs.length, 1);
    assert.equal(objs[0].at, '2026-01-11T12:00:00.000Z');
    assert.deepEqual(objs[0].changes, { password: 'changed' });
    assert.equal(objs[0].door, 'api');
    assert.equal(objs[0].request_id, 'req-bob-1');
  });

  test('bad input: a clear line and exit 2', () => {
    for (const args of [['--since', 'last tuesday'], ['--since', '2026-02-30'], ['--actor', ''], ['--limit', '0'], ['--bogus']]) {
      const r = list(...args);
      assert.equal(r.status, 2, args.join(' '));
      assert.match(r.stderr, /^confvault audit: /m, args.join(' '));
      assert.equal(r.stdout, '');
    }
    assert.match(list('--since', 'last tuesday').stderr, /--since: "last tuesday" is not a date/);
    assert.match(runCli(['audit', '--help']).stdout, /--since DATE/);
  });
});

test('retention: db prune deletes audit rows older than keep_days and leaves one summary row', () => {
  const db = t.services.db;
  const now = Date.now();
  recordAudit(db, SYSTEM_ACTOR, { action: 'test.recent', target: 'x' }, now - 5 * DAY);
  const old = rows('SELECT count(*) AS n FROM audit_log WHERE at < ?', now - 30 * DAY)[0].n as number;
  assert.ok(old >= 3, 'the seeded 2026-01 rows are old');
  const conf = path.join(scratch, 'appliance.conf');
  writeFileSync(conf, '[retention]\nkeep_days = 30\n');
  const r = runCli(['db', 'prune', '--config', conf, ...dataArgs]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^audit\\t${old}$`, 'm'));
  assert.equal(rows('SELECT count(*) AS n FROM audit_log WHERE at < ?', now - 30 * DAY)[0].n, 0);
  assert.equal(rows("SELECT count(*) AS n FROM audit_log WHERE action = 'test.recent'")[0].n, 1);
  const summary = rows("SELECT door, details FROM audit_log WHERE action = 'retention.prune'");
  assert.equal(summary.length, 1);
  assert.equal(summary[0].door, 'cli');
  assert.equal(JSON.parse(summary[0].details as string).audit, old);
});
