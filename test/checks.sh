#!/usr/bin/env bash
# The checks `npm test` runs before the suite, side by side (two cores finish them in about two thirds of the time
# one after the other takes): lint, format, types, layers. Each one's output is printed once all are done, in this
# order; the exit status is 1 if any failed, naming them. check:schema: schema/template.schema.json is what
# src/templates/schema.ts generates (npm run gen:schema).
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# A run after the first redoes only what changed, with caches in test/.artifacts: tsc's incremental build (it follows
# the imports, so a changed type re-checks every file that uses it) and Prettier's per-file cache (by content and
# options: a file's format depends on nothing else). ESLint's own cache is not used: it keys each file by its content
# alone while the type-aware rules read other files' types, so it kept a clean result for a file whose imported type
# had changed. Instead a clean lint is skipped only when nothing it can read changed since (test/helpers/lint-stamp.mjs:
# one digest of the whole tree); any change lints every file. CI (CI set) and CHECKS_CACHE=0 use no cache at all.
cache=test/.artifacts/checks-cache
mkdir -p "$cache"
declare -A extra=()
use_cache=1
if [ -n "${CI:-}" ] || [ "${CHECKS_CACHE:-1}" = 0 ]; then use_cache=0; fi
if [ "$use_cache" = 1 ]; then
  extra[typecheck]="--incremental --tsBuildInfoFile $cache/tsc.tsbuildinfo"
  extra[format:check]="--cache --cache-location $cache/prettier"
fi
# lint_check: npm run lint, unless the tree is what the last clean lint saw.
lint_check() {
  if [ "$use_cache" = 0 ]; then
    npm run --silent lint
    return
  fi
  local stamp
  stamp=$(node test/helpers/lint-stamp.mjs) || return 1
  if [ -f "$cache/eslint.stamp" ] && [ "$(cat "$cache/eslint.stamp")" = "$stamp" ]; then
    echo "(skipped: no file ESLint reads changed since its last clean run)"
    return 0
  fi
  rm -f "$cache/eslint.stamp"
  npm run --silent lint && echo "$stamp" >"$cache/eslint.stamp"
}
checks=(lint typecheck format:check depcheck check:schema)
for c in "${checks[@]}"; do
  if [ "$c" = lint ]; then
    lint_check >"$out/$c" 2>&1 &
  else
    # shellcheck disable=SC2086 # the extra flags are words
    npm run --silent "$c" -- ${extra[$c]:-} >"$out/$c" 2>&1 &
  fi
  echo $! >"$out/$c.pid"
done
failed=()
for c in "${checks[@]}"; do
  if wait "$(cat "$out/$c.pid")"; then status=ok; else status=FAILED; failed+=("$c"); fi
  echo "== npm run $c: $status"
  grep -v '^npm warn' "$out/$c" || true
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "checks failed: ${failed[*]}" >&2
  exit 1
fi
