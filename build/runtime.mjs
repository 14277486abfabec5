// The Node.js runtime confvault ships and tests on: the binary pinned in build/runtime.json (an npm package that
// `npm ci` installs), its checksum, its LTS line's end of life, and the native addons built for it from source.
//   node build/runtime.mjs install                    npm's postinstall: verify the binary, build better-sqlite3 and ssh2's crypto for it
//   node build/runtime.mjs check [--today YYYY-MM-DD] [--node vX.Y.Z]   is that runtime (default: the pinned one) supported?
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const rel = (p) => path.relative(ROOT, p);

/** build/runtime.json: { package, version, sha256 (of bin/node), lts_end_of_life: { major: "YYYY-MM-DD" } }. */
export const RUNTIME = JSON.parse(readFileSync(path.join(ROOT, 'build/runtime.json'), 'utf8'));
/** The installed package: bin/node (the runtime) and include/node (the headers native addons compile against). */
export const NODE_DIR = path.join(ROOT, 'node_modules', RUNTIME.package);
export const NODE_BIN = path.join(NODE_DIR, 'bin/node');

/** Today as YYYY-MM-DD (UTC), or CONFVAULT_BUILD_TODAY: the tests move the calendar with it. */
export function today() {
  return process.env.CONFVAULT_BUILD_TODAY || new Date().toISOString().slice(0, 10);
}

/** Throws unless `version` ("v24.21.0") is on an LTS line of the table that has not reached its end of life on `day`. */
export function checkSupported(version, day = today()) {
  const major = /^v?(\d+)\./.exec(version)?.[1];
  const eol = major && RUNTIME.lts_end_of_life[major];
  if (!eol) {
    const lines = Object.keys(RUNTIME.lts_end_of_life).join(', ');
    throw new Error(`Node.js ${version} is not on an LTS line listed in build/runtime.json (${lines})`);
  }
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) throw new Error(`a date must be YYYY-MM-DD, not "${day}"`);
  if (day >= eol) {
    throw new Error(
      `Node.js ${version}: the ${major}.x line reached its end of life on ${eol} (today is ${day}); move to the next LTS line, see docs/runtime.md`,
    );
  }
  return `Node.js ${version}: LTS line ${major}.x, supported until ${eol}`;
}

/** The pinned binary after checking it: installed, the version package.json and runtime.json pin, the recorded checksum. */
export function verifiedNode() {
  if (!existsSync(NODE_BIN)) throw new Error(`${rel(NODE_BIN)} is missing: npm ci installs it (${RUNTIME.package}@${RUNTIME.version})`);
  const pinned = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).devDependencies?.[RUNTIME.package];
  if (pinned !== RUNTIME.version) throw new Error(`package.json pins ${RUNTIME.package}@${pinned}, build/runtime.json ${RUNTIME.version}: make them equal`);
  const sha256 = createHash('sha256').update(readFileSync(NODE_BIN)).digest('hex');
  if (sha256 !== RUNTIME.sha256) throw new Error(`${rel(NODE_BIN)} has sha256 ${sha256}, build/runtime.json records ${RUNTIME.sha256}`);
  const version = execFileSync(NODE_BIN, ['--version'], { encoding: 'utf8' }).trim();
  if (version !== `v${RUNTIME.version}`) throw new Error(`${rel(NODE_BIN)} reports ${version}, expected v${RUNTIME.version}`);
  return { bin: NODE_BIN, version };
}

/** better-sqlite3's own build folder: its loader prefers it to the prebuilt binaries in its package, and build.mjs ships it. */
export const SQLITE_ADDON = path.join(ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node');
/**
 * ssh2's optional crypto binding (its AES-GCM, ChaCha20-Poly1305 and generic ciphers on OpenSSL's contexts, kept per
 * connection): without it ssh2 makes a cipher object per packet in JavaScript. The folder ssh2 looks in; build.mjs ships it.
 */
export const SSH_CRYPTO_DIR = path.join(ROOT, 'node_modules/ssh2/lib/protocol/crypto');
export const SSH_CRYPTO_ADDON = path.join(SSH_CRYPTO_DIR, 'build/Release/sshcrypto.node');

/** Whether `probe` (a script run from the repository) exits 0 in `node`. */
const runs = (node, probe) => spawnSync(node, ['-e', probe], { cwd: ROOT, stdio: 'ignore' }).status === 0;

/**
 * SQLite compile-time options confvault adds to better-sqlite3's own (its deps/defines.gypi), passed to the compiler
 * through CFLAGS. ENABLE_QPSG, the query planner stability guarantee: a statement keeps the plan it was prepared with,
 * whatever values are bound. Without it SQLite (better-sqlite3 enables STAT4) marks any statement whose planning looked
 * at a bound value (a join on a bound key, a LIMIT, a term beside a partial index) to be compiled again at every bind:
 * 30 us more per run of a two-table lookup that takes 4 (collectors-bench, #27; docs/performance.md).
 */
export const SQLITE_DEFINES = ['SQLITE_ENABLE_QPSG'];

/**
 * Whether the compiled SQLite addon (with SQLITE_DEFINES, as `PRAGMA compile_options` lists them) and argon2's prebuilt
 * N-API addon (one build for every Node.js) load and work in `node`.
 */
const sqliteLoads = (node) =>
  existsSync(SQLITE_ADDON) &&
  runs(
    node,
    `const db = new (require('better-sqlite3'))(':memory:', { nativeBinding: ${JSON.stringify(SQLITE_ADDON)} });
     const options = db.pragma('compile_options', { simple: false }).map((r) => r.compile_options);
     for (const d of ${JSON.stringify(SQLITE_DEFINES)}) if (!options.includes(d.replace(/^SQLITE_/, ''))) process.exit(1);
     require('@node-rs/argon2').hashSync('x')`,
  );

/** Whether ssh2 itself finds its compiled crypto binding in `node` and uses it. */
const sshCryptoLoads = (node) => existsSync(SSH_CRYPTO_ADDON) && runs(node, `if (!require('ssh2/lib/protocol/crypto.js').bindingAvailable) process.exit(1)`);

/** npm's own node-gyp: npm names it to lifecycle scripts; otherwise it sits in npm's folder. */
function nodeGyp() {
  if (process.env.npm_config_node_gyp) return process.env.npm_config_node_gyp;
  const npm = realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim());
  return path.join(path.dirname(npm), '../node_modules/node-gyp/bin/node-gyp.js');
}

