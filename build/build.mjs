// Builds dist/confvault: one Node.js Single Executable Application (esbuild bundle + SEA blob with assets, injected into a
// copy of the pinned runtime, build/runtime.mjs, whichever node runs this script).
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { NATIVE_PLUGINS, NODE_BUNDLE, NOT_IN_CLI, serveStub } from './esbuild-node.mjs';
import { bundleWorkerPools } from './worker-bundles.mjs';
import { checkSupported, verifiedNode } from './runtime.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TMP = path.join(ROOT, 'build/.tmp'); // intermediates; ignored by git (".tmp/"), removed after a good build
const EXE = path.join(ROOT, 'dist/confvault');
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const started = Date.now();
const rel = (p) => path.relative(ROOT, p);
const step = (msg) => console.log(`[build ${((Date.now() - started) / 1000).toFixed(1)}s] ${msg}`);

// ---------------------------------------------------------------------------------------------
// THE ASSET LIST: every file the executable carries, keyed as src/runtime/assets.ts reads it
// (readAsset / listAssets). Add new shipped files or folders here and nowhere else.
const ASSET_FILES = {
  'native/better_sqlite3.node': 'node_modules/better-sqlite3/build/Release/better_sqlite3.node',
  'native/argon2.linux-x64-gnu.node': 'node_modules/@node-rs/argon2-linux-x64-gnu/argon2.linux-x64-gnu.node',
  'native/sshcrypto.node': 'node_modules/ssh2/lib/protocol/crypto/build/Release/sshcrypto.node', // build/runtime.mjs compiles it; src/runtime/native.ts loads it
  'node_modules/@scalar/api-reference/dist/browser/standalone.js': 'node_modules/@scalar/api-reference/dist/browser/standalone.js',
  'src/templates/defaults.yaml': 'src/templates/defaults.yaml', // the engine's session defaults (src/templates/defaults.ts)
  'workers/compute-worker.cjs': 'build/.tmp/compute-worker.cjs', // built by bundleWorkers(); WORKER_ASSET in src/features/configs/workers/pool.ts
  'workers/capture-worker.cjs': 'build/.tmp/capture-worker.cjs', // built by bundleWorkers(); CAPTURE_WORKER_ASSET in src/engine/capture/capture-pool.ts
  'program/confvault-full.cjs': 'build/.tmp/confvault-full.cjs', // `confvault serve`: PROGRAM_ASSET in src/runtime/shipped-program.ts
  'program/confvault-full.cache': 'build/.tmp/confvault-full.cache', // its V8 code cache, made by shipProgram()
  'workers/compliance-worker.cjs': 'build/.tmp/compliance-worker.cjs', // built by bundleWorkers(); COMPLIANCE_WORKER_ASSET in src/features/compliance/compliance-pool.ts
};
// Folders shipped whole, each file keyed by its repo-relative path. [folder, required?]
const ASSET_FOLDERS = [
  ['schema', true],
  ['src/web/static', false], // the web interface's CSS/JS, once it exists
  ['src/templates/builtin', true], // the built-in templates, one YAML file each
  ['src/features/compliance/packs', true], // the baseline compliance packs, one YAML file each
];
// ---------------------------------------------------------------------------------------------

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(path.join(dir, e.name)) : e.isFile() ? [path.join(dir, e.name)] : [],
  );
}

/** key -> absolute file, plus manifest.json (the sorted list of all keys, itself included). */
function collectAssets() {
  const assets = {};
  for (const [key, file] of Object.entries(ASSET_FILES)) assets[key] = path.join(ROOT, file);
  for (const [folder, required] of ASSET_FOLDERS) {
    const dir = path.join(ROOT, folder);
    if (!existsSync(dir)) {
      if (required) throw new Error(`asset folder ${folder}/ is missing`);
      continue;
    }
    // Keys use "/" whatever the platform, as assets.ts builds them.
    for (const file of walk(dir)) assets[rel(file).split(path.sep).join('/')] = file;
  }
  for (const [key, file] of Object.entries(assets)) {
    if (!existsSync(file)) throw new Error(`asset ${key}: ${rel(file)} not found (did npm ci run its install scripts?)`);
  }
  const manifest = path.join(TMP, 'manifest.json');
  writeFileSync(manifest, JSON.stringify([...Object.keys(assets), 'manifest.json'].sort(), null, 1));
  assets['manifest.json'] = manifest;
  return assets;
}

