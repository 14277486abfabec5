// The esbuild settings every confvault bundle shares (the executable's, its worker's, the test suite's CLI bundle).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const BUILTIN_FOLDER = 'src/templates/builtin';

/**
 * The built-in template files parsed here, by shipped name, with the digest of the files parsed (builtinFilesDigest in
 * src/templates/files.ts: names and bytes). A bundle carries them, so a process does not parse the 56 YAML files again
 * when the files it ships have that digest: about 0.1-0.15 s of CPU for each process that reads templates (every
 * collector, `serve`, the CLI; collectors-bench, #27). The YAML options are parseTemplateYaml's; a test compares the two.
 */
export function builtinTemplatesParsed() {
  const names = readdirSync(path.join(ROOT, BUILTIN_FOLDER))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => `${BUILTIN_FOLDER}/${f}`)
    .sort();
  const hash = createHash('sha256');
  const data = {};
  for (const n of names) {
    const bytes = readFileSync(path.join(ROOT, n));
    hash.update(`${n}\0`).update(bytes).update('\0');
    data[n] = parse(bytes.toString('utf8'), { prettyErrors: true, uniqueKeys: true, maxAliasCount: 100 });
  }
  return { digest: hash.digest('hex'), data };
}

/** One CommonJS file for Node 24 (build/runtime.json), with tsconfig.json's strict mode and JSX (hono/jsx) settings; warnings printed. */
export const NODE_BUNDLE = {
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'cjs',
  tsconfig: path.join(ROOT, 'tsconfig.json'),
  legalComments: 'none',
  logLevel: 'warning', // prints warnings (e.g. import.meta in CJS output, with the file that uses it)
  // A string read with JSON.parse when first needed (src/templates/files.ts), not an object literal in the code.
  define: { __CONFVAULT_BUILTIN_TEMPLATES__: JSON.stringify(JSON.stringify(builtinTemplatesParsed())) },
};

// The executable's main script (src/exe-main.ts) runs every command but `serve`, and holds no web interface, API or docs
// code; `serve` runs the whole program, shipped beside it (build/build.mjs, src/runtime/shipped-program.ts).
const SERVE_STUB = 'serve-stub';
/** In the main script, `./cli/serve` is only a name and a summary for --help: exe-main.ts runs the program for `serve`. */
export const serveStub = {
  name: SERVE_STUB,
  setup(b) {
    b.onResolve({ filter: /^\.\/cli\/serve$/ }, (a) => ({ path: a.path, namespace: SERVE_STUB, pluginData: a.resolveDir }));
    b.onLoad({ filter: /.*/, namespace: SERVE_STUB }, (a) => ({
      contents: `import { SERVE_SUMMARY } from './cli/serve-summary';
export const serveCommand = { name: 'serve', summary: SERVE_SUMMARY, help: '', run: async () => { throw new Error('serve runs from the shipped program'); } };`,
      resolveDir: a.pluginData,
      loader: 'ts',
    }));
  },
};
/** What the main script must not contain (checked on esbuild's list of its inputs). */
export const NOT_IN_CLI = /^src\/(web\/|app\/(app|api-v1|server)\.ts$|features\/[^/]+\/[^/]+\.routes\.ts$)|(^|\/)node_modules\/@scalar\//;

// ssh2's compiled crypto binding (`require('./crypto/build/Release/sshcrypto.node')` in its crypto.js, in try/catch):
// src/runtime/native.ts's sshCryptoModule, which finds the file in node_modules in development and the executable's
// extracted asset (native/sshcrypto.node) in production. Listed before absentNative, whose `.node` rule it takes over.
const sshCryptoAddon = {
  name: 'ssh-crypto-addon',
  setup(b) {
    b.onResolve({ filter: /(^|\/)sshcrypto\.node$/ }, (a) => ({ path: a.path, namespace: 'ssh-crypto-addon' }));
    b.onLoad({ filter: /.*/, namespace: 'ssh-crypto-addon' }, () => ({
      contents: `module.exports = require(${JSON.stringify(path.join(ROOT, 'src/runtime/native.ts'))}).sshCryptoModule();`,
      resolveDir: ROOT,
      loader: 'js',
    }));
  },
};

// Optional native/platform packages the bundle must not contain and must never load from the target's disk:
// argon2's per-platform packages (the executable sets NAPI_RS_NATIVE_LIBRARY_PATH instead), ssh2's optional
// cpu-features (required in try/catch; ssh2 then orders its ciphers without knowing the CPU). Each becomes a
// module that throws, which is exactly what those try/catch blocks expect when the package is absent.
const absentNative = {
  name: 'absent-native',
  setup(b) {
    b.onResolve({ filter: /^@node-rs\/argon2-|^cpu-features$|\.node$/ }, (a) => ({ path: a.path, namespace: 'absent-native' }));
    b.onLoad({ filter: /.*/, namespace: 'absent-native' }, (a) => ({
      contents: `throw Object.assign(new Error(${JSON.stringify(`${a.path} is not part of the confvault executable`)}), { code: 'MODULE_NOT_FOUND' });`,
      loader: 'js',
    }));
  },
};

/** The native parts' plugins of every bundle that holds ssh2 (the executable's main script and program, the worker bundles). */
export const NATIVE_PLUGINS = [sshCryptoAddon, absentNative];
