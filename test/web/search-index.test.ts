// The configuration search over the line index (issue #27, schema 0029): for every kind of query it answers exactly what
// reading every file answers (case, regex, anchors, special characters, redacted secrets), stale devices included, and
// it counts every device with hits while reading only the files of the page it shows.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { renameSync } from 'node:fs';
import { importBackup } from '../../src/features/backups/import.service';
import { planIndexedSearch, refreshSearchIndex, searchIndexBacklog, startSearchIndexer, upkeepPause } from '../../src/features/configs/search-index.service';
import { regexLiterals, requiredTerms } from '../../src/features/configs/search-terms';
import { MAX_INDEXED_LINES } from '../../src/features/configs/workers/index-lines';
import { buildMatcher, searchConfigs, type SearchOptions } from '../../src/features/configs/search.service';
import { deleteDevice } from '../../src/features/devices/devices.service';
import type { AppServices } from '../../src/http/context';
import { msSinceEngineWrite, withEngineSync } from '../../src/db/open';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { SCOPE_ALL, type Scope } from '../../src/identity/principal';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';

const HOUR = 3_600_000;

/** Per device: its configuration lines (the newest version); a few devices get an older version first. */
function configOf(i: number): string {
  const lines = [
    `hostname sw-${String(i).padStart(2, '0')}`,
    i % 2 ? 'ntp server 192.0.2.1' : 'NTP Server 192.0.2.9',
    `interface GigabitEthernet0/${i % 4}`,
    i % 3 === 0 ? ' description uplink to "core" AND *backbone*' : ' description access port',
    i % 5 === 0 ? 'ip route 10.0.0.0/8 192.0.2.254' : 'ip route 10.0.0.0 255.0.0.0 192.0.2.253',
    i === 4 ? 'banner motd Gerät im Keller, \u212Aelvin-Sensor' : 'banner motd authorised access only',
    i === 6 ? 'alias ſhow ip' : '!',
    `snmp-server community Secret-Community-${i} RO`,
    '',
    'end',
  ];
  return lines.join('\n') + '\n';
}

