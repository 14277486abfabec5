// Template session knowledge and output cuts over the API (issue #13): stored and returned, refused with 422 when wrong, guarded like commands.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TEMPLATE_FIELDS } from '../../src/templates/files';
import { getTemplateSpec } from '../../src/features/templates/templates.service';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedGroup } from '../helpers/seed';
import { apiCall, expectError, type CallInit } from '../helpers/api';

let t: TestAppliance;
let key: string;

const call = (path: string, init: Omit<CallInit, 'key'> & { k?: string } = {}) => apiCall(t, path, { ...init, key: init.k ?? key });

let seq = 0;
const minimal = () => ({ name: `acme-session-${++seq}`, vendor: 'ACME OS', commands: ['show config', 'show inventory'] });

const SESSION = {
  pagers: [{ pattern: '^\\[n\\]ext page', answer: 'n' }],
  username_prompt: '^Account:\\s*$',
  password_prompt: '^Passphrase:\\s*$',
  enable_refused: ['rejected'],
  command_errors: ['^Command not found'],
  press_enter: ['(?i)hit enter'],
};
const OUTPUT = { 'show config': { start_after: '^BEGIN', stop_before: '^END' }, 'show inventory': { drop_first: 2, drop_last: 1 } };

before(async () => {
  t = await startTestAppliance();
  key = await t.keyFor({ permissions: 'all' });
});

after(async () => {
  await t.close();
});

describe('session and command_output over the API', () => {
  test('created, returned by GET and used by the backup runner', async () => {
    const created = await call('/templates', { method: 'POST', json: { ...minimal(), session: SESSION, command_output: OUTPUT } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.session, SESSION);
    assert.deepEqual(created.body.command_output, OUTPUT);
    const got = await call(`/templates/${created.body.id}`);
    assert.deepEqual(got.body.session, SESSION);
    assert.deepEqual(got.body.command_output, OUTPUT);
    const spec = getTemplateSpec(t.services.db, created.body.id as number);
    assert.deepEqual(spec?.session, SESSION);
    assert.deepEqual(spec?.command_output, OUTPUT);
  });

  test('absent when not set; PUT keeps them when omitted and clears them with an empty object', async () => {
    const plain = await call('/templates', { method: 'POST', json: minimal() });
    assert.equal(plain.status, 201);
    assert.ok(!('session' in plain.body) && !('command_output' in plain.body), plain.text);

    const withBoth = await call('/templates', { method: 'POST', json: { ...minimal(), session: SESSION, command_output: OUTPUT } });
    const id = withBoth.body.id as number;
    const renamed = await call(`/templates/${id}`, { method: 'PUT', json: { description: 'only the description' } });
    assert.equal(renamed.status, 200);
    assert.deepEqual(renamed.body.session, SESSION);
    const cleared = await call(`/templates/${id}`, { method: 'PUT', json: { session: {}, command_output: {} } });
    assert.equal(cleared.status, 200, cleared.text);
    assert.ok(!('session' in cleared.body) && !('command_output' in cleared.body), cleared.text);
  });

  test('the OpenAPI document describes both fields as optional', async () => {
    const res = await t.api('/api/v1/openapi.json');
    const doc = (await res.json()) as { components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> } };
    const create = doc.components.schemas.TemplateCreate;
    assert.ok(create.properties?.session && create.properties.command_output);
    assert.ok(!create.required?.includes('session') && !create.required?.includes('command_output'));
    assert.ok(doc.components.schemas.TemplateSession?.properties?.press_enter);
    // One schema: the API's template fields are the template file's, in both request bodies.
    assert.deepEqual(Object.keys(create.properties ?? {}), TEMPLATE_FIELDS);
    assert.deepEqual(Object.keys(doc.components.schemas.TemplateUpdate.properties ?? {}), TEMPLATE_FIELDS);
  });
});

describe('bad session or command_output: 422 naming the field, nothing stored', () => {
  const cases: { what: string; body: Record<string, unknown>; field: string }[] = [
    { what: 'a pager pattern RE2 cannot run', body: { session: { pagers: [{ pattern: '(?!x)More', answer: ' ' }] } }, field: 'session.pagers.0.pattern' },
    { what: 'a pager answer with a line break', body: { session: { pagers: [{ pattern: 'More', answer: 'q\r' }] } }, field: 'session.pagers.0.answer' },
    {
      what: 'a pager answer longer than a few keys',
      body: { session: { pagers: [{ pattern: 'More', answer: 'reload now please' }] } },
      field: 'session.pagers.0.answer',
    },
    { what: 'an unknown session field', body: { session: { pager: [] } }, field: 'session' },
    { what: 'a command error matching every line', body: { session: { command_errors: ['.*'] } }, field: 'session.command_errors.0' },
    { what: 'a rule for a command the template does not run', body: { command_output: { 'show run': { drop_first: 1 } } }, field: 'command_output.show run' },
    { what: 'a negative drop_first', body: { command_output: { 'show config': { drop_first: -1 } } }, field: 'command_output.show config.drop_first' },
    { what: 'an unknown rule field', body: { command_output: { 'show config': { head: 1 } } }, field: 'command_output.show config' },
  ];
  for (const c of cases) {
    test(c.what, async () => {
      const before = t.services.db.prepare('SELECT count(*) FROM templates').pluck().get();
      const r = await call('/templates', { method: 'POST', json: { ...minimal(), ...c.body } });
      const error = expectError(r, 422, 'VALIDATION_ERROR');
      const fields = error.details.errors?.map((e) => e.field) ?? [];
      assert.ok(
        fields.some((f) => f === c.field || f.startsWith(`${c.field}.`)),
        `${c.field} in ${JSON.stringify(fields)}`,
      );
      assert.equal(t.services.db.prepare('SELECT count(*) FROM templates').pluck().get(), before);
    });
  }
});

describe('session is guarded like the commands: its answers are keystrokes and its login questions get the secrets', () => {
  test('a user whose scope is not all cannot change it; the same user may change the description', async () => {
    const group = seedGroup(t.services.db, 'tsess-a');
    const created = await call('/templates', { method: 'POST', json: minimal() });
    const id = created.body.id as number;
    const scoped = await t.keyFor({ permissions: ['templates.view', 'templates.update', 'credentials.view'], groups: [group] });
    const denied = await call(`/templates/${id}`, { method: 'PUT', json: { session: { press_enter: ['^sw1#'] } }, k: scoped });
    expectError(denied, 403, 'PERMISSION_DENIED');
    assert.match(denied.body.error!.message, /session/);
    assert.ok(!('session' in (await call(`/templates/${id}`)).body));
    assert.equal((await call(`/templates/${id}`, { method: 'PUT', json: { description: 'scoped edit' }, k: scoped })).status, 200);
  });

  test('without credentials.view it cannot be changed either', async () => {
    const created = await call('/templates', { method: 'POST', json: minimal() });
    const noSecrets = await t.keyFor({ permissions: ['templates.view', 'templates.update'] });
    const r = await call(`/templates/${created.body.id}`, { method: 'PUT', json: { session: { password_prompt: '^Key:' } }, k: noSecrets });
    expectError(r, 403, 'PERMISSION_DENIED');
  });
});
