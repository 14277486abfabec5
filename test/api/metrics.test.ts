// GET /metrics: Prometheus text format parsed strictly, the families it promises, access by API key only, counters that move with backups.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startSimulator, loadTranscript, type RunningSimulator } from '../sim/simulator';
import { REPO_ROOT, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { rawState, seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Text exposition format 0.0.4, strictly: HELP and TYPE before samples, sample names belong to their family, labels well-formed and unique. */
function parsePrometheus(text: string): Map<string, Family> {
  assert.ok(text.endsWith('\n'), 'the exposition ends with a newline');
  const families = new Map<string, Family>();
  let current: Family | null = null;
  for (const [i, line] of text.slice(0, -1).split('\n').entries()) {
    const where = `line ${i + 1}: ${line}`;
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta;
      assert.match(name, NAME, where);
      let f = families.get(name);
      if (!f) {
        f = { name, type: 'untyped', help: '', samples: [] };
        families.set(name, f);
      } else assert.equal(f.samples.length, 0, `${where}: metadata after samples`);
      if (kind === 'TYPE') {
        assert.ok(['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest), where);
        f.type = rest;
      } else f.help = rest;
      current = f;
      continue;
    }
    assert.ok(!line.startsWith('#'), `${where}: unknown comment`);
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$/.exec(line);
    assert.ok(m, `${where}: not a sample`);
    const [, name, , labelText, valueText] = m;
    assert.ok(current, `${where}: sample before any TYPE`);
    const suffixes = current.type === 'histogram' ? ['_bucket', '_sum', '_count'] : current.type === 'summary' ? ['', '_sum', '_count'] : [''];
    assert.ok(
      suffixes.some((s) => name === current!.name + s),
      `${where}: sample outside its family ${current.name}`,
    );
    const labels: Record<string, string> = {};
    let rest = labelText ?? '';
    while (rest.length) {
      const l = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/.exec(rest);
      assert.ok(l, `${where}: bad labels at ${rest}`);
      assert.match(l[1], LABEL);
      assert.equal(labels[l[1]], undefined, `${where}: label ${l[1]} twice`);
      labels[l[1]] = l[2].replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
      rest = rest.slice(l[0].length);
    }
    const value = valueText === '+Inf' ? Infinity : valueText === '-Inf' ? -Infinity : valueText === 'NaN' ? NaN : Number(valueText);
    assert.ok(!Number.isNaN(value) || valueText === 'NaN', `${where}: bad value`);
    current.samples.push({ name, labels, value });
  }
  return families;
}

function value(f: Map<string, Family>, sample: string, labels: Record<string, string> = {}): number {
  const family = [...f.values()].find((x) => x.samples.some((s) => s.name === sample));
  const hit = family?.samples.find((s) => s.name === sample && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return hit?.value ?? 0;
}

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));
let t: TestAppliance;
let sim: RunningSimulator;
let key: string;

before(async () => {
  t = await startTestAppliance({ CONFVAULT_BACKUP_CONCURRENCY: '2' });
  sim = await startSimulator({ devices: [{ name: 'r1', transcript: frr, username: 'r1', password: 'pw-r1-123' }] });
  key = await t.keyFor({ permissions: ['dashboard.view'] });
});
after(async () => {
  await sim.close();
  await t.close();
});

async function scrape(): Promise<Map<string, Family>> {
  const res = await t.api('/metrics', { key });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await res.text());
}

test('/metrics needs an API key in X-API-Key holding dashboard.view; refusals use the error shape', async () => {
  const none = await t.api('/metrics');
  assert.equal(none.status, 401);
  const body = (await none.json()) as { error: { code: string; request_id: string } };
  assert.equal(body.error.code, 'UNAUTHORIZED');
  assert.ok(body.error.request_id);

  const other = await t.keyFor({ permissions: ['devices.view'] });
  const denied = await t.api('/metrics', { key: other });
  assert.equal(denied.status, 403);
  assert.equal(((await denied.json()) as { error: { code: string } }).error.code, 'PERMISSION_DENIED');
});

test('families are present and typed; a backup moves the counters; labels carry no device name', async () => {
  const { db, secrets } = t.services;
  const tpl = seedBuiltinTemplate(db, 'frr');
  const good = seedDevice(db, {
    name: 'secret-core-router-7',
    port: sim.port,
    credential_id: seedCredential(db, secrets, { name: 'c1', username: 'r1', password: 'pw-r1-123' }),
    template_id: tpl,
  });
  // A closed port: a quick CONNECTION_REFUSED.
  const bad = seedDevice(db, {
    name: 'secret-edge-router-9',
    port: 1,
    credential_id: seedCredential(db, secrets, { name: 'c2', username: 'x', password: 'y' }),
    template_id: tpl,
  });

  // Created long ago and never backed up: stale until its first successful backup.
  rawState(db, 'a device created 100 hours ago: only the clock makes it', 'UPDATE devices SET created_at = ? WHERE id = ?', Date.now() - 100 * 3_600_000, good);
  const before = await scrape();
  assert.equal(value(before, 'confvault_devices_stale'), 1);
  const expected: Record<string, string> = {
    confvault_backups_total: 'counter',
    confvault_backup_failures_total: 'counter',
    confvault_backup_duration_seconds: 'histogram',
    confvault_devices: 'gauge',
    confvault_devices_stale: 'gauge',
    confvault_backup_queue: 'gauge',
    confvault_notification_deliveries: 'gauge',
    confvault_http_requests_total: 'counter',
    confvault_http_request_duration_seconds: 'histogram',
    confvault_database_bytes: 'gauge',
    confvault_snapshot_bytes: 'gauge',
    confvault_snapshot_files: 'gauge',
    confvault_nodejs_eventloop_lag_p99_seconds: 'gauge',
    confvault_process_resident_memory_bytes: 'gauge',
  };
  for (const [name, type] of Object.entries(expected)) assert.equal(before.get(name)?.type, type, `family ${name}`);
  assert.equal(value(before, 'confvault_devices', { state: 'unknown' }), 2);
  assert.equal(value(before, 'confvault_devices', { state: 'enabled' }), 2);
  assert.equal(value(before, 'confvault_backup_queue', { state: 'running' }), 0);
  assert.ok(value(before, 'confvault_database_bytes', { kind: 'file' }) > 0);

  const results = await t.services.runner.run([good, bad], { trigger: 'event' });
  assert.equal(results.length, 2);
  const ok = await t.services.runner.backupDevice(good, { trigger: 'manual' });
  assert.equal(ok.success, true, ok.message ?? '');

  const after = await scrape();
  const delta = (sample: string, labels: Record<string, string>) => value(after, sample, labels) - value(before, sample, labels);
  assert.equal(delta('confvault_backups_total', { result: 'unchanged', trigger: 'event' }), 1);
  assert.equal(delta('confvault_backups_total', { result: 'failed', trigger: 'event' }), 1);
  assert.equal(delta('confvault_backups_total', { result: 'unchanged', trigger: 'manual' }), 1);
  assert.equal(delta('confvault_backup_failures_total', { failure_type: 'CONNECTION_REFUSED' }), 1);
  assert.equal(delta('confvault_backup_duration_seconds_count', { trigger: 'event' }), 2);
  assert.equal(value(after, 'confvault_devices', { state: 'reachable' }), 1);
  assert.equal(value(after, 'confvault_devices', { state: 'unreachable' }), 1);
  assert.equal(value(after, 'confvault_devices_stale'), 0);
  assert.equal(value(after, 'confvault_snapshot_files'), 1);
  assert.ok(value(after, 'confvault_snapshot_bytes') > 0);
  assert.equal(value(after, 'confvault_backup_queue', { state: 'queued' }), 0);
  // The earlier scrape was counted under its route pattern, with its status.
  assert.ok(value(after, 'confvault_http_requests_total', { method: 'GET', route: '/metrics', status: '200' }) >= 1);

  // Queue depth: with two workers, the third device waits for a free one; none is left waiting afterwards.
  const third = seedDevice(db, {
    name: 'secret-third-9',
    port: 1,
    credential_id: seedCredential(db, secrets, { name: 'c3', username: 'x', password: 'y' }),
    template_id: tpl,
  });
  const runner = t.services.runner;
  const pending = runner.run([good, bad, third], { trigger: 'manual' });
  assert.equal(runner.queued(), 1);
  await pending;
  assert.equal(runner.queued(), 0);

  const text = await (await t.api('/metrics', { key })).text();
  assert.doesNotMatch(text, /secret-(core|edge)-router/);
});

test('HTTP requests are counted by route pattern, never by raw path', async () => {
  const admin = await t.keyFor({ permissions: 'all' });
  await t.api('/api/v1/devices/424242', { key: admin });
  await t.api('/api/v1/devices/434343');
  await t.api('/no/such/page-xyz');
  const f = await scrape();
  const routes = f.get('confvault_http_requests_total')!.samples.map((s) => s.labels.route);
  assert.ok(routes.includes('/api/v1/devices/:device_id'), routes.join(' '));
  assert.ok(!routes.some((r) => /424242|434343|page-xyz/.test(r)), routes.join(' '));
  assert.ok(value(f, 'confvault_http_requests_total', { route: '/api/v1/devices/:device_id', status: '404' }) >= 1);
  assert.ok(value(f, 'confvault_http_requests_total', { route: '/api/v1/devices/:device_id', status: '401' }) >= 1);
});
