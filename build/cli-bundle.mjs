// Bundles src/main.ts into one CommonJS file for the test suite's CLI children (test/run.sh, test/helpers/appliance.ts).
// Same esbuild settings as the executable's bundle (build/esbuild-node.mjs), but the packages with native addons stay in
// node_modules, so they load as in development. A child started from it skips tsx's per-module loader hooks: about 0.2 s
// of CPU instead of 0.6 s for `confvault user list`, and the suite starts a few hundred of them.
// Usage: node build/cli-bundle.mjs OUTFILE [--cli-only]   (OUTFILE inside the repository, so that node_modules resolves)
// --cli-only: the executable's main script instead (src/exe-main.ts: every command but serve, no web code), as measured
// by `npm run bench -- --only cli`.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { NODE_BUNDLE, serveStub } from './esbuild-node.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outfile = path.resolve(process.argv[2] ?? path.join(ROOT, 'build/.tmp/test-cli.cjs'));
if (path.relative(ROOT, outfile).startsWith('..')) throw new Error(`${outfile}: the bundle must be inside ${ROOT} to find node_modules`);

// Packages with native addons (or optional ones) load from node_modules as in development; the rest is bundled.
const EXTERNAL = ['better-sqlite3', '@node-rs/argon2', 'ssh2', 'cpu-features', 'esbuild'];

const cliOnly = process.argv.includes('--cli-only');
await esbuild.build({
  ...NODE_BUNDLE,
  entryPoints: [path.join(ROOT, cliOnly ? 'src/exe-main.ts' : 'src/main.ts')],
  outfile,
  external: EXTERNAL,
  plugins: cliOnly ? [serveStub] : [],
});
