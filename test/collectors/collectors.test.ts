// Remote collectors over real HTTP: one-time enrolment, signed requests (tamper, replay, revoked), leases sealed to the zone's collector, idempotent upload.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import path from 'node:path';
import { authenticateCollector, createEnrolToken, listCollectors, revokeCollector, setZone } from '../../src/features/collectors/collectors.service';
import { openDatabase } from '../../src/db/open';
import { DB_FILE_NAME } from '../../src/app/bootstrap';
import { leaveZonedToCollectors } from '../../src/features/collectors/collector-work.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import {
  BATCH_RESULTS,
  PROTOCOL_PREFIX,
  PROTOCOL_VERSION,
  generateCollectorKeys,
  openSealed,
  sha256Text,
  type ResultOutcome,
  type Sealed,
} from '../../src/lib/collector-protocol';
import { SnapshotStorageError } from '../../src/store/snapshots';
import { assertDbCheckClean, assertEveryVersionReadable } from '../helpers/fault';
import { enrol, enrolBody, postEnrol, signedHeaders, signedPost, type EnrolledCollector } from './harness';

let t: TestAppliance;
let adminKey: string;
let templateId: number;
const PASSWORD = 'pw-zone-secret-481516';

before(async () => {
  t = await startTestAppliance({ CONFVAULT_COLLECTOR_LEASE_SECONDS: '600' });
  adminKey = await t.keyFor({ permissions: 'all' });
  templateId = seedBuiltinTemplate(t.appliance.db, 'frr');
});
after(() => t.close());

/** Protocol 2: results go in batches, answered one by one. */
async function results(c: EnrolledCollector, ...items: unknown[]): Promise<ResultOutcome[]> {
  const res = await signedPost(t, c, '/results', { results: items });
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { results: ResultOutcome[] }).results;
}

/** A successful result for a lease, as a site uploads it (`sha256` defaults to the text's own hash). */
function okResult(leaseId: string, text: string, sha256 = sha256Text(text)) {
  return {
    lease_id: leaseId,
    started_at: Date.now() - 500,
    duration_ms: 400,
    host_key: null,
    reachability: 'reachable',
    ok: true,
    text,
    sha256,
    encoding: null,
  };
}

type LeaseAnswer = { jobs: { lease_id: string; device_id: number; device_name: string; sealed: Sealed }[] };

/** A device of `zone` (through its group), queued for its collector as the schedule would. */
function zonedDevice(name: string, zone: string): number {
  const { db, secrets } = t.services;
  const group = seedGroup(db, `g-${name}`);
  setZone(db, SYSTEM_ACTOR, { group }, zone);
  const id = seedDevice(db, {
    name,
    group_id: group,
    credential_id: seedCredential(db, secrets, { name: `c-${name}`, username: 'backup', password: PASSWORD }),
    template_id: templateId,
  });
  assert.deepEqual(leaveZonedToCollectors(db, [id], 'schedule'), [], 'a zoned device is left to its collector');
  return id;
}

test('an enrolment token is single use; an expired or unknown one is refused', async () => {
  const { token } = createEnrolToken(t.appliance.db, SYSTEM_ACTOR, 'site-a');
  const first = await postEnrol(t, enrolBody(token, 'col-once', generateCollectorKeys()));
  assert.equal(first.status, 201);
  assert.equal(((await first.json()) as { zone: string }).zone, 'site-a');
  const again = await postEnrol(t, enrolBody(token, 'col-twice', generateCollectorKeys()));
  assert.equal(again.status, 401, 'the same token enrols once');

  const old = createEnrolToken(t.appliance.db, SYSTEM_ACTOR, 'site-a', 1, Date.now() - 2 * 3_600_000);
  const expired = await postEnrol(t, enrolBody(old.token, 'col-late', generateCollectorKeys()));
  assert.equal(expired.status, 401);
  assert.match(((await expired.json()) as { error: { message: string } }).error.message, /expired/);

  assert.equal((await postEnrol(t, enrolBody('cvc_made-up', 'col-guess', generateCollectorKeys()))).status, 401);
});

