// The esbuild settings every confvault bundle shares (the executable's, its worker's, the test suite's CLI bundle).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** One CommonJS file for Node 24 (build/runtime.json), with tsconfig.json's strict mode and JSX (hono/jsx) settings; warnings printed. */
export const NODE_BUNDLE = {
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'cjs',
  tsconfig: path.join(ROOT, 'tsconfig.json'),
  legalComments: 'none',
  logLevel: 'warning', // prints warnings (e.g. import.meta in CJS output, with the file that uses it)
};
