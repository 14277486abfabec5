// schema/compliance-rule.schema.json: generated from the zod schema and current, every shipped pack rule passes it, and broken rules fail it and the appliance's own check alike.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { REPO_ROOT } from '../helpers/appliance';
import { complianceSchemaText } from '../../build/gen-schemas';
import { checkRuleText, loadPacks, RULE_SCHEMA_FILE } from '../../src/features/compliance/rule-files';

const committed = readFileSync(path.join(REPO_ROOT, RULE_SCHEMA_FILE), 'utf8');
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats.default(ajv);
const validate = ajv.compile(JSON.parse(committed) as object);

const GOOD = `id: ntp-two
title: Two NTP servers
severity: medium
check:
  kind: value
  capture: '^ntp server (\\S+)'
  count_min: 2
`;

const BROKEN: Record<string, string> = {
  'an unknown severity': GOOD.replace('medium', 'urgent'),
  'an unknown check kind': GOOD.replace('kind: value', 'kind: values'),
  'a misspelt field': `${GOOD}remedation: x\n`,
  'no check': GOOD.slice(0, GOOD.indexOf('check:')),
  'an id with capitals': GOOD.replace('ntp-two', 'NTP two'),
  'a source without its url': `${GOOD}source: {title: guide}\n`,
};

describe('compliance rule JSON Schema', () => {
  test('the committed file is what build/gen-schemas.ts generates (npm run gen:schema)', () => {
    assert.equal(committed, complianceSchemaText());
  });

  test('every shipped pack rule and a list of rules pass it', () => {
    const packs = loadPacks();
    assert.ok(packs.length >= 5);
    for (const pack of packs) for (const rule of pack.rules) assert.ok(validate(rule), `${rule.id}: ${JSON.stringify(validate.errors)}`);
    assert.ok(validate(parse(`- ${GOOD.trim().replace(/\n/g, '\n  ')}\n`)));
  });

  for (const [what, text] of Object.entries(BROKEN)) {
    test(`a rule with ${what} fails the schema and the appliance's check`, () => {
      assert.equal(validate(parse(text)), false);
      assert.ok(checkRuleText(text).errors.length > 0);
    });
  }
});
