// Template endpoints: built-ins (synced, read-only), custom templates (validated), filters, pagination, time zones.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinTemplates } from '../../src/templates/index';
import { createTemplate, getTemplateSpec, syncBuiltinTemplates } from '../../src/features/templates/templates.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { formatTimestamp } from '../../src/lib/time';
import { VERSION } from '../../src/version';
import { deleteDevice } from '../../src/features/devices/devices.service';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { rawState, seedCredential, seedDevice } from '../helpers/seed';
import { apiCall, expectError, type CallInit, type Json } from '../helpers/api';

const FIELDS = [
  'id',
  'name',
  'vendor',
  'description',
  'builtin',
  'source',
  'source_file',
  'mode',
  'prompt',
  'pre_commands',
  'commands',
  'enable',
  'strip_patterns',
  'ignore_patterns',
  'redact_patterns',
  'change_events',
  'redact',
  'exit_command',
  'device_count',
  'created_at',
  'updated_at',
].sort();
const READ_ONLY = ['id', 'builtin', 'source', 'source_file', 'device_count', 'created_at', 'updated_at'];

let t: TestAppliance;
let key: string;

type Page = { items: Json[]; pagination: Record<string, number | boolean> };

const call = (path: string, init: Omit<CallInit, 'key'> & { k?: string } = {}) => apiCall(t, path, { ...init, key: init.k ?? key });

const minimal = (name: string) => ({ name, vendor: 'ACME OS', commands: ['show config'] });
const builtinId = (name: string) => t.services.db.prepare('SELECT id FROM templates WHERE name = ?').pluck().get(name) as number;

let deviceSeq = 0;
function seedTemplateDevice(templateId: number): number {
  const db = t.services.db;
  const credentialId =
    (db.prepare('SELECT id FROM credentials LIMIT 1').pluck().get() as number | undefined) ?? seedCredential(db, null, { name: 'tpl-cred', username: '' });
  return seedDevice(db, { name: `tpl-dev-${++deviceSeq}`, hostname: '192.0.2.1', credential_id: credentialId, template_id: templateId });
}

before(async () => {
  t = await startTestAppliance();
  key = await t.keyFor({ permissions: 'all' });
});
after(() => t.close());

