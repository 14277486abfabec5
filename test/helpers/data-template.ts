// Makes the data dir every test appliance starts as a copy of (makeDataTemplate): `data-template.ts DIR`, run once by test/run.sh.
import { makeDataTemplate } from './appliance';

const dir = process.argv[2];
if (!dir) throw new Error('usage: data-template.ts DIR');
await makeDataTemplate(dir);
