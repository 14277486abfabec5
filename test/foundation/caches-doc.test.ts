// docs/caches.md against the code: every module of src/ with top-level mutable state has a row naming it, and every row names a file and variables that exist.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../helpers/appliance';

/**
 * Top-level mutable state: a `let`, or a `const` holding a new Map, WeakMap, Set or WeakSet, unless it is typed
 * read-only or named in UPPER_CASE (a constant table).
 */
const STATE = /^(?:export )?(?:let ([A-Za-z_$][\w$]*)|const ([a-z_$][\w$]*)(?:: (?!Readonly)[^=]+)? = new (?:Map|WeakMap|Set|WeakSet)\b)/;

function moduleState(file: string, text: string): string[] {
  return text.split('\n').flatMap((line) => {
    const m = STATE.exec(line);
    return m ? [`${file} ${m[1] ?? m[2]}`] : [];
  });
}

/** Each row's first cell: the files (`src/...`) it names, each followed by the variables (backticked) it names. */
function documented(markdown: string): { file: string; names: string[] }[] {
  const rows = markdown.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| Cache') && !l.startsWith('|---'));
  return rows.flatMap((row) => {
    const cell = row.split('|')[1];
    const out: { file: string; names: string[] }[] = [];
    for (const [, tick] of cell.matchAll(/`([^`]+)`/g)) {
      if (tick.startsWith('src/')) out.push({ file: tick, names: [] });
      else out.at(-1)?.names.push(tick);
    }
    assert.ok(out.length > 0 && out.every((e) => e.names.length > 0), `a row that names no file and variable: ${row.slice(0, 120)}`);
    return out;
  });
}

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(rel);
    return /\.tsx?$/.test(e.name) ? [rel] : [];
  });
}

const doc = readFileSync(path.join(REPO_ROOT, 'docs/caches.md'), 'utf8');

test('the state finder sees a top-level let and a new Map, not a read-only table or a local', () => {
  const text = [
    'let loaded: X | undefined;',
    'const cache = new WeakMap<DB, Y>();',
    'export const seen = new Set<string>();',
    'const TRUE = new Set(["yes"]);',
    'const FAILURES: ReadonlySet<string> = new Set(["x"]);',
    '  let local = 0;',
    'const fixed = 3;',
  ].join('\n');
  assert.deepEqual(moduleState('src/x.ts', text), ['src/x.ts loaded', 'src/x.ts cache', 'src/x.ts seen']);
});

test('every module-level cache or memo of src/ has a row in docs/caches.md', () => {
  const listed = new Set(documented(doc).flatMap((e) => e.names.map((n) => `${e.file} ${n}`)));
  const found = sourceFiles('src').flatMap((file) => moduleState(file, readFileSync(path.join(REPO_ROOT, file), 'utf8')));
  assert.ok(found.length > 20, `only ${found.length} found`);
  assert.deepEqual(
    found.filter((s) => !listed.has(s)),
    [],
    'module-level state without a row in docs/caches.md (add one: key, bound, invalidation, cost of a stale entry)',
  );
});

test('every row of docs/caches.md names a file and variables that exist', () => {
  const stale = documented(doc).flatMap(({ file, names }) => {
    if (!existsSync(path.join(REPO_ROOT, file))) return [`${file} (no such file)`];
    const text = readFileSync(path.join(REPO_ROOT, file), 'utf8');
    return names.filter((n) => !new RegExp(`\\b(?:const|let|class|function|readonly)\\s+${n.replace(/\$/g, '\\$')}\\b`).test(text)).map((n) => `${file} ${n}`);
  });
  assert.deepEqual(stale, []);
});
