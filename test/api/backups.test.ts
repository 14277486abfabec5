// Backup history and backup content over HTTP: shapes, order, pagination edges, time zones, null content and its logging.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import pino from 'pino';
import { getBackupContent } from '../../src/features/backups/backups.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { sha256Hex } from '../../src/store/snapshots';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { recordBackup, seedInventory, type Inventory } from './backups.seed';
import { expectErrorResponse, type Json } from '../helpers/api';

const RECORD_FIELDS = ['config_snapshot_hash', 'error_message', 'finished_at', 'id', 'started_at', 'success'];
const PAGINATION_FIELDS = ['has_next', 'has_prev', 'limit', 'page', 'total', 'total_pages'];
const T0 = Date.UTC(2025, 0, 15, 10, 0, 0);
const HOUR = 3_600_000;
const TEXT1 = 'hostname core-sw-1\ninterface Gi0/1\n description uplink\n';

async function ok(res: Response): Promise<Json> {
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body;
}

async function expectError(res: Response, status: number, code: string, field?: string): Promise<Json> {
  const body = await expectErrorResponse(res, status, code);
  if (field)
    assert.ok(
      body.error.details.errors?.some((e) => e.field === field),
      JSON.stringify(body.error.details),
    );
  return body;
}

describe('backup history and content', () => {
  let t: TestAppliance;
  let inv: Inventory;
  let key: string;
  const ids: Record<string, string> = {};

  before(async () => {
    t = await startTestAppliance();
    inv = seedInventory(t.services.db);
    key = await t.keyFor({ permissions: ['backups.view'] });
    ids.r1 = recordBackup(t.services, inv.devices.dA, { text: TEXT1 }, T0);
    ids.r2 = recordBackup(t.services, inv.devices.dA, { error: 'Timed out waiting for the prompt' }, T0 + HOUR);
    ids.r3 = recordBackup(t.services, inv.devices.dA, { text: TEXT1 }, T0 + 2 * HOUR);
    ids.r4 = recordBackup(t.services, inv.devices.dA, 'running', T0 + 3 * HOUR);
  });
  after(() => t.close());

  test('history items have exactly the six fields of spec 2.1, newest first', async () => {
    const body = await ok(await t.api(`/api/v1/devices/${inv.devices.dA}/backups`, { key }));
    assert.deepEqual(Object.keys(body).sort(), ['items', 'pagination']);
    assert.deepEqual(Object.keys(body.pagination).sort(), PAGINATION_FIELDS);
    assert.deepEqual(body.pagination, { page: 1, limit: 10, total: 4, total_pages: 1, has_next: false, has_prev: false });
    for (const item of body.items) assert.deepEqual(Object.keys(item).sort(), RECORD_FIELDS);
    assert.deepEqual(
      body.items.map((i: Json) => i.id),
      [ids.r4, ids.r3, ids.r2, ids.r1],
    );
    const [running, second, failed, first] = body.items;
    assert.deepEqual(running, {
      id: ids.r4,
      started_at: '2025-01-15 13:00:00',
      finished_at: null,
      success: false,
      error_message: null,
      config_snapshot_hash: null,
    });
    assert.deepEqual(failed, {
      id: ids.r2,
      started_at: '2025-01-15 11:00:00',
      finished_at: '2025-01-15 11:00:04',
      success: false,
      error_message: 'Timed out waiting for the prompt',
      config_snapshot_hash: null,
    });
    assert.deepEqual(first, {
      id: ids.r1,
      started_at: '2025-01-15 10:00:00',
      finished_at: '2025-01-15 10:00:04',
      success: true,
      error_message: null,
      config_snapshot_hash: sha256Hex(TEXT1),
    });
    assert.equal(second.config_snapshot_hash, first.config_snapshot_hash, 'identical text, identical hash');
    assert.match(first.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  test('a device without records: total 0, total_pages 1, no items', async () => {
    const body = await ok(await t.api(`/api/v1/devices/${inv.devices.dB}/backups`, { key }));
    assert.deepEqual(body, { items: [], pagination: { page: 1, limit: 10, total: 0, total_pages: 1, has_next: false, has_prev: false } });
  });

  test('pages cover the history once, in order, from both ends of the index', async () => {
    const device = inv.devices.dNone;
    for (let i = 0; i < 25; i++) recordBackup(t.services, device, { text: `hostname n${i % 3}\n` }, T0 + i * 60_000);
    const all = await ok(await t.api(`/api/v1/devices/${device}/backups?limit=200`, { key }));
    assert.equal(all.items.length, 25);
    const starts = all.items.map((i: Json) => i.started_at);
    assert.deepEqual(starts, [...starts].sort().reverse(), 'newest first');
    for (const limit of [1, 7, 10, 24, 25]) {
      const seen: string[] = [];
      const pages = Math.ceil(25 / limit);
      for (let page = 1; page <= pages; page++) {
        const body = await ok(await t.api(`/api/v1/devices/${device}/backups?page=${page}&limit=${limit}`, { key }));
        assert.deepEqual(body.pagination, { page, limit, total: 25, total_pages: pages, has_next: page < pages, has_prev: page > 1 });
        seen.push(...body.items.map((i: Json) => i.id));
      }
      assert.deepEqual(
        seen,
        all.items.map((i: Json) => i.id),
        `limit ${limit}`,
      );
    }
    const last = await ok(await t.api(`/api/v1/devices/${device}/backups?page=3`, { key }));
    assert.equal(last.items.length, 5);
    assert.deepEqual(last.pagination, { page: 3, limit: 10, total: 25, total_pages: 3, has_next: false, has_prev: true });
    const past = await ok(await t.api(`/api/v1/devices/${device}/backups?page=9`, { key }));
    assert.deepEqual(past, { items: [], pagination: { page: 9, limit: 10, total: 25, total_pages: 3, has_next: false, has_prev: true } });
  });

  test('records that started at the same moment are ordered by id, newest-first direction', async () => {
    const device = inv.devices.dA1;
    const same = [0, 1, 2, 3].map(() => recordBackup(t.services, device, { text: 'hostname tie\n' }, T0));
    const expected = [...same].sort().reverse();
    const one = await ok(await t.api(`/api/v1/devices/${device}/backups`, { key }));
    assert.deepEqual(
      one.items.map((i: Json) => i.id),
      expected,
    );
    const paged: string[] = [];
    for (let page = 1; page <= 4; page++)
      paged.push(...(await ok(await t.api(`/api/v1/devices/${device}/backups?limit=1&page=${page}`, { key }))).items.map((i: Json) => i.id));
    assert.deepEqual(paged, expected);
  });

  test('page and limit out of range or not integers are 422 with details.errors', async () => {
    const base = `/api/v1/devices/${inv.devices.dA}/backups`;
    for (const q of ['limit=0', 'limit=201', 'limit=abc', 'limit=-1', 'limit=1.5', 'limit=1e2'])
      await expectError(await t.api(`${base}?${q}`, { key }), 422, 'VALIDATION_ERROR', 'limit');
    for (const q of ['page=0', 'page=abc', 'page=-2']) await expectError(await t.api(`${base}?${q}`, { key }), 422, 'VALIDATION_ERROR', 'page');
    assert.equal((await ok(await t.api(`${base}?limit=200`, { key }))).pagination.limit, 200);
    assert.equal((await ok(await t.api(`${base}?limit=1`, { key }))).items.length, 1);
    assert.equal((await ok(await t.api(`${base}?unknown=1`, { key }))).pagination.total, 4, 'unknown query parameters are ignored');
  });

  test('history errors: missing device 404 BACKUP_DEVICE_NOT_FOUND, malformed id 422', async () => {
    await expectError(await t.api('/api/v1/devices/999999/backups', { key }), 404, 'BACKUP_DEVICE_NOT_FOUND');
    await expectError(await t.api('/api/v1/devices/abc/backups', { key }), 422, 'VALIDATION_ERROR', 'device_id');
    await expectError(await t.api('/api/v1/devices/-1/backups', { key }), 422, 'VALIDATION_ERROR', 'device_id');
  });

  test('timestamps follow X-Timezone, else the user preference, else the appliance zone; unknown zone 422', async () => {
    const path = `/api/v1/devices/${inv.devices.dA}/backups?limit=200`;
    const firstOf = (b: Json) => b.items.find((i: Json) => i.id === ids.r1);
    assert.equal(firstOf(await ok(await t.api(path, { key }))).started_at, '2025-01-15 10:00:00');
    const tokyo = firstOf(await ok(await t.api(path, { key, headers: { 'X-Timezone': 'Asia/Tokyo' } })));
    assert.equal(tokyo.started_at, '2025-01-15 19:00:00');
    assert.equal(tokyo.finished_at, '2025-01-15 19:00:04');
    const nyKey = await t.keyFor({ permissions: ['backups.view'], timezone: 'America/New_York' });
    assert.equal(firstOf(await ok(await t.api(path, { key: nyKey }))).started_at, '2025-01-15 05:00:00');
    assert.equal(firstOf(await ok(await t.api(path, { key: nyKey, headers: { 'X-Timezone': 'Europe/Berlin' } }))).started_at, '2025-01-15 11:00:00');
    await expectError(await t.api(path, { key, headers: { 'X-Timezone': 'Mars/Olympus_Mons' } }), 422, 'VALIDATION_ERROR', 'X-Timezone');
  });

  test('content of a successful backup is its text, sent with Cache-Control: no-store', async () => {
    const res = await t.api(`/api/v1/backups/${ids.r1}/content`, { key });
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.deepEqual(await ok(res), { config_text: TEXT1 });
    assert.deepEqual(await ok(await t.api(`/api/v1/backups/${ids.r1.toUpperCase()}/content`, { key })), { config_text: TEXT1 }, 'UUIDs are case-insensitive');
  });

  test('content is 200 with null for a failed or running backup', async () => {
    assert.deepEqual(await ok(await t.api(`/api/v1/backups/${ids.r2}/content`, { key })), { config_text: null });
    assert.deepEqual(await ok(await t.api(`/api/v1/backups/${ids.r4}/content`, { key })), { config_text: null });
  });

  test('content is 200 with null for a missing or corrupted snapshot, logged without the text', async () => {
    const missingText = 'hostname gone\nsnmp-server community s3cr3t-missing RO\n';
    const corruptText = 'hostname bent\nsnmp-server community s3cr3t-corrupt RO\n';
    const missing = recordBackup(t.services, inv.devices.dB, { text: missingText }, T0);
    const corrupt = recordBackup(t.services, inv.devices.dB, { text: corruptText }, T0 + 1000);
    t.services.snapshots.remove(sha256Hex(missingText));
    const file = t.services.snapshots.locate(sha256Hex(corruptText))!;
    writeFileSync(file, file.endsWith('.gz') ? gzipSync('hostname forged\n') : 'hostname forged\n');
    assert.deepEqual(await ok(await t.api(`/api/v1/backups/${missing}/content`, { key })), { config_text: null });
    assert.deepEqual(await ok(await t.api(`/api/v1/backups/${corrupt}/content`, { key })), { config_text: null });

    // The same service call the route makes, with a logger we can read.
    const lines: Json[] = [];
    const sink = new Writable({ write: (chunk, _enc, cb) => (lines.push(JSON.parse(String(chunk))), cb()) });
    const log = pino({ level: 'info' }, sink);
    assert.equal(getBackupContent(t.services.db, t.services.snapshots, log, SYSTEM_ACTOR.principal, missing), null);
    assert.equal(getBackupContent(t.services.db, t.services.snapshots, log, SYSTEM_ACTOR.principal, corrupt), null);
    await new Promise((r) => setImmediate(r));
    assert.equal(lines.length, 2);
    assert.ok(
      lines.every((l) => l.level >= 50),
      'logged as errors',
    );
    assert.deepEqual(
      lines.map((l) => l.backup_id),
      [missing, corrupt],
    );
    const logged = JSON.stringify(lines);
    assert.ok(!logged.includes('s3cr3t') && !logged.includes('forged'), 'no configuration text in the log');
  });

  test('content errors: missing record 404 BACKUP_NOT_FOUND, malformed UUID 422', async () => {
    await expectError(await t.api('/api/v1/backups/0b5e8a3c-6f1d-4d2e-9a7b-2c4f1e8d9a10/content', { key }), 404, 'BACKUP_NOT_FOUND');
    for (const bad of ['not-a-uuid', '12345', '0b5e8a3c6f1d4d2e9a7b2c4f1e8d9a10', '0b5e8a3c-6f1d-4d2e-9a7b-2c4f1e8d9a1z']) {
      await expectError(await t.api(`/api/v1/backups/${bad}/content`, { key }), 422, 'VALIDATION_ERROR', 'backup_id');
    }
  });

  test('the public API cannot create, change or delete backups', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const res = await t.api(`/api/v1/backups/${ids.r1}/content`, { key, method, json: method === 'DELETE' ? undefined : {} });
      assert.ok([404, 405].includes(res.status), `${method} answered ${res.status}`);
    }
    assert.deepEqual(await ok(await t.api(`/api/v1/backups/${ids.r1}/content`, { key })), { config_text: TEXT1 });
  });
});
