// How long each test file took in the last run of test/run.sh, and the order that makes of the next run.
// As a node:test reporter (`--test-reporter=./test/helpers/durations.mjs`): writes JSON { "test/x.test.ts": seconds }
// to its destination, the sum of each file's top-level tests. As a script (`node durations.mjs FILE.json TEST...`):
// prints the given test files longest first by that record (files it does not know keep their place, first), so
// that the longest files do not start last, with the other slots idle while they finish.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** A test file's path in the repository, whether it ran from its bundle (test/.artifacts/suite/...mjs) or itself. */
function sourceOf(file) {
  const rel = path.relative(process.cwd(), file);
  const m = /^test\/\.artifacts\/[^/]+\/(.*)\.mjs$/.exec(rel);
  return m ? `${m[1]}.ts` : rel;
}

export default async function* durations(source) {
  const seconds = {};
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      const file = sourceOf(event.data.file);
      seconds[file] = (seconds[file] ?? 0) + (event.data.details.duration_ms ?? 0) / 1000;
    }
  }
  for (const f of Object.keys(seconds)) seconds[f] = Math.round(seconds[f] * 10) / 10;
  yield `${JSON.stringify(seconds, null, 1)}\n`;
}

/** The last run's seconds per file; an absent, empty or broken record (a run cut short while writing it) orders nothing. */
function readRecord(record) {
  if (!existsSync(record)) return {};
  try {
    const seconds = JSON.parse(readFileSync(record, 'utf8'));
    return seconds && typeof seconds === 'object' ? seconds : {};
  } catch {
    return {};
  }
}

if (import.meta.main) {
  const [record, ...files] = process.argv.slice(2);
  const seconds = readRecord(record);
  const known = (f) => (typeof seconds[f] === 'number' ? seconds[f] : Infinity);
  const ordered = files.map((f, i) => ({ f, i })).sort((a, b) => known(b.f) - known(a.f) || a.i - b.i);
  for (const { f } of ordered) console.log(f);
}
