// test/checks.sh skips ESLint only when lint-stamp's digest of the tree is the one of its last clean run: any change ESLint's result can depend on must change it (ESLint's own per-file cache missed a changed imported type).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
// @ts-expect-error a plain .mjs helper (run by test/checks.sh), without a declaration file
import { lintStamp } from '../helpers/lint-stamp.mjs';

const stamp = lintStamp as (dir: string) => Promise<string>;
const dir = mkdtempSync(path.join(tmpdir(), 'confvault-lint-stamp-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const write = (rel: string, text: string) => {
  mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  writeFileSync(path.join(dir, rel), text);
};

test('the digest changes with every file ESLint or its type information reads, and with nothing else', async () => {
  write('package.json', '{ "type": "module" }\n');
  write('eslint.config.js', "export default [{ ignores: ['dist/', 'test/.artifacts/'] }, { rules: {} }];\n");
  write('tsconfig.json', '{ "compilerOptions": { "strict": true } }\n');
  write('node_modules/.package-lock.json', '{ "lockfileVersion": 3 }\n');
  // The case ESLint's cache got wrong: b.ts does not change, but the type it imports does (a floating promise now).
  write('src/a.ts', 'export function save(): void {}\n');
  write('src/b.ts', "import { save } from './a';\nsave();\n");
  const first = await stamp(dir);
  assert.equal(await stamp(dir), first, 'the same tree, the same digest');

  const changes: [string, () => void][] = [
    ['a type another file uses', () => write('src/a.ts', 'export async function save(): Promise<void> {}\n')],
    ['a new file', () => write('test/new.test.ts', 'export {};\n')],
    ['a file in a git-ignored folder ESLint still lints', () => write('.tmp/x.ts', 'export {};\n')],
    ['tsconfig.json', () => write('tsconfig.json', '{ "compilerOptions": { "strict": false } }\n')],
    ['the ESLint config', () => write('eslint.config.js', "export default [{ ignores: ['dist/', 'test/.artifacts/'] }, { rules: { 'no-var': 'error' } }];\n")],
    ['the installed packages', () => write('node_modules/.package-lock.json', '{ "lockfileVersion": 3, "packages": {} }\n')],
    [
      'a renamed file',
      () => {
        rmSync(path.join(dir, 'test/new.test.ts'));
        write('test/renamed.test.ts', 'export {};\n');
      },
    ],
  ];
  let last = first;
  for (const [what, change] of changes) {
    change();
    const now = await stamp(dir);
    assert.notEqual(now, last, `${what} changes the digest`);
    last = now;
  }
  // What ESLint never reads does not cost a full lint.
  write('dist/bundle.js', 'var x = 1;\n');
  write('test/.artifacts/out.json', '{}\n');
  write('docs/page.md', '# text\n');
  mkdirSync(path.join(dir, 'elsewhere'));
  symlinkSync(path.join(dir, 'elsewhere'), path.join(dir, 'linked'));
  assert.equal(await stamp(dir), last, 'ignored folders and non-source files leave it as it was');
});