test('a collector of another protocol version is told so in one line', async () => {
  const { token } = createEnrolToken(t.appliance.db, SYSTEM_ACTOR, 'site-a');
  const res = await postEnrol(t, enrolBody(token, 'col-future', generateCollectorKeys()), '99');
  assert.equal(res.status, 409);
  assert.equal(res.headers.get('x-collector-protocol'), '2');
  const { message } = ((await res.json()) as { error: { message: string } }).error;
  assert.match(message, /^Collector protocol mismatch: the central speaks version 2, the collector 99; [^\n]+$/);

  // A collector of the previous release (one result per request) reaches the same path and hears the same line.
  const c = await enrol(t, 'site-a', 'col-v1');
  const old = await signedPost(t, c, '/lease', { max: 1 }, { protocol: '1' });
  assert.equal(old.status, 409);
  assert.match(
    ((await old.json()) as { error: { message: string } }).error.message,
    /^Collector protocol mismatch: the central speaks version 2, the collector 1; /,
  );
});

test('signed requests: a tampered body, a replay, an old timestamp, another key and a revoked collector are refused', async () => {
  const c = await enrol(t, 'site-sig', 'col-sig');
  assert.equal((await signedPost(t, c, '/lease', { max: 1 })).status, 200);

  const tampered = await signedPost(t, c, '/lease', { max: 5 }, { signedBody: JSON.stringify({ max: 1 }) });
  assert.equal(tampered.status, 401);

  const body = JSON.stringify({ max: 1 });
  const headers = signedHeaders(c, '/lease', body);
  const send = () => fetch(`${t.url}${PROTOCOL_PREFIX}/lease`, { method: 'POST', headers, body });
  assert.equal((await send()).status, 200);
  const replay = await send();
  assert.equal(replay.status, 401);
  assert.match(((await replay.json()) as { error: { message: string } }).error.message, /replayed/);

  assert.equal((await signedPost(t, c, '/lease', { max: 1 }, { timestamp: Date.now() - 10 * 60_000 })).status, 401);
  assert.equal((await signedPost(t, c, '/lease', { max: 1 }, { keys: generateCollectorKeys() })).status, 401, 'a key the central did not pin');
  assert.equal((await signedPost(t, { ...c, id: 999_999 }, '/lease', { max: 1 })).status, 401, 'an unknown collector');
  const unsigned = await fetch(`${t.url}${PROTOCOL_PREFIX}/lease`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-collector-protocol': String(PROTOCOL_VERSION) },
    body,
  });
  assert.equal(unsigned.status, 401);

  revokeCollector(t.appliance.db, SYSTEM_ACTOR, 'col-sig');
  const revoked = await signedPost(t, c, '/lease', { max: 1 });
  assert.equal(revoked.status, 401);
  assert.match(((await revoked.json()) as { error: { message: string } }).error.message, /revoked/);
});

test('a lease carries the credential sealed to its own zone collector only; an upload is hash-checked and stored once', async () => {
  const a: EnrolledCollector = await enrol(t, 'site-l', 'col-l');
  const b: EnrolledCollector = await enrol(t, 'site-other', 'col-other');
  const deviceId = zonedDevice('dev-l', 'site-l');

  const none = (await (await signedPost(t, b, '/lease', { max: 10 })).json()) as LeaseAnswer;
  assert.deepEqual(none.jobs, [], 'another zone gets nothing');

  const res = await signedPost(t, a, '/lease', { max: 10 });
  const raw = await res.text();
  assert.ok(!raw.includes(PASSWORD), 'the password never travels in clear');
  const { jobs } = JSON.parse(raw) as LeaseAnswer;
  assert.equal(jobs.length, 1);
  assert.equal(jobs[0].device_id, deviceId);
  const opened = openSealed(a.keys.sealing_private, a.keys.sealing_public, jobs[0].sealed) as { target: { password: string }; redact_key: string };
  assert.equal(opened.target.password, PASSWORD);
  assert.equal(Buffer.from(opened.redact_key, 'base64').length, 32);
  assert.throws(() => openSealed(b.keys.sealing_private, b.keys.sealing_public, jobs[0].sealed), 'another collector cannot open it');
  assert.deepEqual(((await (await signedPost(t, a, '/lease', { max: 10 })).json()) as LeaseAnswer).jobs, [], 'a leased device is not leased twice');

  const text = 'hostname dev-l\ninterface eth0\n';
  const upload = okResult(jobs[0].lease_id, text);
  const [wrongHash] = await results(a, { ...upload, sha256: sha256Text('something else') });
  assert.deepEqual(wrongHash, { lease_id: upload.lease_id, outcome: 'refused', message: 'The uploaded text does not match its hash.' });
  const [foreign] = await results(b, upload);
  assert.equal(foreign.outcome, 'refused', 'another collector cannot answer this lease');

  const [stored] = await results(a, upload);
  assert.equal(stored.outcome, 'stored');
  const [retry] = await results(a, upload);
  assert.deepEqual(retry, { ...stored, outcome: 'duplicate' }, 'a retried upload stores nothing new');
  assert.ok(stored.outcome === 'stored');

  const list = (await (await t.api(`/api/v1/devices/${deviceId}/backups`, { key: adminKey })).json()) as { items: { id: string; success: boolean }[] };
  assert.deepEqual(
    list.items.map((r) => [r.id, r.success]),
    [[stored.backup_id, true]],
  );
  const content = await t.api(`/api/v1/backups/${stored.backup_id}/content`, { key: adminKey });
  assert.equal(content.status, 200);
  assert.equal(((await content.json()) as { config_text: string }).config_text, text);
});