// In a SEA the main script's `require` only loads built-in modules. esbuild's CJS output calls the enclosing
// `require` for everything it leaves unbundled (built-ins, and argon2's require(process.env.NAPI_RS_NATIVE_LIBRARY_PATH)),
// so the bundle shadows it with a full require. `var` may redeclare the wrapper's `require` parameter (also in strict
// mode) and keeps its value, so the right-hand side still sees the SEA's require. Absolute paths resolve from any base.
const REQUIRE_SHIM = "var require = require('node:module').createRequire(process.execPath);";

// The executable carries two bundles of our code. Its main script (src/exe-main.ts) runs every command but `serve`, and
// holds no web interface, API or docs code: a CLI run reads about a third less code. `serve` runs the whole program
// (src/main.ts), shipped as an asset with its own V8 code cache (src/runtime/shipped-program.ts).
async function bundle(version, outfile, entry, plugins = []) {
  const result = await esbuild.build({
    entryPoints: [path.join(ROOT, entry)],
    ...NODE_BUNDLE,
    write: false,
    metafile: true,
    outfile,
    define: { ...NODE_BUNDLE.define, __CONFVAULT_VERSION__: JSON.stringify(version) },
    plugins: [...NATIVE_PLUGINS, ...plugins],
  });
  if (result.warnings.length) step(`esbuild: ${result.warnings.length} warning(s) above`);
  // The shim goes after esbuild's "use strict" directive, not before it as a banner would: a directive
  // that is not the first statement is ignored and the whole bundle would run in sloppy mode.
  const code = result.outputFiles[0].text;
  const directive = /^"use strict";\n/.exec(code)?.[0] ?? '';
  const text = `${directive}// confvault ${version}\n${REQUIRE_SHIM}\n${code.slice(directive.length)}`;
  writeFileSync(outfile, text);
  step(`bundled ${entry} -> ${rel(outfile)} (${(statSync(outfile).size / 1e6).toFixed(1)} MB)`);
  return { text, inputs: Object.keys(result.metafile.inputs) };
}

/**
 * The whole program as a CommonJS function expression, as src/runtime/shipped-program.ts compiles it, and its V8 code
 * cache, made by the pinned node that will run it (a cache from another V8 would be rejected).
 */
function shipProgram(nodeBin, text, file, cacheFile) {
  writeFileSync(file, `(function (exports, require, module, __filename, __dirname) {${text}\n})`);
  const make = `const fs = require('node:fs'), vm = require('node:vm');
const s = new vm.Script(fs.readFileSync(process.argv[1], 'utf8'), { filename: 'program/confvault-full.cjs' });
fs.writeFileSync(process.argv[2], s.createCachedData());`;
  execFileSync(nodeBin, ['-e', make, file, cacheFile], { stdio: ['ignore', 'ignore', 'inherit'] });
  step(`code cache of the shipped program: ${(statSync(cacheFile).size / 1e6).toFixed(1)} MB`);
}

/**
 * The worker threads' code: one self-contained bundle per pool (build/worker-bundles.mjs), carried as an asset and
 * started with `new Worker(code, { eval: true })`, since a SEA has no script file a worker could load.
 */
async function bundleWorkers() {
  for (const outfile of await bundleWorkerPools(TMP)) step(`bundled ${rel(outfile)} (${(statSync(outfile).size / 1e6).toFixed(1)} MB)`);
}

/** Strip a copy of node before injecting (stripping after injection could drop or move the blob's note). */
function tryStrip(file) {
  if (process.env.CONFVAULT_NO_STRIP === '1') return 'skipped (CONFVAULT_NO_STRIP=1)';
  try {
    execFileSync('strip', [file], { stdio: 'pipe' });
    return 'stripped';
  } catch (e) {
    return e.code === 'ENOENT' ? 'not stripped (strip is not installed)' : `not stripped (${String(e.stderr || e.message).trim()})`;
  }
}

