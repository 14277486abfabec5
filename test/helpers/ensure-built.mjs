// Builds dist/confvault (build/build.mjs) unless it is newer than every input of the build. test/helpers/browser.ts
// runs it under a lock shared by the test files that use the executable, so the check happens under the lock: a file
// that waited for another's build finds it fresh and does not rebuild the executable the other one is running.
// Usage: node test/helpers/ensure-built.mjs   (exit status of the build, 0 when nothing was to do)
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const EXE = path.join(ROOT, 'dist/confvault');
const INPUTS = [
  'src',
  'schema',
  'build/build.mjs',
  'build/esbuild-node.mjs',
  'build/worker-bundles.mjs',
  'build/runtime.json',
  'build/runtime.mjs',
  'package.json',
];

function newestMtime(p) {
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...readdirSync(p).map((f) => newestMtime(path.join(p, f))));
}

const inputs = INPUTS.map((p) => path.join(ROOT, p)).filter(existsSync);
if (existsSync(EXE) && statSync(EXE).mtimeMs > Math.max(...inputs.map(newestMtime))) process.exit(0);
const r = spawnSync(process.execPath, [path.join(ROOT, 'build/build.mjs')], { cwd: ROOT, stdio: 'inherit' });
process.exit(r.status ?? 1);
