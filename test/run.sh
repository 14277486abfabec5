#!/usr/bin/env bash
# Runs the whole node:test suite through tsx (Node 20 needs the file list expanded here), then stops the device lab.
set -uo pipefail
cd "$(dirname "$0")/.."
shopt -s globstar nullglob
files=(test/**/*.test.ts)
if [ ${#files[@]} -eq 0 ]; then echo "no test files found" >&2; exit 1; fi
node --import tsx --test --test-concurrency=2 "$@" "${files[@]}"
status=$?
if [ -x test/lab/lab.sh ] && [ "$(id -u)" = 0 ]; then bash test/lab/lab.sh down >/dev/null 2>&1 || true; fi
exit $status