describe('templates', () => {
  test('custom list starts empty: total 0, total_pages 1', async () => {
    const r = await call('/templates?builtin=false');
    assert.deepEqual(r.body, { items: [], pagination: { page: 1, limit: 50, total: 0, total_pages: 1, has_next: false, has_prev: false } });
  });

  test('built-ins are synced at start, listed in id order and readable with the code’s settings', async () => {
    const r = await call('/templates?limit=100');
    assert.equal(r.status, 200);
    const page = r.body as unknown as Page;
    assert.equal(page.pagination.total, builtinTemplates().length);
    assert.deepEqual(
      page.items.map((i) => i.name),
      builtinTemplates().map((b) => b.name),
    );
    for (const item of page.items) {
      // session, command_output, aliases and detect are optional: present only on templates that set them
      assert.deepEqual(
        Object.keys(item)
          .filter((k) => k !== 'session' && k !== 'command_output' && k !== 'aliases' && k !== 'detect')
          .sort(),
        FIELDS,
      );
      assert.equal(item.builtin, true);
      const { id, builtin, source, source_file, device_count, created_at, updated_at, ...spec } = item;
      assert.deepEqual([source, source_file], ['builtin', null]);
      assert.deepEqual(
        spec,
        builtinTemplates().find((b) => b.name === item.name),
      );
      assert.deepEqual(getTemplateSpec(t.services.db, id as number), spec);
    }
    const one = await call(`/templates/${builtinId('cisco-ios')}`);
    assert.equal(one.status, 200);
    assert.equal(one.body.vendor, 'Cisco IOS / IOS-XE');
    assert.equal(getTemplateSpec(t.services.db, 999_999), undefined);
  });

  test('built-ins are read-only: PUT and DELETE → 409 TEMPLATE_BUILTIN_READONLY', async () => {
    const id = builtinId('juniper-junos');
    expectError(await call(`/templates/${id}`, { method: 'PUT', json: { description: 'mine now' } }), 409, 'TEMPLATE_BUILTIN_READONLY');
    expectError(await call(`/templates/${id}`, { method: 'DELETE' }), 409, 'TEMPLATE_BUILTIN_READONLY');
    assert.equal((await call(`/templates/${id}`)).body.description, builtinTemplates().find((b) => b.name === 'juniper-junos')!.description);
  });

  test('create with only name, vendor and commands: 201 with documented defaults', async () => {
    const r = await call('/templates', { method: 'POST', json: minimal('acme-os') });
    assert.equal(r.status, 201);
    assert.deepEqual(Object.keys(r.body).sort(), FIELDS);
    const { id, created_at, updated_at, ...rest } = r.body;
    assert.equal(typeof id, 'number');
    assert.match(created_at as string, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    assert.deepEqual(rest, {
      name: 'acme-os',
      vendor: 'ACME OS',
      description: '',
      builtin: false,
      source: 'custom',
      source_file: null,
      mode: 'shell',
      prompt: null,
      pre_commands: [],
      commands: ['show config'],
      enable: null,
      strip_patterns: [],
      ignore_patterns: [],
      redact_patterns: [],
      change_events: [],
      redact: true,
      exit_command: null,
      device_count: 0,
    });
    const { builtin, source, source_file, device_count, ...spec } = rest;
    assert.deepEqual(getTemplateSpec(t.services.db, id as number), spec);
  });

  test('a built-in copied under a new name is accepted as a custom template', async () => {
    const src = (await call(`/templates/${builtinId('cisco-ios')}`)).body;
    const copy = Object.fromEntries(Object.entries(src).filter(([k]) => !READ_ONLY.includes(k)));
    const r = await call('/templates', { method: 'POST', json: { ...copy, name: 'cisco-ios-acme', redact: true } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.builtin, false);
    assert.deepEqual(r.body.redact_patterns, src.redact_patterns);
  });

  test('pattern and shape problems → 422 with one details.errors entry per field', async () => {
    const bad = (json: object) => call('/templates', { method: 'POST', json: { ...minimal('bad-one'), ...json } });
    expectError(await bad({ strip_patterns: ['ok', '(unclosed'] }), 422, 'VALIDATION_ERROR', ['strip_patterns.1']);
    expectError(await bad({ ignore_patterns: ['^(?!x)a$'] }), 422, 'VALIDATION_ERROR', ['ignore_patterns.0']); // not RE2 syntax
    expectError(await bad({ strip_patterns: ['.*'] }), 422, 'VALIDATION_ERROR', ['strip_patterns.0']);
    expectError(await bad({ redact_patterns: [{ pattern: 'x*', replacement: 'y' }] }), 422, 'VALIDATION_ERROR', ['redact_patterns.0.pattern']);
    expectError(await bad({ prompt: '[', enable: { command: 'enable', password_prompt: '(', prompt: null } }), 422, 'VALIDATION_ERROR', [
      'prompt',
      'enable.password_prompt',
    ]);
    expectError(await bad({ name: 'Has Spaces' }), 422, 'VALIDATION_ERROR', ['name']);
    expectError(await bad({ commands: [] }), 422, 'VALIDATION_ERROR', ['commands']);
    expectError(await bad({ commands: ['show\nrun'] }), 422, 'VALIDATION_ERROR', ['commands.0']);
    expectError(await bad({ mode: 'telnet' }), 422, 'VALIDATION_ERROR', ['mode']);
    expectError(await bad({ enable: { command: 'enable' } }), 422, 'VALIDATION_ERROR', ['enable.password_prompt', 'enable.prompt']);
    expectError(await bad({ redact_patterns: [{ pattern: 'a', replacement: 'b', extra: 1 }] }), 422, 'VALIDATION_ERROR', ['redact_patterns.0.extra']);
    expectError(await bad({ builtin: true }), 422, 'VALIDATION_ERROR', ['builtin']);
    expectError(await call('/templates', { method: 'POST', json: { name: 'x' } }), 422, 'VALIDATION_ERROR', ['vendor', 'commands']);
    assert.equal(((await call('/templates?q=bad-one')).body as unknown as Page).pagination.total, 0, 'nothing was saved');
  });

  test('names: unique → 400 TEMPLATE_NAME_EXISTS, built-in names reserved', async () => {
    expectError(await call('/templates', { method: 'POST', json: minimal('acme-os') }), 400, 'TEMPLATE_NAME_EXISTS');
    expectError(await call('/templates', { method: 'POST', json: minimal('cisco-ios') }), 400, 'TEMPLATE_NAME_EXISTS');
    const other = createTemplate(t.services.db, SYSTEM_ACTOR, {
      ...minimal('acme-other'),
      description: '',
      mode: 'exec',
      prompt: null,
      pre_commands: [],
      enable: null,
      strip_patterns: [],
      ignore_patterns: [],
      redact_patterns: [],
      redact: false,
      exit_command: null,
    });
    expectError(await call(`/templates/${other.id}`, { method: 'PUT', json: { name: 'acme-os' } }), 400, 'TEMPLATE_NAME_EXISTS');
    expectError(await call(`/templates/${other.id}`, { method: 'PUT', json: { name: 'frr' } }), 400, 'TEMPLATE_NAME_EXISTS');
  });

  test('update changes only the given fields, validates the result, 404 when missing', async () => {
    const created = (await call('/templates', { method: 'POST', json: { ...minimal('acme-upd'), strip_patterns: ['^! time'] } })).body;
    const r = await call(`/templates/${created.id}`, {
      method: 'PUT',
      json: { commands: ['show all'], enable: { command: 'su', password_prompt: 'Password:', prompt: null } },
    });
    assert.equal(r.status, 200);
    assert.deepEqual([r.body.commands, r.body.strip_patterns, r.body.vendor], [['show all'], ['^! time'], 'ACME OS']);
    assert.deepEqual(r.body.enable, { command: 'su', password_prompt: 'Password:', prompt: null });
    assert.deepEqual(getTemplateSpec(t.services.db, created.id as number)?.commands, ['show all']);
    const cleared = await call(`/templates/${created.id}`, { method: 'PUT', json: { enable: null, name: 'acme-renamed' } });
    assert.deepEqual([cleared.body.enable, cleared.body.name], [null, 'acme-renamed']);
    expectError(await call(`/templates/${created.id}`, { method: 'PUT', json: { strip_patterns: ['*'] } }), 422, 'VALIDATION_ERROR', ['strip_patterns.0']);
    expectError(await call(`/templates/${created.id}`, { method: 'PUT', json: { commands: null } }), 422, 'VALIDATION_ERROR', ['commands']);
    expectError(await call(`/templates/${created.id}`, { method: 'PUT', json: { id: 5 } }), 422, 'VALIDATION_ERROR', ['id']);
    expectError(await call('/templates/999999', { method: 'PUT', json: { vendor: 'x' } }), 404, 'RESOURCE_NOT_FOUND');
    expectError(await call('/templates/nope', { method: 'PUT', json: { vendor: 'x' } }), 422, 'VALIDATION_ERROR', ['template_id']);
  });

  test('device_count and delete: in use → 409 TEMPLATE_IN_USE; free → 200 success, then 404', async () => {
    const tpl = (await call('/templates', { method: 'POST', json: minimal('acme-del') })).body;
    const device = seedTemplateDevice(tpl.id as number);
    seedTemplateDevice(builtinId('linux'));
    assert.equal((await call(`/templates/${tpl.id}`)).body.device_count, 1);
    assert.equal((await call(`/templates/${builtinId('linux')}`)).body.device_count, 1);
    const refused = await call(`/templates/${tpl.id}`, { method: 'DELETE' });
    expectError(refused, 409, 'TEMPLATE_IN_USE');
    deleteDevice(t.services.db, SYSTEM_ACTOR, device);
    const ok = await call(`/templates/${tpl.id}`, { method: 'DELETE' });
    assert.deepEqual([ok.status, ok.body], [200, { status: 'success' }]);
    expectError(await call(`/templates/${tpl.id}`), 404, 'RESOURCE_NOT_FOUND');
    expectError(await call(`/templates/${tpl.id}`, { method: 'DELETE' }), 404, 'RESOURCE_NOT_FOUND');
  });

  test('filters: vendor (exact, case-insensitive), builtin, q; bad builtin → 422', async () => {
    const names = async (qs: string) => ((await call(`/templates?${qs}`)).body as unknown as Page).items.map((i) => i.name);
    assert.deepEqual(await names('vendor=acme%20os&builtin=false'), ['acme-os', 'acme-other', 'acme-renamed']);
    assert.deepEqual(await names('vendor=cisco%20ios%20%2F%20ios-xe'), ['cisco-ios', 'cisco-ios-acme']);
    assert.deepEqual(await names('builtin=false&q=CISCO'), ['cisco-ios-acme']);
    assert.deepEqual(
      await names('builtin=true&q=cisco'),
      builtinTemplates()
        .map((b) => b.name)
        .filter((n) => n.includes('cisco'))
        .sort(),
    );
    assert.equal((await names('builtin=true&limit=100')).length, builtinTemplates().length);
    assert.deepEqual(await names('q=%25'), [], 'LIKE wildcards are plain text');
    expectError(await call('/templates?builtin=yes'), 422, 'VALIDATION_ERROR', ['builtin']);
  });

  test('pagination: last page, past the end, bad page/limit → 422', async () => {
    const total = builtinTemplates().length + 4;
    const pages = Math.ceil(total / 5);
    const last = (await call(`/templates?limit=5&page=${pages}`)).body as unknown as Page;
    assert.deepEqual(last.pagination, { page: pages, limit: 5, total, total_pages: pages, has_next: false, has_prev: true });
    assert.equal(last.items.length, total - (pages - 1) * 5);
    assert.deepEqual(((await call(`/templates?limit=5&page=${pages + 1}`)).body as unknown as Page).items, []);
    for (const qs of ['limit=0', 'limit=101', 'limit=abc']) expectError(await call(`/templates?${qs}`), 422, 'VALIDATION_ERROR', ['limit']);
    expectError(await call('/templates?page=0'), 422, 'VALIDATION_ERROR', ['page']);
  });

  test('timestamps follow X-Timezone, else the user preference, else the appliance zone; unknown zone → 422', async () => {
    const id = builtinId('bird');
    const createdAt = t.services.db.prepare('SELECT created_at FROM templates WHERE id = ?').pluck().get(id) as number;
    assert.equal((await call(`/templates/${id}`, { headers: { 'X-Timezone': 'Asia/Kolkata' } })).body.created_at, formatTimestamp(createdAt, 'Asia/Kolkata'));
    assert.equal((await call(`/templates/${id}`)).body.created_at, formatTimestamp(createdAt, t.services.config.server.timezone));
    const k = await t.keyFor({ permissions: ['templates.view'], timezone: 'Europe/Berlin' });
    assert.equal((await call(`/templates/${id}`, { k })).body.updated_at, formatTimestamp(createdAt, 'Europe/Berlin'));
    expectError(await call('/templates', { headers: { 'X-Timezone': 'Nowhere/City' } }), 422, 'VALIDATION_ERROR', ['X-Timezone']);
  });

  test('syncBuiltinTemplates: idempotent, restores changed or deleted built-ins, leaves a same-named custom alone', () => {
    const db = t.services.db;
    assert.deepEqual(syncBuiltinTemplates(db), { inserted: [], updated: [], conflicts: [] });
    const id = builtinId('frr');
    // Built-in rows as an older version's files left them: no service changes a built-in.
    const older = 'built-in template rows as an older version left them';
    rawState(db, older, "UPDATE templates SET vendor = 'old', spec = json_set(spec, '$.commands', json('[\"old\"]')) WHERE id = ?", id);
    rawState(db, older, "DELETE FROM templates WHERE name = 'bird'");
    rawState(db, older, "UPDATE templates SET builtin = 0 WHERE name = 'linux'");
    // Synced from these very files by this version at this schema: a start does not parse or compare them again.
    assert.deepEqual(syncBuiltinTemplates(db), { inserted: [], updated: [], conflicts: [] });
    assert.equal(builtinId('bird'), undefined, 'not compared again');
    // Other files, another version or a newer schema change the mark: the next start compares and repairs.
    const mark = db.prepare("SELECT value FROM settings WHERE key = 'builtin_templates_synced'").pluck().get() as string;
    assert.match(mark, new RegExp(`^1 ${VERSION.replace(/\./g, '\\.')} \\d+ [0-9a-f]{64}$`));
    rawState(db, older, "UPDATE settings SET value = ? WHERE key = 'builtin_templates_synced'", mark.replace(/ [0-9a-f]{64}$/, ' older-files'));
    const r = syncBuiltinTemplates(db);
    assert.deepEqual(r, { inserted: ['bird'], updated: ['frr'], conflicts: ['linux'] });
    const frr = builtinTemplates().find((b) => b.name === 'frr')!;
    assert.deepEqual(getTemplateSpec(db, id), frr);
    assert.equal(builtinId('frr'), id, 'updated in place, so devices keep pointing at it');
    assert.equal(db.prepare("SELECT value FROM settings WHERE key = 'builtin_templates_synced'").pluck().get(), mark, 'the mark is set again');
    assert.deepEqual(syncBuiltinTemplates(db), { inserted: [], updated: [], conflicts: [] });
    // A mark that is gone (a database from before it existed) compares too; nothing differs, so the mark is all it writes.
    rawState(db, 'a database from before the sync mark existed', "DELETE FROM settings WHERE key = 'builtin_templates_synced'");
    assert.deepEqual(syncBuiltinTemplates(db), { inserted: [], updated: [], conflicts: ['linux'] });
    assert.equal(db.prepare("SELECT value FROM settings WHERE key = 'builtin_templates_synced'").pluck().get(), mark);
  });
});
