// Bounded diffs: two unrelated 10,000-line versions answer without freezing /healthz, shown as "too different"; the worker pool's hard deadline.
// Heavy scenario: runs in npm run test:lab (test/run.sh), beside the device lab; CI runs it after npm test.
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { importBackup } from '../../src/features/backups/import.service';
import { diffVersions } from '../../src/features/configs/diff.service';
import { OffThreadBusy, OffThreadTimeout, runOffThread } from '../../src/features/configs/workers/pool';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { WebClient } from './web-client';

async function slowestHealthz(url: string, until: Promise<unknown>): Promise<number> {
  let done = false;
  void until.finally(() => (done = true));
  let worst = 0;
  while (!done) {
    const t0 = performance.now();
    const r = await fetch(`${url}/healthz`);
    await r.arrayBuffer();
    assert.equal(r.status, 200);
    worst = Math.max(worst, performance.now() - t0);
    await new Promise((res) => setTimeout(res, 10));
  }
  return worst;
}

const version = (tag: string, n: number) =>
  Array.from({ length: n }, (_, i) => `interface ge-${tag}-${i} description ${tag}${(i * 7919) % 10007}`).join('\n') + '\n';

describe('diff bounds', () => {
  let t: TestAppliance;
  let admin: WebClient;
  const ids = { dev: 0, a: '', b: '', c: '' };
  before(async () => {
    t = await startTestAppliance();
    const { db, secrets, snapshots } = t.services;
    const cred = seedCredential(db, secrets, { name: 'c', username: 'u', password: 'p' });
    const tpl = seedBuiltinTemplate(db, 'frr');
    ids.dev = seedDevice(db, { name: 'big', port: 22, credential_id: cred, template_id: tpl });
    const now = Date.now();
    ids.a = importBackup(db, SYSTEM_ACTOR, snapshots, ids.dev, version('a', 10_000), now - 3 * 3600_000).id;
    ids.b = importBackup(db, SYSTEM_ACTOR, snapshots, ids.dev, version('b', 10_000), now - 2 * 3600_000).id;
    ids.c = importBackup(db, SYSTEM_ACTOR, snapshots, ids.dev, version('b', 10_000).replace('ge-b-5000 ', 'ge-b-5000 shutdown '), now - 3600_000).id;
    admin = new WebClient(t.url);
    assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
  });
  after(() => t.close());

  test('10,000 vs 10,000 different lines: the unified diff answers and /healthz keeps answering', { timeout: 120_000 }, async () => {
    const diff = admin.get(`/api/devices/${ids.dev}/diff?a=${ids.a}&b=${ids.b}`);
    const worst = await slowestHealthz(t.url, diff);
    const r = await diff;
    assert.equal(r.res.status, 200);
    const body = JSON.parse(r.html) as { identical: boolean; added: number; removed: number; unified: string };
    assert.equal(body.identical, false);
    assert.equal(body.added, 10_000);
    assert.equal(body.removed, 10_000);
    assert.match(body.unified, /^--- .*\n\+\+\+ .*\n@@ -1,10000 \+1,10000 @@\n-interface ge-a-0 /);
    assert.ok(worst < 1_000, `/healthz took up to ${Math.round(worst)} ms during the diff`);
  });

  test('the web page says the versions are too different and shows both', { timeout: 120_000 }, async () => {
    const page = admin.get(`/devices/${ids.dev}/diff?a=${ids.a}&b=${ids.b}`);
    const worst = await slowestHealthz(t.url, page);
    const r = await page;
    assert.equal(r.res.status, 200);
    assert.match(r.html, /id="diff-too-different"/);
    assert.match(r.html, /too different to align/);
    assert.match(r.html, /interface ge-a-0 /);
    assert.match(r.html, /interface ge-b-0 /);
    assert.ok(worst < 1_000, `/healthz took up to ${Math.round(worst)} ms`);
  });

  test('a small change in a large file is still aligned line by line', async () => {
    const r = await admin.get(`/devices/${ids.dev}/diff?a=${ids.b}&b=${ids.c}`);
    assert.equal(r.res.status, 200);
    assert.doesNotMatch(r.html, /diff-too-different/);
    assert.match(r.html, /ge-b-5000 ?<mark> ?shutdown ?<\/mark>/, 'the added word is marked');
    assert.match(r.html, /\+1<\/span> <span class="del">−1<\/span>/);
  });

  test('a large version is viewed and downloaded whole, read off the event loop', async () => {
    const big = version('z', 120_000); // about 5 MB
    const id = importBackup(t.services.db, SYSTEM_ACTOR, t.services.snapshots, ids.dev, big, Date.now() - 60_000).id;
    const download = admin.get(`/devices/${ids.dev}/backups/${id}/download`);
    const worst = await slowestHealthz(t.url, download);
    const r = await download;
    assert.equal(r.res.status, 200);
    assert.equal(r.html, big);
    assert.ok(worst < 1_000, `/healthz took up to ${Math.round(worst)} ms`);
    const view = await admin.get(`/devices/${ids.dev}/backups/${id}`);
    assert.equal(view.res.status, 200);
    // Numbered and anchored up to NUMBERED_MAX_LINES, the rest as plain text.
    assert.match(view.html, /id="config-text"><span class="line" id="L1"><a class="n" href="#L1" data-n="1" aria-label="line 1"><\/a>interface ge-z-0 /);
    assert.match(view.html, /id="L50000"/);
    assert.doesNotMatch(view.html, /id="L50001"/);
    assert.match(view.html, /\ninterface ge-z-119999 /);
  });

  test('ignore patterns are RE2 and a hostile one runs linearly', async () => {
    const a = `hostname r1\n${'x'.repeat(5_000)}\n`;
    const b = `hostname r2\n${'x'.repeat(5_000)}\n`;
    const r = await diffVersions(a, b, { a: 'a', b: 'b' }, ['^(x|x)*y$', '^hostname ']);
    assert.equal(r?.identical, true);
  });

  test('a task past its hard deadline is terminated and the pool keeps working', async () => {
    const huge = Array.from({ length: 200_000 }, (_, i) => `line ${i} ${(i * 31) % 977}`).join('\n');
    const other = Array.from({ length: 200_000 }, (_, i) => `line ${i} ${(i * 37) % 983}`).join('\n');
    await assert.rejects(
      runOffThread({ kind: 'diff', a: huge, b: other, names: { a: 'a', b: 'b' }, ignore: [], unified: true, snapshotsRoot: null }, 20),
      OffThreadTimeout,
    );
    const ok = await diffVersions('a\n', 'b\n', { a: 'a', b: 'b' }, []);
    assert.equal(ok?.added, 1);
  });

  test('a full queue answers 503 SERVICE_UNAVAILABLE at once instead of queueing without bound', async () => {
    // All submitted in one turn: whatever the work, the queue holds 64 and the rest are refused at once.
    const task = { kind: 'diff' as const, a: 'a\n', b: 'b\n', names: { a: 'a', b: 'b' }, ignore: [], unified: true, snapshotsRoot: null };
    const runs = Array.from({ length: 80 }, () =>
      runOffThread(task, 30_000).then(
        () => 'done',
        (e: unknown) => e,
      ),
    );
    const outcomes = await Promise.all(runs);
    const busy = outcomes.filter((o): o is OffThreadBusy => o instanceof OffThreadBusy);
    assert.ok(busy.length >= 80 - 64 - 2, `refused: ${busy.length}`);
    assert.equal(busy[0].status, 503);
    assert.equal(busy[0].code, 'SERVICE_UNAVAILABLE');
  });
});
