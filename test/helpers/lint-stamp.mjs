// The fingerprint of everything ESLint's result can depend on, for test/checks.sh: a clean lint is skipped only when
// the next run's fingerprint is the same. ESLint's own cache keys each file by its content alone, while the type-aware
// rules read other files' types, so an unchanged file could keep a clean result after a type it uses changed. This key
// covers the whole tree at once: every source, JSON and config file ESLint and TypeScript may read (the folders
// eslint.config.js ignores left out, git-ignored ones kept, as ESLint keeps them), the installed packages' lock and
// the runtime, so any change anywhere lints everything again.
// Usage: node test/helpers/lint-stamp.mjs [DIR]   prints a hex digest.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const INPUT = /\.(ts|tsx|mts|cts|js|mjs|cjs|json)$/;

/** The folders (relative to `dir`, with a trailing /) that the ESLint config's global ignores name. */
async function ignoredFolders(dir) {
  const { default: config } = await import(pathToFileURL(path.join(dir, 'eslint.config.js')).href);
  const global = config.find((c) => Object.keys(c).length === 1 && Array.isArray(c.ignores));
  return new Set(['.git/', 'node_modules/', ...(global?.ignores ?? []).filter((p) => p.endsWith('/') && !p.includes('*'))]);
}

/** The digest of the lint inputs under `dir`. */
export async function lintStamp(dir) {
  const skip = await ignoredFolders(dir);
  const hash = createHash('sha256').update(`node ${process.version}\n`);
  const walk = (rel) => {
    for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!skip.has(`${r}/`)) walk(r);
      } else if (INPUT.test(e.name)) {
        hash.update(
          `${r} ${
            e.isFile()
              ? createHash('sha256')
                  .update(readFileSync(path.join(dir, r)))
                  .digest('hex')
              : 'not a file'
          }\n`,
        );
      }
    }
  };
  walk('');
  let lock = 'absent';
  try {
    lock = createHash('sha256')
      .update(readFileSync(path.join(dir, 'node_modules/.package-lock.json')))
      .digest('hex');
  } catch {
    // no installed packages: lint fails anyway
  }
  return hash.update(`installed ${lock}\n`).digest('hex');
}

// Run as a script (not when a test file's bundle holds this module, where import.meta.main is the test file's).
if (process.argv[1] && path.basename(process.argv[1]) === 'lint-stamp.mjs') console.log(await lintStamp(path.resolve(process.argv[2] ?? '.')));
