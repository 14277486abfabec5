// Custom template files in <data_dir>/templates/: loaded, changed, refused with field errors (the old version stays), removed unless in use, read-only through the API, audited.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import {
  cloneTemplate,
  exportTemplateYaml,
  getTemplateByName,
  importTemplateYaml,
  listTemplateFileProblems,
  reloadTemplateFiles,
  templateFolder,
} from '../../src/features/templates/template-files.service';
import { builtinTemplates } from '../../src/templates/index';
import { builtinFilesDigest, parsedAtBuild, parseTemplateYaml, templateToYaml, templateWithDefaults } from '../../src/templates/files';
import type { TemplateSpec } from '../../src/templates/types';
import { deleteDevice } from '../../src/features/devices/devices.service';
import { specFields } from '../../src/features/templates/templates.service';
import { REPO_ROOT, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { expectError } from '../helpers/api';
import { seedCredential, seedDevice } from '../helpers/seed';

function templateFile(name: string, over = ''): string {
  return `# yaml-language-server: $schema=http://127.0.0.1:8080/schema/template.schema.json
name: ${name}
vendor: Lab switch
commands:
  - show running-config
strip_patterns:
  - '^! Last change'
${over}`;
}

describe('template files', () => {
  let t: TestAppliance;
  let folder: string;
  let key: string;
  const db = () => t.services.db;
  const write = (file: string, text: string) => writeFileSync(path.join(folder, file), text);
  const reload = () => reloadTemplateFiles(db(), SYSTEM_ACTOR, folder);
  const audit = (action: string) =>
    db().prepare('SELECT actor, target, details FROM audit_log WHERE action = ? ORDER BY id').all(action) as {
      actor: string;
      target: string;
      details: string;
    }[];

  before(async () => {
    t = await startTestAppliance();
    folder = templateFolder(t.services.dataDir);
    mkdirSync(folder, { recursive: true });
    key = await t.keyFor({ permissions: 'all' });
  });
  after(() => t.close());

  test('a missing folder holds no templates and reports nothing', () => {
    const r = reloadTemplateFiles(db(), SYSTEM_ACTOR, path.join(t.dir, 'nowhere'));
    assert.deepEqual([r.loaded, r.created, r.problems], [[], [], []]);
  });

  test('a new file appears in the API as a template of source "file" with its path, audited', async () => {
    write('lab-switch.yaml', templateFile('lab-switch'));
    const r = reload();
    assert.deepEqual(r.created, ['lab-switch']);
    assert.deepEqual(r.problems, []);
    const res = await t.api('/api/v1/templates?q=lab-switch', { key });
    const body = (await res.json()) as { items: { name: string; source: string; source_file: string; builtin: boolean; strip_patterns: string[] }[] };
    assert.equal(body.items.length, 1);
    assert.equal(body.items[0].source, 'file');
    assert.equal(body.items[0].builtin, false);
    assert.equal(body.items[0].source_file, path.join(folder, 'lab-switch.yaml'));
    assert.deepEqual(body.items[0].strip_patterns, ['^! Last change']);
    const rows = audit('template.create');
    assert.equal(rows.at(-1)?.actor, 'system');
    assert.equal(JSON.parse(rows.at(-1)?.details ?? '{}').file, path.join(folder, 'lab-switch.yaml'));
    // Loading the same folder again changes nothing and audits nothing.
    const again = reload();
    assert.deepEqual([again.created, again.updated, again.removed], [[], [], []]);
    assert.equal(audit('template.update').length, 0);
  });

  test('a file template is read-only through the API: 409 naming the file', async () => {
    const id = getTemplateByName(db(), 'lab-switch').id;
    const put = await t.api(`/api/v1/templates/${id}`, { key, method: 'PUT', json: { vendor: 'edited' } });
    const body = (await put.json()) as Record<string, never>;
    const e = expectError({ status: put.status, body }, 409, 'CONFLICT');
    assert.match(e.message, /managed by file .*lab-switch\.yaml: edit the file and reload/);
    const del = await t.api(`/api/v1/templates/${id}`, { key, method: 'DELETE' });
    expectError({ status: del.status, body: (await del.json()) as Record<string, never> }, 409, 'CONFLICT');
    assert.equal(getTemplateByName(db(), 'lab-switch').vendor, 'Lab switch');
  });

  test('an edited file updates the template (audited with the changes)', () => {
    write('lab-switch.yaml', templateFile('lab-switch', 'ignore_patterns:\n  - ^ntp clock-period\n'));
    const r = reload();
    assert.deepEqual(r.updated, ['lab-switch']);
    assert.deepEqual(getTemplateByName(db(), 'lab-switch').ignore_patterns, ['^ntp clock-period']);
    const row = audit('template.update').at(-1);
    assert.ok(row?.details.includes('lab-switch'));
  });

  test('a broken edit is reported with field errors and leaves the loaded version in force', () => {
    write('lab-switch.yaml', templateFile('lab-switch', 'strip_pattern:\n  - oops\nmode: telnet\n'));
    const r = reload();
    assert.deepEqual(r.updated, []);
    assert.deepEqual(r.removed, []);
    assert.equal(r.problems.length, 1);
    assert.equal(r.problems[0].path, path.join(folder, 'lab-switch.yaml'));
    assert.deepEqual(r.problems[0].errors.map((e) => e.field).sort(), ['mode', 'strip_pattern']);
    assert.deepEqual(getTemplateByName(db(), 'lab-switch').ignore_patterns, ['^ntp clock-period']);
    // The Templates page reads the last reload's report from the database.
    assert.deepEqual(
      listTemplateFileProblems(db()).map((p) => p.path),
      [path.join(folder, 'lab-switch.yaml')],
    );
  });

  test('names: a built-in name, a name taken by an API template and a name in two files are refused', async () => {
    write('lab-switch.yaml', templateFile('lab-switch'));
    write('ios.yaml', templateFile('cisco-ios'));
    write('zz-copy.yaml', templateFile('lab-switch'));
    const made = await t.api('/api/v1/templates', { key, method: 'POST', json: { name: 'api-made', vendor: 'x', commands: ['show conf'] } });
    assert.equal(made.status, 201);
    write('api.yaml', templateFile('api-made'));
    const r = reload();
    const byFile = Object.fromEntries(r.problems.map((p) => [path.basename(p.path), p.errors[0].message]));
    assert.match(byFile['ios.yaml'], /built-in/);
    assert.match(byFile['zz-copy.yaml'], /already defined by .*lab-switch\.yaml/);
    assert.match(byFile['api.yaml'], /made through the API/);
    assert.equal(getTemplateByName(db(), 'api-made').source, 'custom');
    for (const f of ['ios.yaml', 'zz-copy.yaml', 'api.yaml']) rmSync(path.join(folder, f));
  });

  test('a removed file: the template stays while a device uses it, and goes at the first reload after', () => {
    const id = getTemplateByName(db(), 'lab-switch').id;
    const cred = seedCredential(db(), t.services.secrets, { name: 'c1', username: 'u', password: 'p' });
    const device = seedDevice(db(), { name: 'sw1', port: 22, credential_id: cred, template_id: id });
    rmSync(path.join(folder, 'lab-switch.yaml'));
    const r = reload();
    assert.deepEqual(r.removed, []);
    assert.deepEqual(r.kept, [{ name: 'lab-switch', file: path.join(folder, 'lab-switch.yaml'), devices: 1 }]);
    assert.match(r.problems[0].errors[0].message, /gone; .* stays in force while 1 device use/);
    assert.equal(getTemplateByName(db(), 'lab-switch').source, 'file');

    deleteDevice(db(), SYSTEM_ACTOR, device);
    const r2 = reload();
    assert.deepEqual(r2.removed, ['lab-switch']);
    assert.deepEqual(r2.problems, []);
    assert.throws(() => getTemplateByName(db(), 'lab-switch'), /not found/);
    assert.equal(JSON.parse(audit('template.delete').at(-1)?.details ?? '{}').name, 'lab-switch');
  });

  test('export writes YAML that reads back to the same template, for every built-in', () => {
    for (const spec of builtinTemplates()) {
      const text = templateToYaml(specFields(spec), ['header']);
      assert.deepEqual(specFields(parseTemplateYaml(text, `${spec.name}.yaml`)), specFields(spec), spec.name);
    }
    const id = getTemplateByName(db(), 'cisco-ios').id;
    const { filename, yaml } = exportTemplateYaml(db(), id);
    assert.equal(filename, 'cisco-ios.yaml');
    assert.equal((parse(yaml) as { name: string }).name, 'cisco-ios');
  });

  test('import makes an editable custom template; a broken file is refused with its field errors and nothing is made', () => {
    const made = importTemplateYaml(db(), SYSTEM_ACTOR, templateFile('imported-one'), 'x.yaml');
    assert.equal(made.source, 'custom');
    assert.throws(
      () => importTemplateYaml(db(), SYSTEM_ACTOR, 'name: imported-two\nvendor: x\n', 'y.yaml'),
      (e: Error & { details?: { errors: { field: string }[] } }) => e.details?.errors[0].field === 'commands',
    );
    assert.throws(() => getTemplateByName(db(), 'imported-two'), /not found/);
  });

  test('clone: an editable copy of a built-in named <name>-custom, then <name>-custom-2', () => {
    const ios = getTemplateByName(db(), 'cisco-ios');
    const a = cloneTemplate(db(), SYSTEM_ACTOR, ios.id);
    const b = cloneTemplate(db(), SYSTEM_ACTOR, ios.id);
    assert.deepEqual([a.name, b.name], ['cisco-ios-custom', 'cisco-ios-custom-2']);
    assert.equal(a.source, 'custom');
    assert.deepEqual(a.commands, ios.commands);
    assert.deepEqual(a.redact_patterns, ios.redact_patterns);
  });
});

test('a bundle carries the built-in templates parsed when it was built: the same templates, used only while the shipped files have their digest', () => {
  const script = "const m = await import('./build/esbuild-node.mjs'); process.stdout.write(JSON.stringify(m.builtinTemplatesParsed()));";
  const json = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const data = parsedAtBuild(json, builtinFilesDigest());
  assert.ok(data, 'the digest the build records is the one a process computes of the files it ships');
  const files = Object.keys(data);
  assert.equal(files.length, builtinTemplates().length);
  for (const file of files) {
    assert.deepEqual(templateWithDefaults(data[file] as TemplateSpec), parseTemplateYaml(readFileSync(path.join(REPO_ROOT, file), 'utf8'), file), file);
  }
  assert.equal(parsedAtBuild(json, 'a'.repeat(64)), null, 'files changed since the build: parsed again, not taken from the bundle');
  assert.equal(parsedAtBuild(undefined, builtinFilesDigest()), null, 'running from src/: parsed');
});
