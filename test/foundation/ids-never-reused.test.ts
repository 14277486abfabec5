// Record ids are never handed out twice: delete the newest (or everything) and create again, through the API.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { rawState } from '../helpers/seed';

let t: TestAppliance;
let key: string;

before(async () => {
  t = await startTestAppliance();
  key = await t.keyFor({ permissions: 'all' });
});
after(() => t.close());

async function call(
  path: string,
  method = 'GET',
  json?: unknown,
): Promise<{ status: number; body: { id?: number; error?: { code: string } } & Record<string, unknown> }> {
  const res = await t.api(`/api/v1${path}`, { method, json, key });
  return { status: res.status, body: (await res.json()) as { id?: number } & Record<string, unknown> };
}

async function create(kind: string, json: unknown): Promise<number> {
  const r = await call(`/${kind}`, 'POST', json);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.id!;
}

async function remove(kind: string, id: number): Promise<void> {
  const r = await call(`/${kind}/${id}`, 'DELETE');
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

test('devices, groups, credentials and templates: a deleted id, even the newest, is never given to a new record', async () => {
  let n = 0;
  const bodies: Record<string, () => unknown> = {
    groups: () => ({ name: `g${++n}` }),
    credentials: () => ({ name: `c${++n}`, username: 'u', password: 'p' }),
    templates: () => ({ name: `t${++n}`, vendor: 'ACME OS', commands: ['show config'] }),
  };
  const credential_id = await create('credentials', bodies.credentials());
  const template_id = await create('templates', bodies.templates());
  bodies.devices = () => ({ name: `d${++n}`, hostname: '192.0.2.1', credential_id, template_id });

  for (const kind of ['devices', 'groups', 'credentials', 'templates']) {
    const seen: number[] = [];
    const a = await create(kind, bodies[kind]());
    const b = await create(kind, bodies[kind]());
    seen.push(a, b);
    // The newest is deleted: SQLite's default would hand its id to the next record.
    await remove(kind, b);
    const c = await create(kind, bodies[kind]());
    assert.ok(c > b, `${kind}: new id ${c} after deleting ${b}`);
    seen.push(c);
    // An integration still holding the old id gets a 404, not somebody else's record.
    assert.equal((await call(`/${kind}/${b}`)).status, 404);

    // Delete every record this test made (the shared credential and template stay, devices still use them).
    for (const id of [a, c]) await remove(kind, id);
    const d = await create(kind, bodies[kind]());
    assert.ok(d > Math.max(...seen), `${kind}: after deleting all, the new id ${d} is above every earlier one (${seen.join(', ')})`);
    await remove(kind, d);
  }

  // Delete absolutely every device: ids still do not restart at 1.
  const devices = (await call('/devices?limit=100')).body as unknown as { items: { id: number }[] };
  for (const d of devices.items) await remove('devices', d.id);
  const fresh = await create('devices', bodies.devices());
  assert.ok(fresh > 1, `first device after deleting all: ${fresh}`);
});

test('users, roles and API keys: ids are not reused after a delete either', async () => {
  const db = t.services.db;
  const idOf = (sql: string, v: string) => db.prepare(sql).pluck().get(v) as number;
  await t.keyFor({ permissions: ['devices.view'], username: 'reuse1' });
  const user1 = idOf('SELECT id FROM users WHERE username = ?', 'reuse1');
  const role1 = idOf('SELECT id FROM roles WHERE name = ?', 'role_reuse1');
  const key1 = idOf('SELECT max(id) FROM api_keys WHERE user_id = (SELECT id FROM users WHERE username = ?)', 'reuse1');
  // No door deletes users, roles or keys yet; a row removed by any means must still leave its id unused.
  rawState(db, 'no door deletes users yet', 'DELETE FROM users WHERE id = ?', user1);
  rawState(db, 'no door deletes roles yet', 'DELETE FROM roles WHERE id = ?', role1);
  assert.equal(db.prepare('SELECT count(*) FROM api_keys WHERE id = ?').pluck().get(key1), 0, 'the key went with its user');

  await t.keyFor({ permissions: ['devices.view'], username: 'reuse2' });
  assert.ok(idOf('SELECT id FROM users WHERE username = ?', 'reuse2') > user1);
  assert.ok(idOf('SELECT id FROM roles WHERE name = ?', 'role_reuse2') > role1);
  assert.ok(idOf('SELECT max(id) FROM api_keys WHERE user_id = (SELECT id FROM users WHERE username = ?)', 'reuse2') > key1);
});