/** postject as a child: its ELF writer prints a harmless "Can't find string offset for section name '.note…'" per note. */
function inject(exe, blob) {
  const cli = createRequire(import.meta.url).resolve('postject/dist/cli.js');
  const args = [cli, exe, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE]; // no Mach-O segment on Linux
  try {
    const r = execFileSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    step(`postject: ${r.includes('Injection done') ? 'blob injected' : r.trim()}`);
  } catch (e) {
    throw new Error(`postject failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

async function main() {
  if (process.platform !== 'linux') throw new Error('this build script targets Linux only');
  const version = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
  // The runtime first: a wrong binary or a line past its end of life stops the build before any work.
  const node = verifiedNode();
  step(`runtime ${rel(node.bin)}: sha256 as recorded; ${checkSupported(node.version)}`);
  rmSync(TMP, { recursive: true, force: true });
  mkdirSync(TMP, { recursive: true });
  mkdirSync(path.dirname(EXE), { recursive: true });

  const bundleFile = path.join(TMP, 'confvault.cjs');
  const cli = await bundle(version, bundleFile, 'src/exe-main.ts', [serveStub]);
  const leaked = cli.inputs.filter((i) => NOT_IN_CLI.test(i));
  if (leaked.length) throw new Error(`the CLI bundle must not contain serve's code, but has: ${leaked.join(', ')}`);
  const full = await bundle(version, path.join(TMP, 'confvault-full.raw.cjs'), 'src/main.ts');
  shipProgram(node.bin, full.text, path.join(TMP, 'confvault-full.cjs'), path.join(TMP, 'confvault-full.cache'));

  await bundleWorkers();

  const assets = collectAssets();
  const blob = path.join(TMP, 'confvault.blob');
  const seaConfig = path.join(TMP, 'sea-config.json');
  writeFileSync(
    seaConfig,
    JSON.stringify(
      {
        main: bundleFile,
        output: blob,
        disableExperimentalSEAWarning: true,
        // V8 code cache of the bundle, measured: spawn to first /healthz answer ~100-180 ms instead of
        // ~180-280 ms, --version ~110 ms instead of ~300 ms. It is valid because it runs on this very node.
        useCodeCache: process.env.CONFVAULT_NO_CODE_CACHE !== '1',
        assets,
      },
      null,
      1,
    ),
  );
  execFileSync(node.bin, ['--experimental-sea-config', seaConfig], { cwd: TMP, stdio: ['ignore', 'ignore', 'inherit'] });
  step(`SEA blob with ${Object.keys(assets).length} assets (${(statSync(blob).size / 1e6).toFixed(1)} MB)`);

  // The executable is the pinned node itself: the binary that made the blob and that the native addons were built for.
  const partial = `${EXE}.partial`;
  rmSync(partial, { force: true });
  copyFileSync(node.bin, partial);
  chmodSync(partial, 0o755);
  step(`copied ${rel(node.bin)} (node ${node.version}); ${tryStrip(partial)}`);

  inject(partial, blob);
  chmodSync(partial, 0o755);
  // Rename last, so an interrupted build never leaves a dist/confvault that looks up to date.
  renameSync(partial, EXE);

  // A first sign of life. The real checks (alone in an empty folder, clean environment) are build/smoke.sh.
  const out = execFileSync(EXE, ['--version'], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } }).trim();
  if (out !== `confvault ${version} (Node.js ${node.version})`) throw new Error(`dist/confvault --version printed "${out}"`);

  // [replication] engine = "litestream" runs this binary; serve looks for it next to the executable (docs/replication.md).
  const litestream = path.join(ROOT, 'node_modules/@flydotio/litestream-linux-x64/litestream');
  if (existsSync(litestream)) {
    copyFileSync(litestream, path.join(path.dirname(EXE), 'litestream'));
    chmodSync(path.join(path.dirname(EXE), 'litestream'), 0o755);
    step(`copied ${rel(litestream)} to ${rel(path.join(path.dirname(EXE), 'litestream'))}`);
  }

  if (process.env.CONFVAULT_KEEP_BUILD_TMP !== '1') rmSync(TMP, { recursive: true, force: true });
  const mb = (statSync(EXE).size / 1e6).toFixed(1);
  step(`done: ${rel(EXE)} ${mb} MB, "${out}", built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((e) => {
  rmSync(`${EXE}.partial`, { force: true });
  console.error(`build failed: ${e?.stack || e}`);
  process.exitCode = 1;
});