/** `node-gyp rebuild` in `cwd` with the pinned node, against its headers; throws with the compiler's output if it fails. */
function gypRebuild(bin, name, cwd, extra = [], cflags = []) {
  // --nodedir overrides any nodedir in the user's npm config. The output (compiler warnings included) is shown only on failure.
  const gyp = spawnSync(bin, [nodeGyp(), 'rebuild', '--release', `--nodedir=${NODE_DIR}`, ...extra], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    // ssh2's binding.gyp runs `node -e "require('nan')"`: the pinned node first on PATH.
    env: {
      ...process.env,
      npm_config_nodedir: NODE_DIR,
      PATH: `${path.dirname(bin)}${path.delimiter}${process.env.PATH ?? ''}`,
      // gyp's Makefiles add $(CFLAGS) to every C compile: the way to define an option without editing the package.
      ...(cflags.length ? { CFLAGS: [process.env.CFLAGS ?? '', ...cflags].join(' ').trim() } : {}),
    },
  });
  if (gyp.status !== 0) throw new Error(`node-gyp rebuild of ${name} failed:\n${gyp.stdout}${gyp.stderr}${gyp.error ?? ''}`);
}

/**
 * better-sqlite3 and ssh2's crypto binding from source (their packages carry the sources: SQLite's and node-addon-api's,
 * ssh2's binding.cc over nan), against the pinned runtime's headers and its OpenSSL: offline, and what ships is what was
 * compiled here, not a prebuilt binary. ssh2's own install script builds for whichever node runs npm, usually not this one.
 */
function install() {
  const { bin, version } = verifiedNode();
  console.log(`runtime: ${rel(bin)} ${version}, sha256 as recorded in build/runtime.json`);
  const addons = [
    {
      name: 'better-sqlite3',
      file: SQLITE_ADDON,
      loads: sqliteLoads,
      cwd: path.join(ROOT, 'node_modules/better-sqlite3'),
      args: () => ['--force_build=1'],
      cflags: SQLITE_DEFINES.map((d) => `-D${d}`),
    },
    {
      name: "ssh2's crypto binding",
      file: SSH_CRYPTO_ADDON,
      loads: sshCryptoLoads,
      cwd: SSH_CRYPTO_DIR,
      // Its binding.gyp defines REAL_OPENSSL_MAJOR from this (OpenSSL 3's API differs); ssh2's installer passes it the same way.
      args: () => [`--real_openssl_major=${execFileSync(bin, ['-p', 'process.versions.openssl.split(".")[0]'], { encoding: 'utf8' }).trim()}`],
    },
  ];
  for (const a of addons) {
    if (a.loads(bin)) {
      console.log(`runtime: ${rel(a.file)} is already built and loads in ${version}`);
      continue;
    }
    const started = Date.now();
    console.log(`runtime: building ${a.name} from source for ${version} (headers: ${rel(NODE_DIR)}/include) ...`);
    gypRebuild(bin, a.name, a.cwd, a.args(), a.cflags);
    if (!a.loads(bin)) throw new Error(`${rel(a.file)} does not load in ${version} after the build`);
    console.log(`runtime: ${a.name} built for ${version} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
}

function check(args) {
  const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const day = opt('--today') ?? today();
  console.log(checkSupported(opt('--node') ?? verifiedNode().version, day));
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [command, ...args] = process.argv.slice(2);
  try {
    if (command === 'install') install();
    else if (command === 'check') check(args);
    else throw new Error('usage: node build/runtime.mjs install | check [--today YYYY-MM-DD] [--node vX.Y.Z]');
  } catch (e) {
    console.error(`runtime: ${e.message}`);
    process.exitCode = 1;
  }
}
