#!/usr/bin/env bash
# npm test: the checks (test/checks.sh: lint, format, types, layers, schema) and the suite (test/run.sh) side by side.
# The suite leaves part of the two cores idle (files waiting on children, timers, the network), which the checks fill:
# about 50 s of wall time less than one after the other. The checks' output is printed after the suite's; the exit
# status is 1 if either failed, naming it. Arguments go to test/run.sh (node:test's own flags).
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
bash test/checks.sh >"$out" 2>&1 &
checks=$!
bash test/run.sh "$@"
suite=$?
wait "$checks"
checked=$?
echo "== checks (test/checks.sh), run beside the suite"
cat "$out"
failed=()
[ "$checked" -ne 0 ] && failed+=(checks)
[ "$suite" -ne 0 ] && failed+=(suite)
if [ ${#failed[@]} -gt 0 ]; then
  echo "npm test failed: ${failed[*]}" >&2
  exit 1
fi
