// Bundles the suite's test files for test/run.sh: each file and the src/ and test/ modules it imports become plain
// JavaScript (one output file per test file, shared code in chunks). A test file then starts without tsx's loader
// hooks, which run for every module a file loads, packages included: about 1.3 s of CPU instead of 2.1 s for a typical
// API test file, on each of some 160 files. The packages src/ depends on (package.json `dependencies`) are bundled too,
// as in the CLI bundle, except those with native addons: Node's ESM loader resolving and reading their hundreds of
// files (zod, hono, yaml ...) cost each test file about 0.3 s of CPU more. Test-only packages (devDependencies:
// Chromium's driver, the OpenID provider, ajv ...) stay in node_modules.
// `import.meta.url`, `import.meta.dirname` and `import.meta.filename` keep naming the source file, so fixtures are
// found next to it. Names are kept (keepNames, as tsx does), so `constructor.name` and friends read as in src/.
// Usage: node build/test-bundle.mjs OUTDIR FILE.test.ts...   (OUTDIR inside the repository, so that node_modules resolves)
//        prints the bundled files, one a line, in the order given.
import { existsSync, readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [outArg, ...files] = process.argv.slice(2);
if (!outArg || files.length === 0) throw new Error('usage: node build/test-bundle.mjs OUTDIR FILE.test.ts...');
const outdir = path.resolve(outArg);
if (path.relative(ROOT, outdir).startsWith('..')) throw new Error(`${outdir}: the bundles must be inside ${ROOT} to find node_modules`);

/** Each module's own location, written in where it asks for it (the bundle lives elsewhere). */
const sourceMeta = {
  name: 'source-meta',
  setup(build) {
    build.onLoad({ filter: /\.tsx?$/ }, async (args) => {
      let contents = await readFile(args.path, 'utf8');
      if (contents.includes('import.meta.')) {
        contents = contents
          .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
          .replaceAll('import.meta.dirname', JSON.stringify(path.dirname(args.path)))
          .replaceAll('import.meta.filename', JSON.stringify(args.path));
      }
      return { contents, loader: args.path.endsWith('.tsx') ? 'tsx' : 'ts' };
    });
  },
};

/** Packages with native addons (or optional native parts) stay in node_modules, as in build/cli-bundle.mjs. */
const NATIVE = new Set(['better-sqlite3', '@node-rs/argon2', 'ssh2', 'cpu-features', 'esbuild', '@flydotio/litestream-linux-x64']);
/** The packages bundled: src/'s dependencies but the native ones. */
const BUNDLED = new Set(Object.keys(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).dependencies).filter((p) => !NATIVE.has(p)));
const packageName = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
const NODE_MODULES = `${path.sep}node_modules${path.sep}`;

/**
 * Other packages stay in node_modules, loaded by Node as usual: test-only ones imported by our code, and native ones
 * wherever imported. A bundled package's own imports are bundled with it (one copy of zod, whoever asks). A deep import without its file extension (`ajv/dist/2020`),
 * which tsx resolves and Node's ESM loader does not, is written as the file it resolves to.
 */
function nodeResolves(specifier) {
  try {
    const url = import.meta.resolve(specifier); // not checked to exist: a deep import without extension passes
    return !url.startsWith('file:') || existsSync(fileURLToPath(url));
  } catch {
    return false;
  }
}

const packagesOutside = {
  name: 'packages-outside',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData === 'inner' || isBuiltin(args.path)) return undefined;
      const name = packageName(args.path);
      if (!NATIVE.has(name) && (BUNDLED.has(name) || args.importer.includes(NODE_MODULES))) return undefined;
      if (nodeResolves(args.path)) return { path: args.path, external: true };
      const r = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: 'inner' });
      if (r.errors.length > 0) return { errors: r.errors };
      return { path: r.path, external: true };
    });
  },
};

const outName = (file) => path.relative(ROOT, path.resolve(file)).replace(/\.ts$/, '');
await rm(outdir, { recursive: true, force: true });
await esbuild.build({
  entryPoints: files.map((f) => ({ in: path.resolve(f), out: outName(f) })),
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  keepNames: true,
  sourcemap: 'linked',
  tsconfig: path.join(ROOT, 'tsconfig.json'),
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  legalComments: 'none',
  // The CommonJS packages bundled in call require() for Node's own modules; ESM output has no require of its own.
  banner: { js: "import { createRequire as __bundleCreateRequire } from 'node:module'; const require = __bundleCreateRequire(import.meta.url);" },
  plugins: [packagesOutside, sourceMeta],
  logLevel: 'warning',
});
for (const f of files) console.log(path.relative(process.cwd(), path.join(outdir, `${outName(f)}.mjs`)));
