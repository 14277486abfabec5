// PUT /api/v1/notifications/channels/{name} through real HTTP: partial update, secrets write-only, the outbound policy re-checked, 404/409/422/403, audit.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { channelSecrets, findChannel } from '../../src/features/notifications/notifications.service';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { apiCall, expectError, type Json } from '../helpers/api';
import { seedGroup } from '../helpers/seed';

const HMAC = 'hmac-secret-value-1';

describe('changing a notification channel through the API', () => {
  let t: TestAppliance;
  let admin: string;
  let group: number;
  const call = (p: string, init: Parameters<typeof apiCall>[2] = {}) => apiCall(t, p, { key: admin, ...init });
  const put = (name: string, json: Json, key = admin) => apiCall(t, `/notifications/channels/${name}`, { key, method: 'PUT', json });
  const stored = (name: string) => channelSecrets(t.services.secrets, findChannel(t.services.db, name));
  const add = async (json: Json) => assert.equal((await call('/notifications/channels', { method: 'POST', json })).status, 201);

  before(async () => {
    t = await startTestAppliance();
    admin = await t.keyFor({ permissions: 'all' });
    group = seedGroup(t.services.db, 'chan-site');
    await add({ name: 'hook', type: 'webhook', url: 'https://hooks.example.net/a', secret: HMAC });
    await add({ name: 'other', type: 'syslog', url: 'udp://192.0.2.10:514' });
  });
  after(() => t?.close());

  test('omitted fields keep their value; the secret is kept, replaced or cleared, and never returned', async () => {
    const moved = await put('hook', { url: 'https://hooks.example.net/b' });
    assert.equal(moved.status, 200, moved.text);
    assert.deepEqual([moved.body.settings.url, moved.body.has_secret, moved.body.type], ['https://hooks.example.net/b', true, 'webhook']);
    assert.equal(stored('hook').hmac_secret, HMAC, 'the secret stays when not given');
    const rekeyed = await put('hook', { secret: 'hmac-secret-value-2' });
    assert.equal(rekeyed.status, 200, rekeyed.text);
    assert.ok(!rekeyed.text.includes('hmac-secret-value-2'), 'never returned');
    assert.equal(stored('hook').hmac_secret, 'hmac-secret-value-2');
    assert.equal((await call('/notifications/channels/hook')).body.settings.url, 'https://hooks.example.net/b', 'the URL stayed');
    const cleared = await put('hook', { secret: null });
    assert.equal(cleared.body.has_secret, false, cleared.text);
    assert.deepEqual(stored('hook'), {});
  });

  test('each change is audited once, a secret only as "changed"', async () => {
    await put('hook', { url: 'https://hooks.example.net/c', secret: 'hmac-secret-value-3' });
    const audit = await call('/audit?action=notification_channel.update');
    const last = audit.body.items[0];
    assert.deepEqual(last.changes.settings, { before: { url: 'https://hooks.example.net/b' }, after: { url: 'https://hooks.example.net/c' } });
    assert.equal(last.changes.secret, 'changed');
    assert.ok(!audit.text.includes('hmac-secret-value'), 'no secret in the trail');
  });

  test('the result is checked as a new channel: a field that is wrong or a destination the policy refuses is a 422, and nothing changes', async () => {
    expectError(await put('hook', { url: 'http://127.0.0.1:9/x' }), 422, 'VALIDATION_ERROR', ['url']);
    expectError(await put('hook', { url: 'ftp://hooks.example.net/' }), 422, 'VALIDATION_ERROR', ['url']);
    expectError(await put('other', { url: 'https://192.0.2.10/' }), 422, 'VALIDATION_ERROR', ['url']);
    expectError(await put('hook', { type: 'slack' }), 422, 'VALIDATION_ERROR');
    expectError(await put('hook', { name: 'no spaces' }), 422, 'VALIDATION_ERROR', ['name']);
    assert.equal((await call('/notifications/channels/hook')).body.settings.url, 'https://hooks.example.net/c');
  });

  test('a Slack channel takes a new webhook URL as its secret', async () => {
    await add({ name: 'chat', type: 'slack', url: 'https://hooks.slack.example.net/T1/B1/old' });
    const r = await put('chat', { url: 'https://hooks.slack.example.net/T1/B1/new' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.settings, {});
    assert.ok(!r.text.includes('/T1/B1/'), 'the webhook URL is a secret');
    assert.equal(stored('chat').url, 'https://hooks.slack.example.net/T1/B1/new');
  });

  test('a rename keeps the rules that use the channel; a name in use is 409; a missing channel is 404', async () => {
    const rule = await call('/notifications/rules', { method: 'POST', json: { name: 'r1', events: ['config_changed'], channels: ['other'], groups: [group] } });
    assert.equal(rule.status, 201, rule.text);
    expectError(await put('other', { name: 'hook' }), 409, 'CONFLICT');
    const renamed = await put('other', { name: 'syslog-noc' });
    assert.equal(renamed.status, 200, renamed.text);
    expectError(await call('/notifications/channels/other'), 404, 'RESOURCE_NOT_FOUND');
    assert.deepEqual((await call('/notifications/rules/r1')).body.channel_ids, [renamed.body.id]);
    expectError(await put('no-such-channel', { url: 'udp://192.0.2.11:514' }), 404, 'RESOURCE_NOT_FOUND');
  });

  test('a key without settings.update, or with a device-group scope, may not retarget a channel', async () => {
    const reader = await t.keyFor({ permissions: ['settings.view'] });
    assert.equal(
      expectError(await put('hook', { url: 'https://hooks.example.net/d' }, reader), 403, 'PERMISSION_DENIED').details.permission,
      'settings.update',
    );
    const scoped = await t.keyFor({ permissions: ['settings.view', 'settings.update'], groups: [group] });
    expectError(await put('hook', { url: 'https://hooks.example.net/d' }, scoped), 403, 'PERMISSION_DENIED');
    assert.equal((await call('/notifications/channels/hook')).body.settings.url, 'https://hooks.example.net/c');
  });

  test('the operation is in the OpenAPI document', async () => {
    const doc = (await call('/openapi.json')).body;
    assert.equal(doc.paths['/notifications/channels/{name}'].put.operationId, 'updateNotificationChannel');
  });
});
