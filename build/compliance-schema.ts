// Writes schema/compliance-rule.schema.json from the zod schema of a rule (src/features/compliance/compliance-rule.schemas.ts); test/compliance/rule-schema.test.ts checks it is current.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { complianceRuleJsonSchema } from '../src/features/compliance/compliance-rule.schemas';
import { RULE_SCHEMA_FILE } from '../src/features/compliance/rule-files';

export function complianceSchemaText(): string {
  return `${JSON.stringify(complianceRuleJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.dirname, 'compliance-schema.ts')) {
  writeFileSync(path.join(import.meta.dirname, '..', RULE_SCHEMA_FILE), complianceSchemaText());
  console.log(`wrote ${RULE_SCHEMA_FILE}`);
}
