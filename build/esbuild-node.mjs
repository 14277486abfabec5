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

// Optional native/platform packages the bundle must not contain and must never load from the target's disk:
// argon2's per-platform packages (the executable sets NAPI_RS_NATIVE_LIBRARY_PATH instead), ssh2's optional
// cpu-features and sshcrypto.node (both required in try/catch; ssh2 falls back to pure JS). Each becomes a
// module that throws, which is exactly what those try/catch blocks expect when the package is absent.
export const absentNative = {
  name: 'absent-native',
  setup(b) {
    b.onResolve({ filter: /^@node-rs\/argon2-|^cpu-features$|\.node$/ }, (a) => ({ path: a.path, namespace: 'absent-native' }));
    b.onLoad({ filter: /.*/, namespace: 'absent-native' }, (a) => ({
      contents: `throw Object.assign(new Error(${JSON.stringify(`${a.path} is not part of the confvault executable`)}), { code: 'MODULE_NOT_FOUND' });`,
      loader: 'js',
    }));
  },
};
