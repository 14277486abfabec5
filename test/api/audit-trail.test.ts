// Every mutation of the public API leaves exactly one audit row naming the key, the request id and the change, with no secret in it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedInventory, seedInventoryDevice } from './backups.seed';
import { seedCredential, seedGroup, seedTemplate } from '../helpers/seed';
import { SPEC_ENDPOINTS } from './openapi.endpoints';

interface AuditRecord {
  actor: string;
  action: string;
  target: string;
  door: string;
  door_ref: string | null;
  request_id: string | null;
  changes: string;
  details: string;
}

const SECRET = 'audit-trail-secret-9f3k';

describe('audit trail of the public API', () => {
  let t: TestAppliance;
  let key: string;
  let ids: Record<string, number>;
  let doomed: Record<string, number>;

  before(async () => {
    t = await startTestAppliance();
    const { db } = t.services;
    const inv = seedInventory(db);
    doomed = {
      device_id: seedInventoryDevice(db, { name: 'audit-doomed-device', credentialId: inv.credentialId, templateId: inv.templateId, groupId: inv.groups.A }),
      group_id: seedGroup(db, 'audit-doomed-group'),
      credential_id: seedCredential(db, null, { name: 'audit-doomed-credential' }),
      template_id: seedTemplate(db, 'audit-doomed-template'),
    };
    ids = { device_id: inv.devices.dA, group_id: inv.groups.B, credential_id: inv.credentialId, template_id: inv.templateId };
    key = await t.keyFor({ permissions: 'all', username: 'auditor-key-owner' });
  });
  after(() => t.close());

  const bodies: Record<string, () => unknown> = {
    'POST /devices': () => ({ name: 'audit-device', hostname: '192.0.2.10', credential_id: ids.credential_id, template_id: ids.template_id }),
    'PUT /devices/{device_id}': () => ({ description: 'changed for the audit trail' }),
    'POST /groups': () => ({ name: 'audit-group' }),
    'PUT /groups/{group_id}': () => ({ description: 'changed for the audit trail' }),
    'POST /credentials': () => ({ name: 'audit-credential', username: 'backup', password: SECRET, enable_secret: SECRET }),
    'PUT /credentials/{credential_id}': () => ({ password: SECRET, description: 'rotated' }),
    'POST /templates': () => ({ name: 'audit-template', vendor: 'Test', commands: ['show running-config'] }),
    'PUT /templates/{template_id}': () => ({ description: 'changed for the audit trail' }),
  };

  const mutations = SPEC_ENDPOINTS.filter((e) => e.method !== 'GET');

  for (const e of mutations) {
    test(`${e.method} ${e.path}: one audit row with the key, the request id and no secret`, async () => {
      const values = e.method === 'DELETE' ? doomed : ids;
      const path = '/api/v1' + e.path.replace(/\{(\w+)\}/g, (_, n: string) => String(values[n]));
      const body = bodies[`${e.method} ${e.path}`]?.();
      const res = await t.api(path, { method: e.method, key, ...(body !== undefined ? { json: body } : {}) });
      assert.ok(res.status < 300, `${e.method} ${path}: ${res.status} ${await res.text()}`);
      const requestId = res.headers.get('x-request-id');
      const rows = t.services.db.prepare('SELECT * FROM audit_log WHERE request_id = ?').all(requestId) as AuditRecord[];
      assert.equal(rows.length, 1, `one row for request ${requestId}: ${JSON.stringify(rows)}`);
      const [row] = rows;
      assert.equal(row.actor, 'auditor-key-owner');
      assert.equal(row.door, 'api');
      assert.match(row.door_ref ?? '', /^key \d+$/);
      assert.match(row.action, new RegExp(`^${e.path.split('/')[1].replace(/s$/, '')}\\.`), `action ${row.action}`);
      assert.ok(!JSON.stringify(row).includes(SECRET), 'no secret in the row');
    });
  }

  test('a refused change leaves no audit row of a change', async () => {
    const before = t.services.db.prepare('SELECT count(*) FROM audit_log').pluck().get() as number;
    const narrow = await t.keyFor({ permissions: ['devices.view'] });
    const res = await t.api(`/api/v1/devices/${ids.device_id}`, { method: 'PUT', key: narrow, json: { description: 'nope' } });
    assert.equal(res.status, 403);
    const after = t.services.db
      .prepare("SELECT count(*) FROM audit_log WHERE action NOT LIKE 'user.%' AND action NOT LIKE 'role.%' AND action NOT LIKE 'apikey.%'")
      .pluck()
      .get() as number;
    assert.ok(after <= before, 'nothing recorded as changed');
  });
});
