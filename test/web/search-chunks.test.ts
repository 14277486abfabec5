// Configuration search by reading the files, in runs of devices (issue #27): whatever the run size, the hits, their order, the page's HTML window and the filters are those of one pass.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { importBackup } from '../../src/features/backups/import.service';
import { buildMatcher, searchConfigs, type SearchOptions } from '../../src/features/configs/search.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { SCOPE_ALL, type Scope } from '../../src/identity/principal';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';

describe('search in runs of devices', () => {
  let t: TestAppliance;
  let groupA: number;
  before(async () => {
    t = await startTestAppliance();
    const { db, secrets, snapshots } = t.services;
    const cred = seedCredential(db, secrets, { name: 'c', username: 'u', password: 'p' });
    const tpl = seedBuiltinTemplate(db, 'frr');
    groupA = seedGroup(db, 'A');
    const groupB = seedGroup(db, 'B');
    // 13 devices, inserted out of name order; every third has no backup, every other one has the marker twice.
    for (const d of [7, 3, 11, 0, 12, 5, 9, 1, 10, 4, 8, 2, 6]) {
      const id = seedDevice(db, { name: `Sw-${String(d).padStart(2, '0')}`, group_id: d % 2 ? groupA : groupB, credential_id: cred, template_id: tpl });
      if (d % 3 === 2) continue;
      const marker = d % 2 ? 'ntp server 192.0.2.1\nntp server 192.0.2.2\n' : 'ntp server 192.0.2.1\n';
      importBackup(db, SYSTEM_ACTOR, snapshots, id, `hostname sw-${d}\n${d === 12 ? '' : marker}interface lo\n`, Date.now() - 60_000);
    }
  });
  after(() => t.close());

  // The file scan itself (the line index off): search-index.test.ts compares the index with it.
  const scanning = () => ({ ...t.services, config: { ...t.services.config, performance: { ...t.services.config.performance, search_index: false } } });
  const run = (opts: SearchOptions, chunk: number, scope: Scope = SCOPE_ALL) =>
    searchConfigs(scanning(), scope, buildMatcher('ntp server', 'text', false), 8_000, opts, chunk);
  const summary = (r: Awaited<ReturnType<typeof run>>) => ({
    names: r.hits.map((h) => h.deviceName),
    counts: r.hits.map((h) => h.matchCount),
    shown: r.hits.map((h) => h.blocksHtml !== ''),
    lines: r.hits.map((h) => h.lines?.length ?? null),
    searched: r.devicesSearched,
    truncated: r.truncated,
    partial: r.partial,
  });

  test('one pass and runs of 1, 2 and 5 devices give the same result, by name', async () => {
    const whole = summary(await run({}, 1_000));
    assert.deepEqual(whole.names, ['Sw-00', 'Sw-01', 'Sw-03', 'Sw-04', 'Sw-06', 'Sw-07', 'Sw-09', 'Sw-10']);
    assert.deepEqual(whole.counts, [1, 2, 2, 1, 1, 2, 2, 1]);
    assert.equal(whole.searched, 9, 'the devices with a backup (Sw-12 has one without a match)');
    for (const chunk of [1, 2, 5]) assert.deepEqual(summary(await run({}, chunk)), whole, `runs of ${chunk}`);
  });

  test('a page window counts hits across runs: hits 3-5 come, with their HTML, and the total counts them all', async () => {
    for (const chunk of [1, 2, 1_000]) {
      const r = await run({ window: { from: 3, to: 5 } }, chunk);
      assert.deepEqual(summary(r).names, ['Sw-04', 'Sw-06'], `runs of ${chunk}`);
      assert.deepEqual(summary(r).shown, [true, true], `runs of ${chunk}`);
      assert.equal(r.total, 8);
    }
  });

  test('export lines, the group filter and a scope work across runs', async () => {
    for (const chunk of [2, 1_000]) {
      const exported = summary(await run({ export: true }, chunk));
      assert.deepEqual(exported.lines, [1, 2, 2, 1, 1, 2, 2, 1]);
      assert.deepEqual(summary(await run({ groupId: groupA }, chunk)).names, ['Sw-01', 'Sw-03', 'Sw-07', 'Sw-09']);
      const scoped = await run({}, chunk, { all: false, groupIds: new Set([groupA]) });
      assert.deepEqual(
        scoped.hits.map((h) => h.deviceName),
        ['Sw-01', 'Sw-03', 'Sw-07', 'Sw-09'],
      );
    }
  });

  test('a search past its deadline is partial, not an error, and stops at the first run', async () => {
    // A budget of -1 ms: the deadline has passed before the first device is read (the worker checks it before each).
    const r = await searchConfigs(scanning(), SCOPE_ALL, buildMatcher('ntp server', 'text', false), -1, {}, 1);
    assert.equal(r.partial, true);
    assert.equal(r.hits.length, 0);
    assert.equal(r.devicesSearched, 0);
  });
});
