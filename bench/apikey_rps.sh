#!/usr/bin/env bash
# Requests per second of an authenticated endpoint (GET /api/v1/auths/) with an
# sk- API key and with a JWT, measured with wrk -t2 -c64 -d10s against the
# release binary on a fresh data directory (not run in CI).
# Usage: bash bench/apikey_rps.sh [DURATION]   Output also in bench/out/apikey_rps.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
DUR="${1:-10s}"
OUT=bench/out
mkdir -p "$OUT"
BIN="$OUT/hearth"

if ! command -v wrk >/dev/null; then
  echo "installing wrk (apt-get)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi

CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$BIN" .

DATA="$(mktemp -d)"
LOG="$DATA/serve.log"
"$BIN" serve --host 127.0.0.1 --port 0 --data-dir "$DATA" --log-format json 2>"$LOG" &
PID=$!
trap 'kill -TERM $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; rm -rf "$DATA"' EXIT

ADDR=""
for _ in $(seq 1 200); do
  ADDR=$(grep -o '"addr":"[^"]*"' "$LOG" | head -1 | cut -d'"' -f4 || true)
  [ -n "$ADDR" ] && curl -fsS "http://$ADDR/health" >/dev/null 2>&1 && break
  sleep 0.05
done
[ -n "$ADDR" ] || { echo "server did not start"; cat "$LOG"; exit 1; }
BASE="http://$ADDR"

TOKEN=$(curl -fsS -X POST "$BASE/api/v1/auths/signup" -H 'Content-Type: application/json' \
  -d '{"name":"Bench","email":"bench@example.org","password":"bench-password"}' |
  grep -o '"token":"[^"]*"' | cut -d'"' -f4)
KEY=$(curl -fsS -X POST "$BASE/api/v1/auths/api_keys" -H "Authorization: Bearer $TOKEN" \
  -H 'Content-Type: application/json' -d '{"name":"bench"}' |
  grep -o '"key":"sk-[^"]*"' | cut -d'"' -f4)
[ -n "$TOKEN" ] && [ -n "$KEY" ] || { echo "could not create the admin or the key"; exit 1; }
curl -fsS "$BASE/api/v1/auths/" -H "Authorization: Bearer $KEY" >/dev/null

{
  echo "machine: $(nproc) cores; $(go version)"
  echo "== wrk -t2 -c64 -d$DUR GET /api/v1/auths/ with an sk- API key"
  wrk -t2 -c64 -d"$DUR" -H "Authorization: Bearer $KEY" "$BASE/api/v1/auths/"
  echo
  echo "== wrk -t2 -c64 -d$DUR GET /api/v1/auths/ with a JWT"
  wrk -t2 -c64 -d"$DUR" -H "Authorization: Bearer $TOKEN" "$BASE/api/v1/auths/"
  echo
  echo "server RSS after the runs: $(grep VmRSS /proc/$PID/status | awk '{print $2, $3}')"
} 2>&1 | tee "$OUT/apikey_rps.txt"
