#!/usr/bin/env bash
# smoke.sh [EXE | DIR] - runs a built confvault executable ALONE in an empty temp dir with a clean environment: version, init, apikey, serve, SIGTERM.
# Default: dist/confvault of this repo. DIR means DIR/confvault or DIR/dist/confvault. Exit status 0 only if every check passed.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
arg=${1:-$REPO/dist/confvault}
if [ -d "$arg" ]; then
  if [ -f "$arg/confvault" ]; then arg=$arg/confvault; else arg=$arg/dist/confvault; fi
fi
if [ ! -x "$arg" ]; then echo "FAIL no executable at $arg (run npm run build)"; exit 1; fi

failures=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

tmp=$(mktemp -d /tmp/confvault-smoke.XXXXXX)
server_pid=
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill -KILL "$server_pid" 2>/dev/null; fi
  if [ "$failures" -eq 0 ]; then rm -rf "$tmp"; else echo "(kept $tmp for inspection)"; fi
}
trap cleanup EXIT

# The executable alone: no node_modules beside it or above it, so nothing can be loaded from a package folder.
cp "$arg" "$tmp/confvault"
cd "$tmp" || exit 1
for d in "$tmp" /tmp /; do [ -e "$d/node_modules" ] && echo "note: $d/node_modules exists (the executable should not look there anyway)"; done

# Clean environment: no NODE_OPTIONS/NODE_PATH, nothing inherited from npm or CI.
# An array, not a function: a backgrounded function would run in a subshell and $! would not be confvault's pid.
clean=(env -i PATH=/usr/bin:/bin HOME="$tmp")

# --version, also with nothing at all on PATH (so certainly no node).
v=$("${clean[@]}" ./confvault --version 2>&1)
if [[ $v =~ ^confvault\ [0-9]+\.[0-9]+\.[0-9]+ ]]; then pass "--version: $v"; else fail "--version printed: $v"; fi
v2=$(env -i PATH="$tmp/no-such-dir" HOME="$tmp" ./confvault --version 2>&1)
if [ "$v2" = "$v" ]; then pass "--version with an empty PATH"; else fail "--version with an empty PATH printed: $v2"; fi

# init prints the admin password (stdout, once).
if out=$("${clean[@]}" ./confvault init --data-dir ./data 2>init.err) && [ -n "$(tail -n1 <<<"$out")" ]; then
  pass "init (admin password printed, data dir mode $(stat -c %a data))"
else
  fail "init: $(cat init.err)"
fi

# apikey create: the key is the last line of stdout.
key=$("${clean[@]}" ./confvault apikey create admin --data-dir ./data 2>apikey.err | tail -n1)
if [[ $key == cv_* ]]; then pass "apikey create (${key:0:10}…)"; else fail "apikey create: '$key' $(cat apikey.err)"; fi

# status CODE of a GET, optionally with an API key (curl, or node's fetch where curl is missing).
http_status() {
  if command -v curl >/dev/null; then
    curl -s -o /dev/null -w '%{http_code}' --max-time 10 ${2:+-H "X-API-Key: $2"} "$1"
  else
    node -e 'fetch(process.argv[1],{headers:process.argv[2]?{"X-API-Key":process.argv[2]}:{}}).then(r=>process.stdout.write(String(r.status)),()=>process.stdout.write("000"))' "$1" "${2:-}"
  fi
}

# serve on a free port; the URL comes from the JSON log line "confvault listening".
t0=$(date +%s%N)
"${clean[@]}" ./confvault serve --data-dir ./data --listen 127.0.0.1:0 >serve.out 2>serve.err &
server_pid=$!
url=
for _ in $(seq 1 300); do
  url=$(grep -o '"url":"http://127\.0\.0\.1:[0-9]*"' serve.out 2>/dev/null | head -n1 | sed 's/^"url":"//; s/"$//')
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  fail "serve did not print its URL; stderr: $(tail -n 20 serve.err)"
  exit 1
fi
pass "serve listening at $url after $((($(date +%s%N) - t0) / 1000000)) ms"

s=$(http_status "$url/healthz")
if [ "$s" = 200 ]; then pass "GET /healthz 200"; else fail "GET /healthz $s"; fi

s=$(http_status "$url/api/v1/openapi.json")
case $s in
  200) pass "GET /api/v1/openapi.json 200" ;;
  404) pass "GET /api/v1/openapi.json 404 (accepted until the API document lands)" ;;
  *) fail "GET /api/v1/openapi.json $s" ;;
esac

# Without a key the API must refuse (401); with the key it must not (any other answer, e.g. 404 for this path).
s=$(http_status "$url/api/v1/smoke-auth-check")
if [ "$s" = 401 ]; then pass "GET /api/v1/... without a key 401"; else fail "GET /api/v1/... without a key $s (expected 401)"; fi
s=$(http_status "$url/api/v1/smoke-auth-check" "$key")
if [ "$s" != 401 ] && [ "$s" != 000 ]; then pass "GET /api/v1/... with the key $s (authenticated)"; else fail "GET /api/v1/... with the key $s"; fi

# SIGTERM: clean exit 0 within 10 s.
kill -TERM "$server_pid"
for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$server_pid" 2>/dev/null; then
  fail "serve still running 10 s after SIGTERM"
else
  wait "$server_pid"
  rc=$?
  if [ "$rc" = 0 ]; then pass "SIGTERM: exit 0"; else fail "SIGTERM: exit $rc; stderr: $(tail -n 20 serve.err)"; fi
fi
server_pid=

if [ "$failures" -eq 0 ]; then echo "smoke: all checks passed ($v, $(($(stat -c %s confvault) / 1000000)) MB)"; exit 0; fi
echo "smoke: $failures check(s) FAILED"
exit 1
