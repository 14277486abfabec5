#!/usr/bin/env bash
# The checks `npm test` runs before the suite, side by side (two cores finish them in about two thirds of the time
# one after the other takes): lint, format, types, layers. Each one's output is printed once all are done, in this
# order; the exit status is 1 if any failed, naming them. check:schema: schema/template.schema.json is what
# src/templates/schema.ts generates (npm run gen:schema).
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
checks=(lint format:check typecheck depcheck check:schema)
for c in "${checks[@]}"; do
  npm run --silent "$c" >"$out/$c" 2>&1 &
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