test('"Back up now" of a zoned device queues it for its collector instead of trying from the central', async () => {
  const c = await enrol(t, 'site-now', 'col-now');
  const { db, secrets } = t.services;
  const id = seedDevice(db, {
    name: 'dev-now',
    hostname: '192.0.2.1',
    credential_id: seedCredential(db, secrets, { name: 'c-dev-now', username: 'backup', password: PASSWORD }),
    template_id: templateId,
  });
  setZone(db, SYSTEM_ACTOR, { device: 'dev-now' }, 'site-now');
  const [r] = await t.services.runner.run([id], { trigger: 'manual' });
  assert.deepEqual([r.success, r.failure, r.message], [false, 'SKIPPED', 'Queued for the collector of its zone.']);
  const { jobs } = (await (await signedPost(t, c, '/lease', { max: 10 })).json()) as LeaseAnswer;
  assert.deepEqual(
    jobs.map((j) => j.device_id),
    [id],
  );
});

test('a batch of results is answered result by result: each good one stored as a local backup, a bad one refused alone', async () => {
  const c = await enrol(t, 'site-batch', 'col-batch');
  const ids = ['dev-b1', 'dev-b2', 'dev-b3'].map((name) => zonedDevice(name, 'site-batch'));
  const { jobs } = (await (await signedPost(t, c, '/lease', { max: 10 })).json()) as LeaseAnswer;
  assert.deepEqual(jobs.map((j) => j.device_id).sort(), [...ids].sort(), 'one lease request hands out the whole queue');
  const result = (j: LeaseAnswer['jobs'][number], text: string, sha256?: string) => okResult(j.lease_id, text, sha256);
  const [j1, j2, j3] = jobs;
  const answers = await results(
    c,
    result(j1, `hostname ${j1.device_name}\n`),
    result(j2, 'hostname changed-on-the-way\n', sha256Text('hostname something else\n')),
    { lease_id: j3.lease_id, ok: true },
    result(j1, `hostname ${j1.device_name}\n`),
  );
  assert.deepEqual(
    answers.map((a) => [a.lease_id, a.outcome]),
    [
      [j1.lease_id, 'stored'],
      [j2.lease_id, 'refused'],
      [j3.lease_id, 'refused'],
      [j1.lease_id, 'duplicate'],
    ],
  );
  assert.match((answers[2] as { message: string }).message, /^Result validation failed: /);

  // The refused ones keep their lease: sent again, right, they are stored; the whole batch again stores nothing new.
  const again = await results(
    c,
    result(j1, `hostname ${j1.device_name}\n`),
    result(j2, `hostname ${j2.device_name}\n`),
    result(j3, `hostname ${j3.device_name}\n`),
  );
  assert.deepEqual(
    again.map((a) => a.outcome),
    ['duplicate', 'stored', 'stored'],
  );
  for (const [i, id] of ids.entries()) {
    const list = (await (await t.api(`/api/v1/devices/${id}/backups`, { key: adminKey })).json()) as { items: { id: string; success: boolean }[] };
    assert.equal(list.items.length, 1, `device ${i + 1} stored once`);
    const content = (await (await t.api(`/api/v1/backups/${list.items[0].id}/content`, { key: adminKey })).json()) as { config_text: string };
    assert.equal(content.config_text, `hostname dev-b${i + 1}\n`);
  }
  const tooMany = await signedPost(t, c, '/results', { results: Array.from({ length: BATCH_RESULTS + 1 }, () => result(j1, 'x\n')) });
  assert.equal(tooMany.status, 422, `at most ${BATCH_RESULTS} results a request`);
});

