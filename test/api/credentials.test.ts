// Credential endpoints: response shapes, each error code, pagination, time zones, and secrets that never leave encrypted.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCredential, getDecryptedCredential } from '../../src/features/credentials/credentials.service';
import { formatTimestamp } from '../../src/lib/time';
import { deleteDevice } from '../../src/features/devices/devices.service';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedDevice } from '../helpers/seed';
import { apiCall, expectError, type ApiResult, type CallInit, type Json } from '../helpers/api';
import { ed25519KeyPair } from '../helpers/keys';
import { SYSTEM_ACTOR } from '../../src/identity/actor';

const FIELDS = [
  'id',
  'name',
  'username',
  'description',
  'has_password',
  'has_private_key',
  'has_passphrase',
  'has_enable_secret',
  'device_count',
  'group_ids',
  'created_at',
  'updated_at',
].sort();

const ed = ed25519KeyPair();
const edEncrypted = ed25519KeyPair({ passphrase: 'key-pass-7QX' });

/** The same encrypted key with its bcrypt round count rewritten (parsing it for real would take minutes). */
function withKdfRounds(pem: string, rounds: number): string {
  const b64 = pem
    .split('\n')
    .filter((l) => l && !l.startsWith('-----'))
    .join('');
  const buf = Buffer.from(b64, 'base64');
  let off = 'openssh-key-v1\0'.length;
  for (let i = 0; i < 2; i++) off += 4 + buf.readUInt32BE(off); // cipher name, kdf name
  const saltLen = buf.readUInt32BE(off + 4);
  buf.writeUInt32BE(rounds, off + 8 + saltLen);
  const lines = buf.toString('base64').match(/.{1,70}/g)!;
  return ['-----BEGIN OPENSSH PRIVATE KEY-----', ...lines, '-----END OPENSSH PRIVATE KEY-----', ''].join('\n');
}

let t: TestAppliance;
let key: string;
/** Every response body this file receives, checked at the end for leaked secrets or ciphertext. */
const bodies: string[] = [];
const SECRETS = ['pw-Zt8q1', 'enable-K9v', 'key-pass-7QX', 'pw-new-Hh2', 'enable-new-Y7', ed.private.split('\n')[1], edEncrypted.private.split('\n')[1]];

async function call(path: string, init: Omit<CallInit, 'key'> & { k?: string } = {}): Promise<ApiResult> {
  const r = await apiCall(t, path, { ...init, key: init.k ?? key });
  bodies.push(r.text);
  return r;
}

let deviceSeq = 0;
function seedCredentialDevice(credentialId: number): number {
  const db = t.services.db;
  const templateId = db.prepare('SELECT id FROM templates ORDER BY id LIMIT 1').pluck().get() as number;
  return seedDevice(db, { name: `cred-dev-${++deviceSeq}`, hostname: '192.0.2.1', credential_id: credentialId, template_id: templateId });
}

before(async () => {
  t = await startTestAppliance();
  key = await t.keyFor({ permissions: 'all' });
});
after(() => t.close());

