#!/usr/bin/env bash
# Runs the node:test suite through its bundles on the project's runtime (build/runtime.json).
#   bash test/run.sh [NODE_TEST_ARGS...]         every test file except the device lab's (npm test)
#   bash test/run.sh --lab [NODE_TEST_ARGS...]   the device lab's files, one at a time, the lab up before and down after (npm run test:lab)
# A lab file is one under test/lab/, one that imports test/lab/lab.ts (test/web/e2e.browser.test.ts), or a heavy
# scenario that says so in its first lines (`// Heavy scenario: runs in npm run test:lab`): the accessibility sweep of
# every page, the first hour against the built executable, the API reference in Chromium, big captures.
set -uo pipefail
cd "$(dirname "$0")/.."
set=suite
if [ "${1:-}" = --lab ]; then
  set=lab
  shift
fi
# The suite runs on the node that dist/confvault embeds, installed by npm ci into node_modules/.bin (npm puts that folder
# first on PATH for `npm test`; this line does it when the script is started directly).
if [ ! -x node_modules/.bin/node ]; then echo "node_modules/.bin/node is missing: run npm ci first" >&2; exit 1; fi
export PATH="$PWD/node_modules/.bin:$PATH"
echo "test runner: node $(node --version) ($(command -v node))"
shopt -s globstar nullglob # the file list is expanded here, for the order below
lab=(test/lab/**/*.test.ts)
for f in test/**/*.test.ts; do
  case "$f" in
    test/lab/*) ;;
    *) if grep -qE "from '(\.\./)+lab/lab'" "$f" || head -5 "$f" | grep -q '^// Heavy scenario: runs in npm run test:lab'; then lab+=("$f"); fi ;;
  esac
done
files=()
if [ "$set" = lab ]; then
  files=("${lab[@]}")
else
  for f in test/**/*.test.ts; do
    case " ${lab[*]} " in *" $f "*) ;; *) files+=("$f") ;; esac
  done
fi
if [ ${#files[@]} -eq 0 ]; then echo "no test files found" >&2; exit 1; fi
# The longest files of the last run first (test/helpers/durations.mjs; new files first of all), so that no long file
# starts last and keeps one slot busy while the others idle.
durations=test/.artifacts/durations.json
[ "$set" = lab ] && durations=test/.artifacts/durations-lab.json
count=${#files[@]}
mapfile -t files < <(node test/helpers/durations.mjs "$durations" "${files[@]}")
if [ ${#files[@]} -ne "$count" ]; then echo "durations.mjs: ${#files[@]} files for $count" >&2; exit 1; fi
# Three files at a time on two cores: part of the suite's wall time is files waiting (Chromium, timers, children),
# which a third slot fills. The lab's device files take the whole lab one at a time (acquireLabLock in test/lab/lab.ts),
# so two slots there: one device file at a time, a heavy scenario beside it. TEST_CONCURRENCY overrides it.
concurrency=${TEST_CONCURRENCY:-3}
[ "$set" = lab ] && concurrency=${TEST_CONCURRENCY:-2}
# The device lab needs root (network namespaces); without it the lab's files skip themselves with the reason (fail in CI).
lab_up() { [ "$set" = lab ] && [ -x test/lab/lab.sh ] && [ "$(id -u)" = 0 ]; }
if lab_up; then
  echo "device lab: bash test/lab/lab.sh ensure"
  # A lab that does not come up is reported by each file's own ensureLab() (a failure in CI, a skip outside it).
  bash test/lab/lab.sh ensure >/dev/null || echo "the device lab did not come up (see /tmp/confvault-lab/dev/*/start.log); each file reports it" >&2
fi
# The CLI children start from one bundle of src/ made now (build/cli-bundle.mjs, see cliArgv in
# test/helpers/appliance.ts): a third of the CPU time of starting each one through tsx.
export TEST_CLI_BUNDLE="$PWD/test/.artifacts/confvault-cli.cjs"
# V8's code cache on disk for every process of the suite (test files, CLI children, servers): a module unchanged
# since the last process that loaded it is not compiled again (Node checks each entry against the module's source).
export NODE_COMPILE_CACHE="$PWD/test/.artifacts/compile-cache"
node build/cli-bundle.mjs "$TEST_CLI_BUNDLE" || exit 1
# The worker threads' code (backups, search and diff, compliance) made once too (build/worker-bundles.mjs): from source,
# each process that starts a worker would otherwise bundle src/ with esbuild first (about 0.3 s of CPU each time).
export CONFVAULT_WORKER_BUNDLES="$PWD/test/.artifacts/workers-$set"
node build/worker-bundles.mjs "$CONFVAULT_WORKER_BUNDLES" >/dev/null || exit 1
# Each test file runs from a bundle of itself and the src/ and test/ modules it imports (build/test-bundle.mjs):
# tsx's loader hooks, which see every module a file loads, cost about a third of a typical file's CPU time.
# TEST_BUNDLE=0 runs the TypeScript files through tsx instead (a failure's stack then names .ts lines directly;
# with the bundles, NODE_OPTIONS=--enable-source-maps does).
# Each file's time goes to $durations for the next run's order, unless the caller chose the reporters.
reporters=(--test-reporter=spec --test-reporter-destination=stdout --test-reporter=./test/helpers/durations.mjs --test-reporter-destination="$durations")
case " $* " in *" --test-reporter"*) reporters=() ;; esac
if [ "${TEST_BUNDLE:-1}" = 0 ]; then
  node --import tsx --test --test-concurrency="$concurrency" "${reporters[@]}" "$@" "${files[@]}"
else
  # The lab's run has its own bundles and data template, so that it may run beside the suite.
  suffix=""
  [ "$set" = lab ] && suffix="-lab"
  mapfile -t bundled < <(node build/test-bundle.mjs "test/.artifacts/suite$suffix" test/helpers/data-template.ts "${files[@]}") || exit 1
  if [ ${#bundled[@]} -ne $((${#files[@]} + 1)) ]; then echo "test bundle: ${#bundled[@]} files for ${#files[@]}" >&2; exit 1; fi
  # The data dir every test appliance starts as a copy of (makeDataTemplate in test/helpers/appliance.ts).
  export TEST_DATA_TEMPLATE="$PWD/test/.artifacts/data-template$suffix"
  rm -rf "$TEST_DATA_TEMPLATE"
  node "${bundled[0]}" "$TEST_DATA_TEMPLATE" || exit 1
  bundled=("${bundled[@]:1}")
  node --test --test-concurrency="$concurrency" "${reporters[@]}" "$@" "${bundled[@]}"
fi
status=$?
if lab_up; then bash test/lab/lab.sh down >/dev/null 2>&1 || true; fi
exit $status
