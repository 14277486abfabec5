// Where the published document and the server must agree: character counts, empty and zero query values, id maxima, rules in the schema, a scoped user's default credential usage.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { apiCall, expectError, type Json } from '../helpers/api';

let t: TestAppliance;
let admin: string;
let doc: Json;

before(async () => {
  t = await startTestAppliance();
  admin = await t.keyFor({ permissions: 'all' });
  doc = (await apiCall(t, '/openapi.json')).body;
});
after(async () => {
  await t?.close();
});

const EMOJI = '\u{1F600}';
const ASTRAL = '\u{10348}';
const schemas = () => doc.components.schemas as Record<string, Json>;

test('template text limits count characters (code points), as the document and the other resources do', async () => {
  const body = (extra: Record<string, unknown>) => ({ name: `t-${Math.random().toString(36).slice(2, 10)}`, vendor: 'X', commands: ['show run'], ...extra });
  // 128 astral characters for a 128-character vendor; 2,000 emoji for a 2,000-character description; a 512-character command.
  let r = await apiCall(t, '/templates', { method: 'POST', key: admin, json: body({ vendor: ASTRAL.repeat(128), description: EMOJI.repeat(2000) }) });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal([...(r.body.vendor as string)].length, 128);
  r = await apiCall(t, '/templates', { method: 'POST', key: admin, json: body({ commands: [`show ${EMOJI.repeat(507)}`] }) });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  r = await apiCall(t, '/templates', { method: 'POST', key: admin, json: body({ strip_patterns: [`^${EMOJI.repeat(511)}`] }) });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  // One character more is refused, naming the field.
  expectError(await apiCall(t, '/templates', { method: 'POST', key: admin, json: body({ vendor: ASTRAL.repeat(129) }) }), 422, 'VALIDATION_ERROR', ['vendor']);
  expectError(await apiCall(t, '/templates', { method: 'POST', key: admin, json: body({ description: EMOJI.repeat(2001) }) }), 422, 'VALIDATION_ERROR', [
    'description',
  ]);
  // A group's description counts the same way.
  r = await apiCall(t, '/groups', { method: 'POST', key: admin, json: { name: 'emoji-group', description: EMOJI.repeat(2000) } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  expectError(
    await apiCall(t, '/groups', { method: 'POST', key: admin, json: { name: 'emoji-group-2', description: EMOJI.repeat(2001) } }),
    422,
    'VALIDATION_ERROR',
    ['description'],
  );
});

test('an empty page or limit is a 422, as the document says; so is group_id=0 (minimum 1)', async () => {
  for (const q of ['page=', 'limit=', 'page=&limit=10', 'page=%20']) {
    expectError(await apiCall(t, `/groups?${q}`, { key: admin }), 422, 'VALIDATION_ERROR');
    expectError(await apiCall(t, `/devices?${q}`, { key: admin }), 422, 'VALIDATION_ERROR');
  }
  expectError(await apiCall(t, '/devices?group_id=0', { key: admin }), 422, 'VALIDATION_ERROR', ['group_id']);
  expectError(await apiCall(t, '/devices?group_id=00', { key: admin }), 422, 'VALIDATION_ERROR', ['group_id']);
  expectError(await apiCall(t, '/devices?group_id=9007199254740992', { key: admin }), 422, 'VALIDATION_ERROR', ['group_id']);
  expectError(await apiCall(t, '/groups?parent_id=0', { key: admin }), 422, 'VALIDATION_ERROR', ['parent_id']);
  assert.equal((await apiCall(t, '/devices?group_id=9007199254740991', { key: admin })).status, 200);
  assert.equal((await apiCall(t, '/groups?page=1&limit=1', { key: admin })).status, 200);
  const param = (doc.paths['/devices'].get.parameters as Json[]).find((p) => p.name === 'group_id');
  assert.deepEqual([param?.schema.minimum, param?.schema.maximum], [1, Number.MAX_SAFE_INTEGER]);
});

test('id fields in bodies have the documented maximum 2^53-1, and the server holds to it', async () => {
  const s = schemas();
  const idOf = (schema: Json, field: string): Json => {
    const p = schema.properties[field] as Json;
    // An id that may also be "auto" (detection, DeviceCreate) is an anyOf: its integer branch carries the bounds.
    const branch = (p.anyOf as Json[] | undefined)?.find((b) => b.type === 'integer');
    return branch ?? p.items ?? p;
  };
  for (const [schema, field] of [
    ['GroupCreate', 'parent_id'],
    ['GroupUpdate', 'parent_id'],
    ['DeviceCreate', 'group_id'],
    ['DeviceCreate', 'credential_id'],
    ['DeviceCreate', 'template_id'],
    ['DeviceUpdate', 'group_id'],
    ['CredentialCreate', 'group_ids'],
    ['CredentialUpdate', 'group_ids'],
  ] as const) {
    const id = idOf(s[schema], field);
    assert.equal(id.maximum, Number.MAX_SAFE_INTEGER, `${schema}.${field} documents its maximum`);
    assert.equal(id.minimum, 1, `${schema}.${field} documents its minimum`);
  }
  const big = Number.MAX_SAFE_INTEGER; // the largest accepted: a 422 saying the group does not exist, not "too big"
  let r = await apiCall(t, '/groups', { method: 'POST', key: admin, json: { name: 'max-parent', parent_id: big } });
  assert.equal(r.status, 422);
  assert.match(JSON.stringify(r.body.error?.details), /not exist|does not/);
  r = await apiCall(t, '/groups', { method: 'POST', key: admin, json: { name: 'max-parent', parent_id: 2 ** 53 } });
  expectError(r, 422, 'VALIDATION_ERROR', ['parent_id']);
  assert.match(JSON.stringify(r.body), /2\^53-1/);
});

test('rules the server applies are in the schema: description control characters, one non-blank command line, template names', async () => {
  const s = schemas();
  const pattern = (p: Json) => new RegExp(p.pattern as string, 'u');
  const desc = s.TemplateCreate.properties.description as Json;
  assert.ok(desc.pattern, 'a description has a pattern');
  assert.ok(pattern(desc).test('two\nlines\tand a tab'));
  assert.ok(!pattern(desc).test('bell\u0007'));
  assert.ok(!pattern(desc).test('c1\u0085'));
  assert.equal((s.GroupCreate.properties.description as Json).pattern, desc.pattern);
  assert.match(desc.description as string, /control characters/);

  const cmd = (s.TemplateCreate.properties.commands as Json).items as Json;
  assert.ok(cmd.pattern, 'a command has a pattern');
  assert.ok(pattern(cmd).test('show running-config'));
  for (const bad of ['   ', 'show\nrun', 'show\rrun', '\t']) assert.ok(!pattern(cmd).test(bad), JSON.stringify(bad));
  assert.match(cmd.description as string, /one non-blank line/);
  assert.equal(((s.TemplateCreate.properties.pre_commands as Json).items as Json).pattern, cmd.pattern);

  const name = s.TemplateCreate.properties.name as Json;
  assert.ok(name.pattern, 'a template name has a pattern');
  for (const good of ['cisco-ios', 'a.b_c-1', '9x']) assert.ok(pattern(name).test(good), good);
  for (const bad of ['Cisco', '-x', 'a b', 'é']) assert.ok(!pattern(name).test(bad), bad);

  // The server agrees with each pattern: what it refuses, the document refuses.
  const body = { name: 'ok-name', vendor: 'X', commands: ['show run'] };
  expectError(await apiCall(t, '/templates', { method: 'POST', key: admin, json: { ...body, description: 'bell\u0007' } }), 422, 'VALIDATION_ERROR', [
    'description',
  ]);
  expectError(await apiCall(t, '/templates', { method: 'POST', key: admin, json: { ...body, commands: ['  '] } }), 422, 'VALIDATION_ERROR', ['commands.0']);
  expectError(await apiCall(t, '/templates', { method: 'POST', key: admin, json: { ...body, name: 'Upper' } }), 422, 'VALIDATION_ERROR', ['name']);
});

test("a scoped user's new credential without group_ids is usable in the user's own groups, subgroups by inheritance, not a snapshot", async () => {
  const post = async (path: string, json: unknown, key = admin) => {
    const r = await apiCall(t, path, { method: 'POST', key, json });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body;
  };
  const region = (await post('/groups', { name: 'Region' })).id as number;
  const site = (await post('/groups', { name: 'Site', parent_id: region })).id as number;
  const lead = await t.keyFor({
    permissions: ['credentials.create', 'credentials.view', 'devices.create', 'devices.view', 'templates.view'],
    groups: [region],
  });
  const cred = await post('/credentials', { name: 'region-cred', password: 'pw' }, lead);
  assert.deepEqual(cred.group_ids, [region], 'the groups assigned to the user, not a copy of their subgroups');

  const template = ((await apiCall(t, '/templates?limit=1', { key: admin })).body.items as Json[])[0].id as number;
  const device = (group_id: number, name: string) =>
    apiCall(t, '/devices', { method: 'POST', key: admin, json: { name, hostname: '192.0.2.1', group_id, credential_id: cred.id, template_id: template } });
  // A subgroup made later is covered; one moved out of the region is not.
  const later = (await post('/groups', { name: 'Later', parent_id: region })).id as number;
  assert.equal((await device(later, 'dev-later')).status, 201);
  assert.equal((await apiCall(t, `/groups/${site}`, { method: 'PUT', key: admin, json: { parent_id: null } })).status, 200);
  expectError(await device(site, 'dev-moved'), 422, 'VALIDATION_ERROR', ['credential_id']);
});
