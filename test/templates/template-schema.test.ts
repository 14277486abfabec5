// schema/template.schema.json: generated from src/templates/schema.ts and committed as generated; every built-in file passes it, broken files fail it and the appliance's own checks alike, and it lists exactly the TemplateSpec fields with parseTemplateYaml's defaults.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020';
import { parse } from 'yaml';
import { REPO_ROOT } from '../helpers/appliance';
import { TEMPLATE_FIELDS, parseTemplateYaml } from '../../src/templates/files';
import { checkTemplateText } from '../../src/templates/file-check';
import { templateJsonSchemaText } from '../../src/templates/json-schema';

const schema = JSON.parse(readFileSync(path.join(REPO_ROOT, 'schema/template.schema.json'), 'utf8')) as {
  properties: Record<string, { default?: unknown }>;
  required: string[];
};
const validateSchema = new Ajv2020({ allErrors: true, strict: true }).compile(schema);
const BUILTIN_DIR = path.join(REPO_ROOT, 'src/templates/builtin');

const GOOD = `name: lab-switch
vendor: Lab
commands:
  - show running-config
`;

/** Files an engineer could write by mistake, each refused by the schema and by `template validate`. */
const BROKEN: Record<string, { text: string; field: string }> = {
  'no commands': { text: 'name: lab-switch\nvendor: Lab\n', field: 'commands' },
  'a misspelt field': { text: `${GOOD}strip_pattern:\n  - '^! Last change'\n`, field: 'strip_pattern' },
  'a name with capitals and spaces': { text: GOOD.replace('lab-switch', 'Lab Switch'), field: 'name' },
  'an unknown mode': { text: `${GOOD}mode: telnet\n`, field: 'mode' },
  'enable without its password prompt': { text: `${GOOD}enable:\n  command: enable\n  prompt: null\n`, field: 'enable.password_prompt' },
  'a command with no text': { text: `${GOOD}pre_commands:\n  - '  '\n`, field: 'pre_commands.0' },
  'a session field that does not exist': { text: `${GOOD}session:\n  pager: '--More--'\n`, field: 'session.pager' },
  'an alias in capitals': { text: `${GOOD}aliases:\n  oxidized: [IOS]\n`, field: 'aliases.oxidized.0' },
  'aliases of an unknown tool': { text: `${GOOD}aliases:\n  netbox: [ios]\n`, field: 'aliases.netbox' },
  'a negative line count': {
    text: `${GOOD}command_output:\n  show running-config:\n    drop_first: -1\n`,
    field: 'command_output.show running-config.drop_first',
  },
};

describe('template JSON Schema', () => {
  test('the committed file is what the one template schema generates (npm run gen:schema)', () => {
    assert.equal(readFileSync(path.join(REPO_ROOT, 'schema/template.schema.json'), 'utf8'), templateJsonSchemaText());
  });

  test('every built-in YAML file is valid under the schema and passes the appliance checks', () => {
    const files = readdirSync(BUILTIN_DIR).filter((f) => f.endsWith('.yaml'));
    assert.ok(files.length >= 14);
    for (const f of files) {
      const text = readFileSync(path.join(BUILTIN_DIR, f), 'utf8');
      assert.equal(validateSchema(parse(text)), true, `${f}: ${JSON.stringify(validateSchema.errors)}`);
      assert.deepEqual(checkTemplateText(text, f).errors, [], f);
    }
  });

  test('a minimal file is valid under both', () => {
    assert.equal(validateSchema(parse(GOOD)), true, JSON.stringify(validateSchema.errors));
    assert.deepEqual(checkTemplateText(GOOD, 'good.yaml').errors, []);
  });

  for (const [what, { text, field }] of Object.entries(BROKEN)) {
    test(`refused by the schema and by the checks: ${what}`, () => {
      assert.equal(validateSchema(parse(text)), false, 'the schema accepted it');
      const { spec, errors } = checkTemplateText(text, 'broken.yaml');
      assert.equal(spec, null);
      assert.ok(
        errors.some((e) => e.field === field),
        `no error on ${field}: ${JSON.stringify(errors)}`,
      );
    });
  }

  test('each message says what the field must be', () => {
    const text = 'name: lab\nprompt: 5\ncommands: show run\nstrip_pattern: []\nsession:\n  pagers: [{ pattern: More, answer: " ", quiet: "yes" }]\n';
    assert.deepEqual(checkTemplateText(text, 'x.yaml').errors, [
      { field: 'vendor', message: 'is required' },
      { field: 'prompt', message: 'must be a string or null' },
      { field: 'commands', message: 'must be a list' },
      { field: 'session.pagers.0.quiet', message: 'must be true or false' },
      {
        field: 'strip_pattern',
        message:
          'is not a template field (known fields: name, vendor, description, aliases, detect, mode, prompt, pre_commands, commands, enable, strip_patterns, ignore_patterns, redact_patterns, change_events, session, command_output, redact, exit_command)',
      },
    ]);
  });

  test('not YAML at all: one error on the file', () => {
    const { errors } = checkTemplateText('name: [unclosed\n', 'x.yaml');
    assert.equal(errors.length, 1);
    assert.equal(errors[0].field, 'file');
    assert.match(errors[0].message, /not valid YAML/);
  });

  test('the schema lists exactly the TemplateSpec fields, requires name, vendor and commands, and documents every field', () => {
    assert.deepEqual(Object.keys(schema.properties).sort(), [...TEMPLATE_FIELDS].sort());
    assert.deepEqual(schema.required.sort(), ['commands', 'name', 'vendor']);
    for (const [field, p] of Object.entries(schema.properties)) assert.ok((p as { description?: string }).description, `${field} has no description`);
  });

  test('the defaults the schema states are those parseTemplateYaml fills in', () => {
    const filled = parseTemplateYaml(GOOD, 'good.yaml') as unknown as Record<string, unknown>;
    for (const field of TEMPLATE_FIELDS) {
      if (['name', 'vendor', 'commands'].includes(field)) continue;
      const p = schema.properties[field];
      if ('default' in p) assert.deepEqual(filled[field], p.default, `default of ${field}`);
      else assert.equal(filled[field], undefined, `${field} is filled in but the schema states no default`);
    }
  });
});