test('a replayed request is refused by a central restarted inside the window (the nonce is in the database)', async () => {
  const c = await enrol(t, 'site-restart', 'col-restart');
  const body = JSON.stringify({ max: 1 });
  const headers = signedHeaders(c, '/lease', body);
  assert.equal((await fetch(`${t.url}${PROTOCOL_PREFIX}/lease`, { method: 'POST', headers, body })).status, 200);
  // A new process opens the database afresh: nothing held in the first one's memory.
  const db = openDatabase(path.join(t.appliance.dataDir, DB_FILE_NAME));
  try {
    const req = { method: 'POST', path: `${PROTOCOL_PREFIX}/lease`, header: (n: string) => headers[n], body: Buffer.from(body) };
    assert.throws(() => authenticateCollector(db, req), /Collector request refused: replayed request/);
  } finally {
    db.close();
  }
});

test('an idle collector’s lease request is held and answered with work queued meanwhile, not a poll interval later', async () => {
  const c = await enrol(t, 'site-hold', 'col-hold');
  const { db, secrets } = t.services;
  const group = seedGroup(db, 'g-hold');
  setZone(db, SYSTEM_ACTOR, { group }, 'site-hold');
  const id = seedDevice(db, {
    name: 'dev-hold',
    group_id: group,
    credential_id: seedCredential(db, secrets, { name: 'c-dev-hold', username: 'backup', password: PASSWORD }),
    template_id: templateId,
  });
  const asked = signedPost(t, c, '/lease', { max: 10, wait: true });
  // The schedule fires while the request is held (the central would otherwise answer "nothing" at once).
  await new Promise((r) => setTimeout(r, 300));
  leaveZonedToCollectors(db, [id], 'schedule');
  const res = await asked;
  assert.equal(res.status, 200);
  assert.deepEqual(
    ((await res.json()) as LeaseAnswer).jobs.map((j) => j.device_id),
    [id],
  );
});

test('a collector revoked while its lease request is held gets no job', async () => {
  const c = await enrol(t, 'site-hold-revoked', 'col-hold-revoked');
  const asked = signedPost(t, c, '/lease', { max: 10, wait: true });
  await new Promise((r) => setTimeout(r, 300));
  revokeCollector(t.appliance.db, SYSTEM_ACTOR, 'col-hold-revoked');
  zonedDevice('dev-hold-revoked', 'site-hold-revoked');
  const res = await asked;
  assert.ok(!(await res.clone().text()).includes('sealed'), 'no sealed job');
  assert.deepEqual(((await res.json()) as LeaseAnswer).jobs, []);
});

