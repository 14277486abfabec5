// Collectors through the public API over real HTTP: enrolment tokens (shown once, listed without their secret, revoked),
// revoking and moving a collector, zones on devices and groups; the policy's guards, the audit rows, and the CLI's
// doors giving the same results (the same service functions).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateCollectorKeys } from '../../src/lib/collector-protocol';
import { runCliAsync, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedGroup } from '../helpers/seed';
import { enrol, enrolBody, postEnrol, signedPost } from '../collectors/harness';
import type { Json } from '../helpers/api';

describe('collectors API', () => {
  let t: TestAppliance;
  let admin: string;
  let viewer: string;
  let editor: string;
  let scoped: string;
  let credential: number;
  let template: number;
  let group: number;

  const db = () => t.services.db;
  const call = async (path: string, key: string, method = 'GET', json?: unknown): Promise<{ status: number; body: Json }> => {
    const res = await t.api(`/api/v1${path}`, { method, key, ...(json !== undefined ? { json } : {}) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const audit = (action: string) =>
    db().prepare('SELECT actor, door, target, changes, details FROM audit_log WHERE action = ? ORDER BY id').all(action) as {
      actor: string;
      door: string;
      target: string;
      changes: string | null;
      details: string;
    }[];
  const cli = (...args: string[]) => runCliAsync([...args, '--data-dir', t.services.dataDir]);

  before(async () => {
    t = await startTestAppliance();
    credential = seedCredential(db(), t.services.secrets, { name: 'zone-cred', username: 'backup', password: 'pw-zone-api-1' });
    template = seedBuiltinTemplate(db(), 'frr');
    group = seedGroup(db(), 'branch-sites');
    [admin, viewer, editor, scoped] = await Promise.all([
      t.keyFor({ permissions: 'all' }),
      t.keyFor({ permissions: ['collectors.view', 'devices.view', 'groups.view'] }),
      t.keyFor({ permissions: ['devices.view', 'devices.update', 'devices.create', 'groups.view', 'groups.update', 'credentials.view'] }),
      t.keyFor({ permissions: ['collectors.view', 'collectors.manage'], groups: [group] }),
    ]);
  });
  after(() => t.close());

  test('a token created through the API is shown once, enrols one collector, and is listed without its secret', async () => {
    const made = await call('/collectors/tokens', admin, 'POST', { zone: 'branch-7', hours: 2 });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const { id, token, zone } = made.body as { id: string; token: string; zone: string };
    assert.match(token, /^cvc_/);
    assert.match(id, /^[0-9a-f]{16}$/);
    assert.equal(zone, 'branch-7');

    const row = audit('collector.token_create').at(-1)!;
    assert.equal(row.door, 'api');
    assert.ok(!JSON.stringify(row).includes(token.slice(4)), 'no token in the audit row');

    const enrolled = await postEnrol(t, enrolBody(token, 'col-api-7', generateCollectorKeys()));
    assert.equal(enrolled.status, 201);
    const { collector_id } = (await enrolled.json()) as { collector_id: number };

    const listed = await call('/collectors/tokens?limit=100', admin);
    assert.equal(listed.status, 200);
    assert.deepEqual(Object.keys(listed.body.pagination as object).sort(), ['has_next', 'has_prev', 'limit', 'page', 'total', 'total_pages']);
    const mine = (listed.body.items as Json[]).find((i) => i.id === id);
    assert.equal(mine?.state, 'used');
    assert.equal(mine?.collector_id, collector_id);
    assert.equal(mine?.zone, 'branch-7');
    assert.ok(!JSON.stringify(listed.body).includes(token.slice(4)), 'the list never shows a token');
  });

  test('an unused token can be revoked (it then enrols nothing); a used one is 409, an unknown one 404, a malformed id 422', async () => {
    const made = await call('/collectors/tokens', admin, 'POST', { zone: 'branch-8' });
    const { id, token } = made.body as { id: string; token: string };
    assert.equal((await call(`/collectors/tokens/${id}`, admin, 'DELETE')).body.status, 'success');
    assert.equal(audit('collector.token_revoke').at(-1)?.door, 'api');
    assert.equal((await postEnrol(t, enrolBody(token, 'col-too-late', generateCollectorKeys()))).status, 401, 'a revoked token enrols nothing');
    assert.equal((await call(`/collectors/tokens/${id}`, admin, 'DELETE')).status, 404);

    const used = (await call('/collectors/tokens?limit=100', admin)).body.items as Json[];
    const usedId = used.find((i) => i.state === 'used')!.id as string;
    const conflict = await call(`/collectors/tokens/${usedId}`, admin, 'DELETE');
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.error?.code, 'CONFLICT');
    assert.equal((await call('/collectors/tokens/not-hex', admin, 'DELETE')).status, 422);
    const bad = await call('/collectors/tokens', admin, 'POST', { zone: 'bad zone!' });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.error?.details.errors?.[0].field, 'zone');
  });

  test('a collector revoked through the API is refused at once; moving it to another zone is audited', async () => {
    const c = await enrol(t, 'branch-9', 'col-api-9');
    const moved = await call(`/collectors/${c.id}`, admin, 'PUT', { zone: 'branch-10' });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.equal(moved.body.zone, 'branch-10');
    const row = audit('collector.zone').at(-1)!;
    assert.equal(row.door, 'api');
    assert.deepEqual(JSON.parse(row.changes!), { zone: { before: 'branch-9', after: 'branch-10' } });
    assert.equal((await call(`/collectors/${c.id}`, admin, 'PUT', { zone: '-no' })).status, 422);

    assert.equal((await signedPost(t, c, '/lease', { max: 1 })).status, 200);
    const revoked = await call(`/collectors/${c.id}/revoke`, admin, 'POST', {});
    assert.equal(revoked.status, 200);
    assert.equal(revoked.body.state, 'revoked');
    assert.equal(audit('collector.revoke').at(-1)?.door, 'api');
    assert.equal((await signedPost(t, c, '/lease', { max: 1 })).status, 401, 'its key is refused');
    assert.equal((await call('/collectors/999999/revoke', admin, 'POST', {})).status, 404);

    const list = await call('/collectors?limit=1', viewer);
    assert.equal(list.status, 200);
    assert.equal((list.body.items as Json[]).length, 1);
    assert.equal(list.body.pagination.limit, 1);
  });

  test('managing needs collectors.manage and the scope all; viewing alone manages nothing', async () => {
    const c = await enrol(t, 'branch-11', 'col-api-11');
    const tokenId = ((await call('/collectors/tokens', admin, 'POST', { zone: 'branch-11' })).body as { id: string }).id;
    for (const key of [viewer, scoped]) {
      for (const [path, method, body] of [
        ['/collectors/tokens', 'POST', { zone: 'branch-11' }],
        ['/collectors/tokens', 'GET', undefined],
        [`/collectors/tokens/${tokenId}`, 'DELETE', undefined],
        [`/collectors/${c.id}/revoke`, 'POST', {}],
        [`/collectors/${c.id}`, 'PUT', { zone: 'elsewhere' }],
      ] as const) {
        const r = await call(path, key, method, body);
        assert.equal(r.status, 403, `${method} ${path}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error?.code, 'PERMISSION_DENIED');
      }
    }
    assert.equal((await call('/collectors', viewer)).status, 200);
    assert.equal((await call(`/collectors?limit=100`, admin)).body.items.find((i: Json) => i.id === c.id).state, 'online', 'not revoked');
  });

  test('a device’s zone: read, created, changed (audited), refused without collectors.manage unless unchanged, validated', async () => {
    const made = await call('/devices', admin, 'POST', {
      name: 'zoned-1',
      hostname: '192.0.2.71',
      credential_id: credential,
      template_id: template,
      group_id: group,
      zone: 'branch-7',
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(made.body.zone, 'branch-7');
    const id = made.body.id as number;
    assert.equal((await call(`/devices/${id}`, viewer)).body.zone, 'branch-7');
    assert.deepEqual(JSON.parse(audit('device.zone').at(-1)!.changes!), { zone: { before: null, after: 'branch-7' } });

    const refused = await call(`/devices/${id}`, editor, 'PUT', { zone: 'branch-8' });
    assert.equal(refused.status, 403);
    assert.match(refused.body.error?.message ?? '', /needs the permission collectors\./);
    const same = await call(`/devices/${id}`, editor, 'PUT', { zone: 'branch-7', description: 'written back' });
    assert.equal(same.status, 200, 'writing back the zone it has needs no collectors.manage');
    assert.equal(same.body.description, 'written back');
    const plain = await call('/devices', editor, 'POST', { name: 'plain-1', hostname: '192.0.2.72', credential_id: credential, template_id: template });
    assert.equal(plain.status, 201, 'a device without a zone needs no collectors.manage');
    assert.equal(plain.body.zone, null, 'default: the central appliance');

    const back = await call(`/devices/${id}`, admin, 'PUT', { zone: null });
    assert.equal(back.status, 200);
    assert.equal(back.body.zone, null);
    const rows = audit('device.zone').filter((r) => r.target === `device ${id}`);
    assert.deepEqual(
      rows.map((r) => [r.door, JSON.parse(r.changes!)]),
      [
        ['api', { zone: { before: null, after: 'branch-7' } }],
        ['api', { zone: { before: 'branch-7', after: null } }],
      ],
    );
    const invalid = await call(`/devices/${id}`, admin, 'PUT', { zone: 'no spaces' });
    assert.equal(invalid.status, 422);
    assert.equal(invalid.body.error?.details.errors?.[0].field, 'zone');
  });

  test('a group’s zone: created, changed, cleared; the change needs collectors.manage', async () => {
    const made = await call('/groups', admin, 'POST', { name: 'zoned-group', zone: 'branch-12' });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(made.body.zone, 'branch-12');
    const id = made.body.id as number;
    assert.equal((await call(`/groups/${id}`, editor, 'PUT', { zone: null })).status, 403);
    const cleared = await call(`/groups/${id}`, admin, 'PUT', { zone: null });
    assert.equal(cleared.body.zone, null);
    assert.equal((await call(`/groups/${id}`, viewer)).body.zone, null);
    assert.deepEqual(
      audit('group.zone')
        .filter((r) => r.target === `group ${id}`)
        .map((r) => JSON.parse(r.changes!)),
      [{ zone: { before: null, after: 'branch-12' } }, { zone: { before: 'branch-12', after: null } }],
    );
  });

  test('the CLI and the API give the same: a token made by one is listed by the other, a zone set by the CLI is read by the API', async () => {
    const made = (await call('/collectors/tokens', admin, 'POST', { zone: 'branch-cli' })).body as { id: string };
    const c = await enrol(t, 'branch-cli', 'col-cli');
    const [listed, moved] = await Promise.all([
      cli('collector', 'token', 'list', '--json'),
      cli('collector', 'zone', '--collector', 'col-cli', '--zone', 'branch-cli-2'),
    ]);
    assert.equal(listed.status, 0, listed.stderr);
    const tokens = JSON.parse(listed.stdout) as { id: string; state: string }[];
    assert.equal(tokens.find((x) => x.id === made.id)?.state, 'valid');
    assert.ok(!listed.stdout.includes('cvc_'), 'no token in the CLI list');
    assert.equal(moved.status, 0, moved.stderr);
    assert.equal((await call('/collectors?limit=100', viewer)).body.items.find((i: Json) => i.id === c.id).zone, 'branch-cli-2');
    assert.equal(audit('collector.zone').at(-1)?.door, 'cli');

    const revoked = await cli('collector', 'token', 'revoke', made.id);
    assert.equal(revoked.status, 0, revoked.stderr);
    assert.equal(
      ((await call('/collectors/tokens?limit=100', admin)).body.items as Json[]).some((i) => i.id === made.id),
      false,
    );
  });
});
