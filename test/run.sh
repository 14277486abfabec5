#!/usr/bin/env bash
# Runs the whole node:test suite through tsx on the project's runtime (build/runtime.json), then stops the device lab.
set -uo pipefail
cd "$(dirname "$0")/.."
# The suite runs on the node that dist/confvault embeds, installed by npm ci into node_modules/.bin (npm puts that folder
# first on PATH for `npm test`; this line does it when the script is started directly).
if [ ! -x node_modules/.bin/node ]; then echo "node_modules/.bin/node is missing: run npm ci first" >&2; exit 1; fi
export PATH="$PWD/node_modules/.bin:$PATH"
echo "test runner: node $(node --version) ($(command -v node))"
shopt -s globstar nullglob # the file list is expanded here, for the order below
# Order, for the wall time only: the files that use the device lab take it one at a time (test/lab/lab.ts), so
# they are spread evenly through the list instead of waiting for each other in the runner's slots; the other files
# that mostly wait (headless Chromium) start first, before a first run has recorded durations (below). The runner
# starts files in this order as slots free.
lab=(test/lab/*.test.ts test/web/e2e.browser.test.ts)
files=()
for f in test/**/*.browser.test.ts; do
  case " ${lab[*]} " in *" $f "*) ;; *) files+=("$f") ;; esac
done
for f in test/**/*.test.ts; do
  case " ${lab[*]} ${files[*]} " in *" $f "*) ;; *) files+=("$f") ;; esac
done
if [ ${#files[@]} -eq 0 ]; then echo "no test files found" >&2; exit 1; fi
# Then the longest files of the last run first (test/helpers/durations.mjs; new files first of all), so that no long
# file starts last and keeps one slot busy while the others idle.
durations=test/.artifacts/durations.json
count=${#files[@]}
mapfile -t files < <(node test/helpers/durations.mjs "$durations" "${files[@]}")
if [ ${#files[@]} -ne "$count" ]; then echo "durations.mjs: ${#files[@]} files for $count" >&2; exit 1; fi
ordered=()
step=$(((${#files[@]} + ${#lab[@]} - 1) / ${#lab[@]}))
for i in "${!files[@]}"; do
  if [ $((i % step)) -eq 0 ] && [ $((i / step)) -lt ${#lab[@]} ]; then ordered+=("${lab[$((i / step))]}"); fi
  ordered+=("${files[$i]}")
done
# Three files at a time on two cores: about a third of the suite's wall time is files waiting (the lab, Chromium,
# timers), which a third slot fills. TEST_CONCURRENCY overrides it.
# The CLI children start from one bundle of src/ made now (build/cli-bundle.mjs, see cliArgv in
# test/helpers/appliance.ts): a third of the CPU time of starting each one through tsx.
export TEST_CLI_BUNDLE="$PWD/test/.artifacts/confvault-cli.cjs"
# V8's code cache on disk for every process of the suite (test files, CLI children, servers): a module unchanged
# since the last process that loaded it is not compiled again (Node checks each entry against the module's source).
export NODE_COMPILE_CACHE="$PWD/test/.artifacts/compile-cache"
node build/cli-bundle.mjs "$TEST_CLI_BUNDLE" || exit 1
# Each test file runs from a bundle of itself and the src/ and test/ modules it imports (build/test-bundle.mjs):
# tsx's loader hooks, which see every module a file loads, cost about a third of a typical file's CPU time.
# TEST_BUNDLE=0 runs the TypeScript files through tsx instead (a failure's stack then names .ts lines directly;
# with the bundles, NODE_OPTIONS=--enable-source-maps does).
# Each file's time goes to $durations for the next run's order, unless the caller chose the reporters.
reporters=(--test-reporter=spec --test-reporter-destination=stdout --test-reporter=./test/helpers/durations.mjs --test-reporter-destination="$durations")
case " $* " in *" --test-reporter"*) reporters=() ;; esac
if [ "${TEST_BUNDLE:-1}" = 0 ]; then
  node --import tsx --test --test-concurrency="${TEST_CONCURRENCY:-3}" "${reporters[@]}" "$@" "${ordered[@]}"
else
  mapfile -t bundled < <(node build/test-bundle.mjs test/.artifacts/suite test/helpers/data-template.ts "${ordered[@]}") || exit 1
  if [ ${#bundled[@]} -ne $((${#ordered[@]} + 1)) ]; then echo "test bundle: ${#bundled[@]} files for ${#ordered[@]}" >&2; exit 1; fi
  # The data dir every test appliance starts as a copy of (makeDataTemplate in test/helpers/appliance.ts).
  export TEST_DATA_TEMPLATE="$PWD/test/.artifacts/data-template"
  rm -rf "$TEST_DATA_TEMPLATE"
  node "${bundled[0]}" "$TEST_DATA_TEMPLATE" || exit 1
  bundled=("${bundled[@]:1}")
  node --test --test-concurrency="${TEST_CONCURRENCY:-3}" "${reporters[@]}" "$@" "${bundled[@]}"
fi
status=$?
if [ -x test/lab/lab.sh ] && [ "$(id -u)" = 0 ]; then bash test/lab/lab.sh down >/dev/null 2>&1 || true; fi
exit $status
