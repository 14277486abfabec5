// Writes schema/template.schema.json from the one template schema (src/templates/schema.ts). With --check it writes
// nothing and fails when the committed file differs (test/checks.sh runs it; so does test/templates/template-schema.test.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TEMPLATE_SCHEMA_ASSET as TEMPLATE_SCHEMA_FILE } from '../src/templates/files';
import { templateJsonSchemaText } from '../src/templates/json-schema';

const file = path.join(import.meta.dirname, '..', TEMPLATE_SCHEMA_FILE);
const text = templateJsonSchemaText();
if (process.argv.includes('--check')) {
  if (readFileSync(file, 'utf8') !== text) {
    console.error(`${TEMPLATE_SCHEMA_FILE} is not what src/templates/schema.ts generates: run npm run gen:schema and commit the result`);
    process.exit(1);
  }
} else {
  writeFileSync(file, text);
  console.log(`wrote ${TEMPLATE_SCHEMA_FILE}`);
}