test('a stopping collector hands back the leases it had not started: queued again at once; another collector cannot release them', async () => {
  const a = await enrol(t, 'site-release', 'col-release-a');
  const b = await enrol(t, 'site-release', 'col-release-b');
  const first = zonedDevice('dev-release-1', 'site-release');
  const second = zonedDevice('dev-release-2', 'site-release');
  const lease = async (c: EnrolledCollector, body: object) => {
    const res = await signedPost(t, c, '/lease', body);
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as LeaseAnswer).jobs;
  };
  const leased = await lease(a, { max: 10 });
  assert.deepEqual(leased.map((j) => j.device_id).sort(), [first, second].sort());
  const [started, unstarted] = leased;

  assert.deepEqual(await lease(b, { max: 0, release: [unstarted.lease_id] }), [], 'max 0 leases nothing');
  assert.deepEqual(await lease(b, { max: 10 }), [], "b's release of a's lease changed nothing: both still leased to a");

  assert.deepEqual(await lease(a, { max: 0, held: [started.lease_id], release: [unstarted.lease_id] }), []);
  const again = await lease(b, { max: 10 });
  assert.deepEqual(
    again.map((j) => j.device_id),
    [unstarted.device_id],
    'the released device is leased again at once (lease_seconds is 600 here), the one still held is not',
  );
  assert.notEqual(again[0].lease_id, unstarted.lease_id, 'under a new lease');
  const [stale] = await results(a, okResult(unstarted.lease_id, 'x\n'));
  assert.equal(stale.outcome, 'refused', 'a result for a lease handed back is not stored');
});

test('a held lease request whose collector went away leases nothing: work queued afterwards waits for a live request', async () => {
  const c = await enrol(t, 'site-gone', 'col-gone');
  const gone = new AbortController();
  const body = JSON.stringify({ max: 10, wait: true });
  const asked = fetch(`${t.url}${PROTOCOL_PREFIX}/lease`, { method: 'POST', headers: signedHeaders(c, '/lease', body), body, signal: gone.signal });
  await new Promise((r) => setTimeout(r, 200));
  gone.abort();
  await asked.catch(() => undefined);
  await new Promise((r) => setTimeout(r, 100));
  const id = zonedDevice('dev-gone', 'site-gone');
  await new Promise((r) => setTimeout(r, 700)); // past the central's next look at the queue (HOLD_CHECK_MS)
  const [row] = listCollectors(t.appliance.db, SYSTEM_ACTOR, 60_000).filter((x) => x.name === 'col-gone');
  assert.deepEqual([row.queued, row.leased], [1, 0], `dev-gone ${id} is still queued, not leased to a request nobody waits for`);
});

test('an upload’s running record names its hash before the snapshot file is written; the lease goes with the finished record', async () => {
  const a: EnrolledCollector = await enrol(t, 'site-n', 'col-n');
  const deviceId = zonedDevice('dev-n', 'site-n');
  const { jobs } = (await (await signedPost(t, a, '/lease', { max: 10 })).json()) as LeaseAnswer;
  assert.equal(jobs.length, 1);
  const text = 'hostname dev-n\ninterface eth1\n';
  const { db, snapshots } = t.services;
  const seen: { hash: string | null; running: boolean; leased: boolean }[] = [];
  const write = snapshots.putPrepared.bind(snapshots);
  snapshots.putPrepared = (p, reserve) => {
    // What a `db prune` racing this write would see: the running record already names the file.
    const row = db.prepare('SELECT config_snapshot_hash, finished_at FROM backups WHERE device_id = ? ORDER BY started_at DESC LIMIT 1').get(deviceId) as
      { config_snapshot_hash: string | null; finished_at: number | null } | undefined;
    const leased = db.prepare('SELECT count(*) FROM collector_work WHERE lease_id = ?').pluck().get(jobs[0].lease_id) as number;
    seen.push({ hash: row?.config_snapshot_hash ?? null, running: row?.finished_at === null, leased: leased === 1 });
    return write(p, reserve);
  };
  try {
    const [stored] = await results(a, okResult(jobs[0].lease_id, text));
    assert.equal(stored.outcome, 'stored');
  } finally {
    snapshots.putPrepared = write;
  }
  assert.deepEqual(seen, [{ hash: sha256Text(text), running: true, leased: true }]);
  assert.equal(db.prepare('SELECT count(*) FROM collector_work WHERE lease_id = ?').pluck().get(jobs[0].lease_id), 0, 'the lease is gone once stored');
});