describe('search over the line index', () => {
  let t: TestAppliance;
  let indexed: AppServices;
  let scanned: AppServices;
  let groupA: number;
  let cred: number;
  const ids: number[] = [];
  const drain = async () => {
    while ((await refreshSearchIndex(t.services)) > 0);
  };

  before(async () => {
    t = await startTestAppliance();
    const { db, secrets, snapshots } = t.services;
    indexed = t.services;
    scanned = { ...t.services, config: { ...t.services.config, performance: { ...t.services.config.performance, search_index: false } } };
    cred = seedCredential(db, secrets, { name: 'c', username: 'u', password: 'p' });
    const tpl = seedBuiltinTemplate(db, 'cisco-ios');
    groupA = seedGroup(db, 'A');
    const groupB = seedGroup(db, 'B');
    // Out of name order; device 9 never backed up; devices 1 and 2 had an older version holding a line gone since.
    for (const i of [7, 3, 11, 0, 12, 5, 9, 1, 10, 4, 8, 2, 6]) {
      const id = seedDevice(db, { name: `Sw-${String(i).padStart(2, '0')}`, group_id: i % 2 ? groupA : groupB, credential_id: cred, template_id: tpl });
      ids[i] = id;
      if (i === 9) continue;
      const redact = { redact_key: secrets.redactionKey };
      if (i === 1 || i === 2) importBackup(db, SYSTEM_ACTOR, snapshots, id, `hostname old-${i}\nlogging host 203.0.113.7\n`, Date.now() - 2 * HOUR, redact);
      importBackup(db, SYSTEM_ACTOR, snapshots, id, configOf(i), Date.now() - HOUR, redact);
    }
    await drain();
  });
  after(() => t.close());

  const summary = (r: Awaited<ReturnType<typeof searchConfigs>>) => ({
    names: r.hits.map((h) => h.deviceName),
    counts: r.hits.map((h) => h.matchCount),
    html: r.hits.map((h) => h.blocksHtml),
    lines: r.hits.map((h) => h.lines ?? null),
    backups: r.hits.map((h) => h.backupId),
    total: r.total,
    searched: r.devicesSearched,
    truncated: r.truncated,
    partial: r.partial,
  });

  const QUERIES: [string, 'text' | 'regex', boolean][] = [
    ['ntp server', 'text', false],
    ['ntp server', 'text', true],
    ['NTP Server', 'text', true],
    ['GigabitEthernet0/1', 'text', false],
    ['"core" AND *backbone*', 'text', false],
    ['10.0.0.0/8', 'text', false],
    ['gerät', 'text', false],
    ['GERÄT IM', 'text', false],
    ['kelvin', 'text', false],
    ['logging host', 'text', false],
    ['old-1', 'text', false],
    ['sw', 'text', false],
    ['Secret-Community', 'text', false],
    ['^hostname sw-0[1-3]$', 'regex', false],
    ['^HOSTNAME SW-1\\d$', 'regex', true],
    ['(?i)HOSTNAME SW-1\\d$', 'regex', true],
    ['ip route 10\\.0\\.0\\.0/8', 'regex', false],
    ['description .*"core"', 'regex', false],
    ['ntp|uplink', 'regex', false],
    ['^end$', 'regex', false],
    ['^$', 'regex', false],
    ['Ethernet0/[23]+', 'regex', false],
    ['\\bſhow\\b', 'regex', false],
    ['(?i)show ip', 'regex', false],
    ['Kelvin-Sensor', 'regex', false],
    ['\\x{212A}elvin', 'regex', false],
  ];

  async function assertSame(q: string, mode: 'text' | 'regex', cs: boolean, opts: SearchOptions = {}, scope: Scope = SCOPE_ALL) {
    const m = buildMatcher(q, mode, cs);
    const viaIndex = summary(await searchConfigs(indexed, scope, m, 8_000, opts));
    const viaFiles = summary(await searchConfigs(scanned, scope, m, 8_000, opts));
    assert.deepEqual(viaIndex, viaFiles, `${mode} ${JSON.stringify(q)} case ${cs} ${JSON.stringify(opts)}`);
    return viaIndex;
  }

  test('every kind of query finds through the index exactly what reading every file finds', async () => {
    for (const [q, mode, cs] of QUERIES) await assertSame(q, mode, cs);
    assert.equal((await assertSame('ntp server', 'text', false)).total, 12, 'the 12 devices with a backup');
    assert.equal((await assertSame('NTP Server', 'text', true)).total, 7);
    assert.equal((await assertSame('logging host', 'text', false)).total, 0, 'a line only older versions held');
    assert.equal((await assertSame('kelvin', 'text', false)).total, 1, 'the Kelvin sign lower-cases to k');
  });

  test('the index answers the queries with a literal piece (it is not the file scan answering both)', async () => {
    for (const [q, mode, cs] of QUERIES) {
      const plan = await planIndexedSearch(indexed, SCOPE_ALL, buildMatcher(q, mode, cs), { from: 0, to: 5 }, () => Promise.resolve(new Set()));
      const literal = requiredTerms(buildMatcher(q, mode, cs)) !== null;
      assert.equal(plan !== null, literal, `${mode} ${JSON.stringify(q)}`);
    }
  });

  test('a redacted secret matches nowhere; its line is found by what is left of it', async () => {
    for (const cs of [false, true]) assert.equal((await assertSame('Secret-Community-3', 'text', cs)).total, 0);
    const r = await searchConfigs(indexed, SCOPE_ALL, buildMatcher('snmp-server community', 'text', false), 8_000, { export: true });
    assert.equal(r.total, 12);
    for (const h of r.hits) for (const l of h.lines ?? []) assert.doesNotMatch(l.text, /Secret-Community/);
  });

  test('pages, filters and scopes give the same hits and totals', async () => {
    await assertSame('ntp server', 'text', false, { window: { from: 2, to: 5 } });
    await assertSame('ntp server', 'text', false, { window: { from: 10, to: 20 } });
    await assertSame('^hostname', 'regex', false, { window: { from: 3, to: 4 }, export: true });
    await assertSame('ntp server', 'text', false, { groupId: groupA });
    await assertSame('ntp server', 'text', false, {}, { all: false, groupIds: new Set([groupA]) });
  });

  test('a device whose newest version changed is exact before the index catches up, and after', async () => {
    const { db, snapshots, secrets } = t.services;
    importBackup(db, SYSTEM_ACTOR, snapshots, ids[3], 'hostname sw-03\nntp server 198.51.100.1\nlogging host 203.0.113.7\n', Date.now(), {
      redact_key: secrets.redactionKey,
    });
    deleteDevice(db, SYSTEM_ACTOR, ids[5]);
    assert.equal(searchIndexBacklog(db), 2, 'the changed device and the deleted one are stale');
    for (const [q, mode, cs] of QUERIES) await assertSame(q, mode, cs);
    for (const window of [
      { from: 0, to: 2 },
      { from: 1, to: 4 },
      { from: 2, to: 3 },
    ])
      await assertSame('ntp server', 'text', false, { window });
    assert.equal((await assertSame('logging host', 'text', false)).total, 1);
    await drain();
    assert.equal(searchIndexBacklog(db), 0);
    for (const [q, mode, cs] of QUERIES) await assertSame(q, mode, cs);
    assert.equal((await assertSame('logging host', 'text', false)).total, 1);
    assert.equal((await assertSame('ntp server', 'text', false)).total, 11);
  });

  test('the total counts every device with hits while only the shown page is read', async () => {
    // Devices no search has read yet; then the files of all but the first two by name go: a search that read every
    // file would miss those devices (the workers cache only what a search read).
    const { db, secrets, snapshots } = t.services;
    const tpl = seedBuiltinTemplate(db, 'frr');
    const fresh: number[] = [];
    for (let i = 0; i < 6; i++) {
      const id = seedDevice(db, { name: `Fresh-${i}`, group_id: groupA, credential_id: cred, template_id: tpl });
      importBackup(db, SYSTEM_ACTOR, snapshots, id, `hostname fresh-${i}\nlldp run fresh-marker-${i}\n`, Date.now(), { redact_key: secrets.redactionKey });
      fresh.push(id);
    }
    await drain();
    const latest = (id: number) =>
      db.prepare('SELECT id FROM backups WHERE device_id = ? AND success = 1 ORDER BY started_at DESC LIMIT 1').pluck().get(id) as string;
    const away = fresh.slice(2).map((id) => snapshotPath(latest(id)));
    for (const f of away) renameSync(f, `${f}.away`);
    try {
      const page = await searchConfigs(indexed, SCOPE_ALL, buildMatcher('fresh-marker', 'text', false), 8_000, { window: { from: 0, to: 2 } });
      assert.equal(page.total, 6);
      assert.deepEqual(
        page.hits.map((h) => h.deviceName),
        ['Fresh-0', 'Fresh-1'],
      );
    } finally {
      for (const f of away) renameSync(`${f}.away`, f);
    }
  });

  test('a version too big to index (more lines than MAX_INDEXED_LINES) is searched from its file, and has no postings', async () => {
    // Its lines would be one long write transaction: a backup recorded meanwhile would wait past its busy timeout.
    const { db, secrets, snapshots } = t.services;
    const tpl = seedBuiltinTemplate(db, 'frr');
    const id = seedDevice(db, { name: 'Big-fw', group_id: groupA, credential_id: cred, template_id: tpl });
    const lines = Array.from({ length: MAX_INDEXED_LINES + 50 }, (_, i) => `access-list big-acl-${i} permit ip any host 192.0.2.${i % 250}`);
    importBackup(db, SYSTEM_ACTOR, snapshots, id, `hostname big-fw\n${lines.join('\n')}\n`, Date.now(), { redact_key: secrets.redactionKey });
    await drain();
    assert.equal(searchIndexBacklog(db), 0);
    assert.equal(db.prepare('SELECT scan FROM search_docs WHERE device_id = ?').pluck().get(id), 1, 'listed as read from its file');
    assert.equal(db.prepare('SELECT count(*) FROM search_postings WHERE device_id = ?').pluck().get(id), 0);
    const found = await assertSame('big-acl-20007 permit', 'text', false);
    assert.equal(found.total, 1);
    await assertSame('^access-list big-acl-1999[0-9] ', 'regex', false);
    assert.equal((await assertSame('ntp server', 'text', false)).total, 11, 'the other devices still come from the index');
    deleteDevice(db, SYSTEM_ACTOR, id);
    await drain();
  });

  test("a search's counts read the partial indexes, not the documents' rows or every device (query plans)", () => {
    // At 100,000 devices a scan of search_docs (each row holds its line ids) cost 74-139 ms a search, one of devices 57 ms.
    const { db } = t.services;
    const plan = (sql: string) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join(' | ');
    const versions = plan(
      'SELECT count(*) FROM search_docs s WHERE s.hash IS NOT NULL AND s.scan = 0 AND s.device_id NOT IN (SELECT device_id FROM search_stale)',
    );
    assert.match(versions, /USING (COVERING )?INDEX search_docs_versions/);
    const files = plan(
      'SELECT d.id FROM devices d WHERE d.id IN (SELECT device_id FROM search_stale UNION ALL SELECT device_id FROM search_docs WHERE scan = 1)',
    );
    assert.match(files, /SEARCH d USING INTEGER PRIMARY KEY/);
    assert.match(files, /INDEX search_docs_scan/);
  });

  test("serve's upkeep brings a changed device up to date in the background, and stops", async () => {
    const { db, snapshots, secrets } = t.services;
    importBackup(db, SYSTEM_ACTOR, snapshots, ids[7], 'hostname sw-07\nntp server 198.51.100.7\n', Date.now(), { redact_key: secrets.redactionKey });
    assert.equal(searchIndexBacklog(db), 1);
    const upkeep = startSearchIndexer(t.services, null);
    try {
      // Bounded wait for the background step (a pool worker), checked every 20 ms.
      for (let i = 0; i < 500 && searchIndexBacklog(db) > 0; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(searchIndexBacklog(db), 0);
    } finally {
      await upkeep.stop();
    }
    await assertSame('198.51.100.7', 'text', false);
  });

  function snapshotPath(backupId: string): string {
    const hash = t.services.db.prepare('SELECT config_snapshot_hash FROM backups WHERE id = ?').pluck().get(backupId) as string;
    const file = t.services.snapshots.locate(hash);
    assert.ok(file, `snapshot ${hash} on disk`);
    return file;
  }
});

describe('the upkeep while backups are being recorded', () => {
  test('a full step rests three times its length (at most 2 s) while engine records are written, else goes on at once', () => {
    assert.equal(upkeepPause(16, 80, 200), 240, 'a backup recorded 200 ms ago: rest 3 x 80 ms');
    assert.equal(upkeepPause(16, 5_000, 10), 2_000, 'bounded');
    assert.equal(upkeepPause(16, 80, 5_000), 0, 'no record for 5 s: the backlog is drained at full pace');
    assert.equal(upkeepPause(16, 80, Infinity), 0);
    assert.equal(upkeepPause(3, 80, 10), 2_000, 'a partial step means the backlog is drained: the idle look');
    assert.equal(upkeepPause(null, 80, 10), 60_000, 'a failed step: a minute');
  });

  test('an engine record marks its handle as recording', async () => {
    const t = await startTestAppliance();
    try {
      const { db } = t.services;
      withEngineSync(db, () => db.prepare('SELECT 1').get());
      assert.ok(msSinceEngineWrite(db) < 1_000);
      assert.equal(db.pragma('synchronous', { simple: true }), 2, 'FULL again after the engine record');
    } finally {
      await t.close();
    }
  });
});

describe('literal pieces of a query', () => {
  test('text: its ASCII runs of 3 or more, lower-cased', () => {
    assert.deepEqual(requiredTerms(buildMatcher('NTP Server', 'text', true)), ['ntp server']);
    assert.deepEqual(requiredTerms(buildMatcher('Gerät im', 'text', false)), ['ger', 't im']);
    assert.equal(requiredTerms(buildMatcher('ab', 'text', false)), null);
  });

  test('regex: what every match must contain, or nothing', () => {
    assert.deepEqual(regexLiterals('^hostname .*-c7-'), ['ho', 'tname ', '-c7-']);
    assert.deepEqual(regexLiterals('ip route 10\\.0\\.0\\.0/8'), ['ip route 10.0.0.0/8']);
    assert.deepEqual(regexLiterals('abc?def'), ['ab', 'def']);
    assert.deepEqual(regexLiterals('abc+def'), ['abc', 'def']);
    assert.deepEqual(regexLiterals('abc{2,3}def'), ['abc', 'def']);
    assert.deepEqual(regexLiterals('abc{0,3}def'), ['ab', 'def']);
    assert.deepEqual(regexLiterals('(foo)bar[xyz]baz'), ['bar', 'baz']);
    assert.deepEqual(regexLiterals('a[]b]cde'), ['a', 'cde']);
    assert.equal(regexLiterals('foo|bar'), null);
    assert.equal(regexLiterals('\\x41bcd'), null);
    assert.equal(regexLiterals('\\Qa.b\\E'), null);
  });
});