describe('credentials', () => {
  test('empty list: total 0, total_pages 1', async () => {
    const r = await call('/credentials');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { items: [], pagination: { page: 1, limit: 50, total: 0, total_pages: 1, has_next: false, has_prev: false } });
  });

  test('create returns 201 with flags only, encrypts at rest, decrypts for the runner', async () => {
    const r = await call('/credentials', {
      method: 'POST',
      json: { name: '  core-switches ', username: 'backup', password: 'pw-Zt8q1', enable_secret: 'enable-K9v', description: 'ro' },
    });
    assert.equal(r.status, 201);
    assert.deepEqual(Object.keys(r.body).sort(), FIELDS);
    assert.equal(r.body.name, 'core-switches');
    assert.equal(r.body.username, 'backup');
    assert.deepEqual(
      [r.body.has_password, r.body.has_private_key, r.body.has_passphrase, r.body.has_enable_secret, r.body.device_count],
      [true, false, false, true, 0],
    );
    assert.match(r.body.created_at as string, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const row = t.services.db.prepare('SELECT * FROM credentials WHERE id = ?').get(r.body.id) as Record<string, unknown>;
    for (const col of ['password_enc', 'enable_secret_enc']) {
      const blob = row[col] as Buffer;
      assert.ok(Buffer.isBuffer(blob));
      assert.ok(!blob.includes('pw-Zt8q1') && !blob.includes('enable-K9v'), `${col} holds no plaintext`);
      SECRETS.push(blob.toString('base64'), blob.toString('hex'), blob.subarray(29).toString('base64'));
    }
    assert.equal(row.private_key_enc, null);
    assert.deepEqual(getDecryptedCredential(t.services.db, t.services.secrets, r.body.id as number), {
      username: 'backup',
      password: 'pw-Zt8q1',
      private_key: null,
      passphrase: null,
      enable_secret: 'enable-K9v',
    });
    assert.equal(getDecryptedCredential(t.services.db, t.services.secrets, 999_999), undefined);
  });

  test('get by id; 404 for a missing id; 422 for a malformed one', async () => {
    const c = createCredential(t.services.db, SYSTEM_ACTOR, t.services.secrets, { name: 'get-me', username: 'u' });
    const r = await call(`/credentials/${c.id}`);
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body).sort(), FIELDS);
    assert.equal(r.body.has_password, false);
    expectError(await call('/credentials/999999'), 404, 'RESOURCE_NOT_FOUND');
    expectError(await call('/credentials/abc'), 422, 'VALIDATION_ERROR', ['credential_id']);
    expectError(await call('/credentials/-1'), 422, 'VALIDATION_ERROR', ['credential_id']);
  });

  test('names are unique case-insensitively: 400 CREDENTIAL_NAME_EXISTS on create and rename', async () => {
    createCredential(t.services.db, SYSTEM_ACTOR, t.services.secrets, { name: 'Lab-Routers' });
    expectError(await call('/credentials', { method: 'POST', json: { name: 'lab-routers' } }), 400, 'CREDENTIAL_NAME_EXISTS');
    const other = createCredential(t.services.db, SYSTEM_ACTOR, t.services.secrets, { name: 'lab-other' });
    expectError(await call(`/credentials/${other.id}`, { method: 'PUT', json: { name: 'LAB-ROUTERS' } }), 400, 'CREDENTIAL_NAME_EXISTS');
    // Renaming to its own name in another case is allowed.
    const same = await call(`/credentials/${other.id}`, { method: 'PUT', json: { name: 'LAB-OTHER' } });
    assert.equal(same.status, 200);
    assert.equal(same.body.name, 'LAB-OTHER');
  });

  test('body validation: unknown fields, types, empty name, empty secret → 422 with details.errors', async () => {
    expectError(await call('/credentials', { method: 'POST', json: { name: 'x', secret: 'y' } }), 422, 'VALIDATION_ERROR', ['secret']);
    expectError(await call('/credentials', { method: 'POST', json: { name: '   ' } }), 422, 'VALIDATION_ERROR', ['name']);
    expectError(await call('/credentials', { method: 'POST', json: {} }), 422, 'VALIDATION_ERROR', ['name']);
    expectError(await call('/credentials', { method: 'POST', json: { name: 'x', password: '' } }), 422, 'VALIDATION_ERROR', ['password']);
    expectError(await call('/credentials', { method: 'POST', json: { name: 'x', username: 5 } }), 422, 'VALIDATION_ERROR', ['username']);
    expectError(await call('/credentials', { method: 'POST', json: { name: 'x'.repeat(129) } }), 422, 'VALIDATION_ERROR', ['name']);
    expectError(await call('/credentials', { method: 'POST', json: { name: 'a\nb' } }), 422, 'VALIDATION_ERROR', ['name']);
    expectError(await call('/credentials/1', { method: 'PUT', json: { bogus: true } }), 422, 'VALIDATION_ERROR', ['bogus']);
    const res = await t.api('/api/v1/credentials', { method: 'POST', key, body: 'name=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    assert.equal(res.status, 415);
    bodies.push(await res.text());
  });

  test('private keys: parsed with their passphrase; each problem is a 422 naming the field', async () => {
    const ok = await call('/credentials', { method: 'POST', json: { name: 'key-plain', username: 'u', private_key: ed.private } });
    assert.equal(ok.status, 201);
    assert.equal(ok.body.has_private_key, true);
    const enc = await call('/credentials', {
      method: 'POST',
      json: { name: 'key-enc', username: 'u', private_key: edEncrypted.private, passphrase: 'key-pass-7QX' },
    });
    assert.equal(enc.status, 201);
    assert.equal(enc.body.has_passphrase, true);

    const bad = (json: unknown) => call('/credentials', { method: 'POST', json: { name: 'key-bad', ...(json as object) } });
    expectError(await bad({ private_key: edEncrypted.private }), 422, 'VALIDATION_ERROR', ['passphrase']);
    const wrong = await bad({ private_key: edEncrypted.private, passphrase: 'nope' });
    expectError(wrong, 422, 'VALIDATION_ERROR', ['passphrase']);
    assert.match(wrong.body.error!.details.errors![0].message, /wrong passphrase/);
    const garbage = await bad({ private_key: 'not a key' });
    expectError(garbage, 422, 'VALIDATION_ERROR', ['private_key']);
    assert.match(garbage.body.error!.details.errors![0].message, /not a valid OpenSSH or PEM private key/);
    expectError(await bad({ private_key: ed.public }), 422, 'VALIDATION_ERROR', ['private_key']);
    expectError(await bad({ passphrase: 'orphan' }), 422, 'VALIDATION_ERROR', ['passphrase']);
    // A key whose KDF would block the appliance for minutes is refused before it is parsed.
    const started = performance.now();
    const costly = await bad({ private_key: withKdfRounds(edEncrypted.private, 100_000), passphrase: 'key-pass-7QX' });
    expectError(costly, 422, 'VALIDATION_ERROR', ['private_key']);
    assert.match(costly.body.error!.details.errors![0].message, /100000 bcrypt KDF rounds; at most 128/);
    assert.ok(performance.now() - started < 1000);
    const cheap = await bad({ private_key: withKdfRounds(edEncrypted.private, 4), passphrase: 'key-pass-7QX' });
    assert.equal(cheap.status, 201, 'the rewriting helper keeps the key valid');

    // Update: a new passphrase is checked against the stored key; clearing the key clears its passphrase.
    const id = enc.body.id as number;
    expectError(await call(`/credentials/${id}`, { method: 'PUT', json: { passphrase: 'other' } }), 422, 'VALIDATION_ERROR', ['passphrase']);
    expectError(await call(`/credentials/${id}`, { method: 'PUT', json: { passphrase: null } }), 422, 'VALIDATION_ERROR', ['passphrase']);
    const cleared = await call(`/credentials/${id}`, { method: 'PUT', json: { private_key: null } });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.body.has_private_key, false);
    assert.equal(cleared.body.has_passphrase, false);
  });

  test('update: omitted secrets are kept, null clears, a value replaces; other fields change', async () => {
    const c = createCredential(t.services.db, SYSTEM_ACTOR, t.services.secrets, {
      name: 'rotating',
      username: 'old',
      password: 'pw-Zt8q1',
      enable_secret: 'enable-K9v',
      private_key: ed.private,
    });
    const before = t.services.db.prepare('SELECT password_enc FROM credentials WHERE id = ?').pluck().get(c.id) as Buffer;
    const r1 = await call(`/credentials/${c.id}`, { method: 'PUT', json: { username: 'new', description: 'changed' } });
    assert.equal(r1.status, 200);
    assert.deepEqual([r1.body.username, r1.body.description, r1.body.has_password, r1.body.has_enable_secret], ['new', 'changed', true, true]);
    const kept = t.services.db.prepare('SELECT password_enc FROM credentials WHERE id = ?').pluck().get(c.id) as Buffer;
    assert.ok(kept.equals(before), 'an omitted secret keeps the stored ciphertext');

    const r2 = await call(`/credentials/${c.id}`, { method: 'PUT', json: { password: 'pw-new-Hh2', enable_secret: null } });
    assert.equal(r2.status, 200);
    assert.deepEqual([r2.body.has_password, r2.body.has_enable_secret, r2.body.has_private_key], [true, false, true]);
    assert.deepEqual(getDecryptedCredential(t.services.db, t.services.secrets, c.id), {
      username: 'new',
      password: 'pw-new-Hh2',
      private_key: ed.private,
      passphrase: null,
      enable_secret: null,
    });
    const r3 = await call(`/credentials/${c.id}`, { method: 'PUT', json: {} });
    assert.equal(r3.status, 200);
    assert.equal(r3.body.name, 'rotating');
    expectError(await call('/credentials/999999', { method: 'PUT', json: { username: 'x' } }), 404, 'RESOURCE_NOT_FOUND');
  });

  test('device_count and delete: in use → 400 RESOURCE_CREDENTIAL_IN_USE; free → 200 success, then 404', async () => {
    const c = createCredential(t.services.db, SYSTEM_ACTOR, t.services.secrets, { name: 'in-use', password: 'pw-Zt8q1' });
    const devices = [seedCredentialDevice(c.id), seedCredentialDevice(c.id)];
    assert.equal((await call(`/credentials/${c.id}`)).body.device_count, 2);
    const list = await call('/credentials?q=in-use');
    assert.equal((list.body.items as Json[])[0].device_count, 2);
    const refused = await call(`/credentials/${c.id}`, { method: 'DELETE' });
    expectError(refused, 400, 'RESOURCE_CREDENTIAL_IN_USE');
    assert.equal((refused.body.error!.details as { device_count?: number }).device_count, 2);

    for (const id of devices) deleteDevice(t.services.db, SYSTEM_ACTOR, id);
    const ok = await call(`/credentials/${c.id}`, { method: 'DELETE' });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body, { status: 'success' });
    expectError(await call(`/credentials/${c.id}`, { method: 'DELETE' }), 404, 'RESOURCE_NOT_FOUND');
    expectError(await call(`/credentials/${c.id}`), 404, 'RESOURCE_NOT_FOUND');
  });

  test('pagination: order by id, last page, past the end, bad page/limit → 422', async () => {
    for (let i = 0; i < 5; i++) createCredential(t.services.db, SYSTEM_ACTOR, t.services.secrets, { name: `page-${i}` });
    const all = await call('/credentials?limit=100');
    const total = (all.body.pagination as { total: number }).total;
    const ids = (all.body.items as Json[]).map((i) => i.id as number);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
    );
    assert.equal(ids.length, total);

    const lastPage = Math.ceil(total / 2);
    const last = await call(`/credentials?limit=2&page=${lastPage}`);
    assert.deepEqual(last.body.pagination, { page: lastPage, limit: 2, total, total_pages: lastPage, has_next: false, has_prev: true });
    assert.deepEqual(
      (last.body.items as Json[]).map((i) => i.id),
      ids.slice((lastPage - 1) * 2),
    );
    const first = await call('/credentials?limit=2');
    assert.deepEqual(first.body.pagination, { page: 1, limit: 2, total, total_pages: lastPage, has_next: true, has_prev: false });
    const past = await call(`/credentials?limit=2&page=${lastPage + 1}`);
    assert.deepEqual(past.body.items, []);

    for (const qs of ['limit=0', 'limit=101', 'limit=abc', 'limit=1.5']) {
      expectError(await call(`/credentials?${qs}`), 422, 'VALIDATION_ERROR', ['limit']);
    }
    expectError(await call('/credentials?page=0'), 422, 'VALIDATION_ERROR', ['page']);
    expectError(await call('/credentials?page=x&limit=0'), 422, 'VALIDATION_ERROR', ['limit', 'page']);
  });

  test('q filters by name substring, case-insensitively', async () => {
    const r = await call('/credentials?q=PAGE-');
    assert.deepEqual(
      (r.body.items as Json[]).map((i) => i.name),
      ['page-0', 'page-1', 'page-2', 'page-3', 'page-4'],
    );
    const none = await call('/credentials?q=no-such-name');
    assert.deepEqual(none.body.pagination, { page: 1, limit: 50, total: 0, total_pages: 1, has_next: false, has_prev: false });
  });

  test('timestamps follow X-Timezone, else the user preference, else the appliance zone; unknown zone → 422', async () => {
    const c = createCredential(t.services.db, SYSTEM_ACTOR, t.services.secrets, { name: 'tz-check' });
    const createdAt = t.services.db.prepare('SELECT created_at FROM credentials WHERE id = ?').pluck().get(c.id) as number;
    const tokyo = await call(`/credentials/${c.id}`, { headers: { 'X-Timezone': 'Asia/Tokyo' } });
    assert.equal(tokyo.body.created_at, formatTimestamp(createdAt, 'Asia/Tokyo'));
    assert.equal((await call(`/credentials/${c.id}`)).body.created_at, formatTimestamp(createdAt, t.services.config.server.timezone));
    const nyKey = await t.keyFor({ permissions: ['credentials.view'], timezone: 'America/New_York' });
    const ny = await call(`/credentials?q=tz-check`, { k: nyKey });
    assert.equal((ny.body.items as Json[])[0].created_at, formatTimestamp(createdAt, 'America/New_York'));
    const override = await call(`/credentials/${c.id}`, { k: nyKey, headers: { 'X-Timezone': 'Asia/Tokyo' } });
    assert.equal(override.body.updated_at, formatTimestamp(createdAt, 'Asia/Tokyo'));
    expectError(await call(`/credentials/${c.id}`, { headers: { 'X-Timezone': 'Mars/Olympus' } }), 422, 'VALIDATION_ERROR', ['X-Timezone']);
  });

  test('no response body ever carried a secret or its ciphertext', () => {
    assert.ok(bodies.length > 40);
    for (const body of bodies) {
      for (const s of SECRETS) assert.ok(!body.includes(s), `a response leaked ${s.slice(0, 8)}…`);
      assert.doesNotMatch(body, /_enc"|PRIVATE KEY/);
    }
  });
});