test('a result the central cannot store (disk full) is not answered as a duplicate on retry: the batch sent again stores it, db check clean', async () => {
  const a: EnrolledCollector = await enrol(t, 'site-full', 'col-full');
  const deviceId = zonedDevice('dev-full', 'site-full');
  const { jobs } = (await (await signedPost(t, a, '/lease', { max: 10 })).json()) as LeaseAnswer;
  const upload = okResult(jobs[0].lease_id, 'hostname dev-full\ninterface eth2\n');
  const { db, snapshots } = t.services;
  const write = snapshots.putPrepared.bind(snapshots);
  snapshots.putPrepared = () =>
    Promise.reject(new SnapshotStorageError('ENOSPC', 'Could not store the configuration snapshot: no space left on the device (ENOSPC).'));
  let failed: Response;
  try {
    failed = await signedPost(t, a, '/results', { results: [upload] });
  } finally {
    snapshots.putPrepared = write;
  }
  assert.ok(failed.status >= 500, `the request fails, so the site keeps the batch (got ${failed.status})`);
  const body = (await failed.json()) as { error?: { code?: string } };
  assert.equal(typeof body.error?.code, 'string', 'in the error shape');

  const [again] = await results(a, upload);
  assert.equal(again.outcome, 'stored', 'sent again once space is back: stored, not "duplicate"');
  const rows = db.prepare('SELECT success, failure_type, finished_at FROM backups WHERE device_id = ? ORDER BY started_at, rowid').all(deviceId) as {
    success: number;
    failure_type: string | null;
    finished_at: number | null;
  }[];
  assert.deepEqual(
    rows.map((r) => [r.success, r.failure_type, r.finished_at !== null]),
    [
      [0, 'STORAGE_ERROR', true],
      [1, null, true],
    ],
    'the failed attempt is recorded as such, nothing left running',
  );
  assert.equal(db.prepare('SELECT count(*) FROM collector_work WHERE lease_id = ?').pluck().get(upload.lease_id), 0, 'the lease is done');
  assertEveryVersionReadable(db, snapshots);
  await assertDbCheckClean(t.services.dataDir);
});

test('a batch whose middle result cannot be stored: the others are stored, that one is stored when the batch comes again', async () => {
  const a: EnrolledCollector = await enrol(t, 'site-part', 'col-part');
  const ids = ['dev-p1', 'dev-p2', 'dev-p3'].map((name) => zonedDevice(name, 'site-part'));
  const { jobs } = (await (await signedPost(t, a, '/lease', { max: 10 })).json()) as LeaseAnswer;
  const byDevice = new Map(jobs.map((j) => [j.device_id, j]));
  const uploads = ids.map((id, i) => okResult(byDevice.get(id)!.lease_id, `hostname dev-p${i + 1}\ninterface eth${i}\n`));
  const { db, snapshots } = t.services;
  const write = snapshots.putPrepared.bind(snapshots);
  snapshots.putPrepared = (p, reserve) =>
    p.hash === uploads[1].sha256
      ? Promise.reject(new SnapshotStorageError('ENOSPC', 'Could not store the configuration snapshot: no space left on the device (ENOSPC).'))
      : write(p, reserve);
  let failed: Response;
  try {
    failed = await signedPost(t, a, '/results', { results: uploads });
  } finally {
    snapshots.putPrepared = write;
  }
  assert.ok(failed.status >= 500, `the request fails, so the site keeps the batch (got ${failed.status})`);
  const again = await results(a, ...uploads);
  assert.deepEqual(
    again.map((r) => r.outcome),
    ['duplicate', 'stored', 'duplicate'],
    'the two stored the first time come back as duplicates, the one that failed is stored now',
  );
  const outcomes = (id: number) =>
    (
      db.prepare('SELECT success, failure_type FROM backups WHERE device_id = ? AND finished_at IS NOT NULL ORDER BY started_at, rowid').all(id) as {
        success: number;
        failure_type: string | null;
      }[]
    ).map((r) => [r.success, r.failure_type]);
  assert.deepEqual(outcomes(ids[0]), [[1, null]]);
  assert.deepEqual(
    outcomes(ids[1]),
    [
      [0, 'STORAGE_ERROR'],
      [1, null],
    ],
    'the failed attempt is recorded as such',
  );
  assert.deepEqual(outcomes(ids[2]), [[1, null]]);
  assert.equal(db.prepare('SELECT count(*) FROM backups WHERE finished_at IS NULL').pluck().get(), 0, 'nothing left running');
  assertEveryVersionReadable(db, snapshots);
  await assertDbCheckClean(t.services.dataDir);
});
