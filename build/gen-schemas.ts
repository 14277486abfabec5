// Writes the generated JSON Schemas of schema/ from their one zod source each: template files (src/templates/schema.ts) and
// compliance rule files (src/features/compliance/compliance-rule.schemas.ts). With --check it writes nothing and fails
// when a committed file differs (test/checks.sh runs it; test/templates/template-schema.test.ts and
// test/compliance/rule-schema.test.ts check the same).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { complianceRuleJsonSchema } from '../src/features/compliance/compliance-rule.schemas';
import { RULE_SCHEMA_FILE } from '../src/features/compliance/rule-files';
import { TEMPLATE_SCHEMA_ASSET as TEMPLATE_SCHEMA_FILE } from '../src/templates/files';
import { templateJsonSchemaText } from '../src/templates/json-schema';

export function complianceSchemaText(): string {
  return `${JSON.stringify(complianceRuleJsonSchema(), null, 2)}\n`;
}

const GENERATED: [file: string, source: string, text: () => string][] = [
  [TEMPLATE_SCHEMA_FILE, 'src/templates/schema.ts', templateJsonSchemaText],
  [RULE_SCHEMA_FILE, 'src/features/compliance/compliance-rule.schemas.ts', complianceSchemaText],
];

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.dirname, 'gen-schemas.ts')) {
  let stale = 0;
  for (const [name, source, text] of GENERATED) {
    const file = path.join(import.meta.dirname, '..', name);
    if (!process.argv.includes('--check')) {
      writeFileSync(file, text());
      console.log(`wrote ${name}`);
    } else if (readFileSync(file, 'utf8') !== text()) {
      console.error(`${name} is not what ${source} generates: run npm run gen:schema and commit the result`);
      stale++;
    }
  }
  if (stale) process.exit(1);
}
