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
# the imports, so a changed type re-checks every file that uses it), Prettier's and ESLint's per-file caches (by
# content). ESLint's cache does not follow imports, and the type-aware rules read other files' types: a file that
# did not change keeps its cached result even when a type it uses changed. So CI (CI set), and CHECKS_CACHE=0,
# lint every file; `npm run lint` never uses the cache.
cache=test/.artifacts/checks-cache
mkdir -p "$cache"
declare -A extra=(
  [typecheck]="--incremental --tsBuildInfoFile $cache/tsc.tsbuildinfo"
  [format:check]="--cache --cache-location $cache/prettier"
)
if [ -z "${CI:-}" ] && [ "${CHECKS_CACHE:-1}" != 0 ]; then extra[lint]="--cache --cache-strategy content --cache-location $cache/eslint"; fi
checks=(lint typecheck format:check depcheck check:schema)
for c in "${checks[@]}"; do
  # shellcheck disable=SC2086 # the extra flags are words
  npm run --silent "$c" -- ${extra[$c]:-} >"$out/$c" 2>&1 &
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
