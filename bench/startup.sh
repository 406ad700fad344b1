#!/usr/bin/env bash
# Start-up figures for the issue notes (not run in CI):
#   - size of the stripped, CGO-free release binary;
#   - N=20 starts on an EXISTING database: exec → first GET /health 200
#     (bench/startup/main.go polls with sub-millisecond resolution), min/median/max;
#   - idle RSS (VmRSS) 2 s after start.
# Usage: bash bench/startup.sh [N]   Output is also kept in bench/out/startup.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
N="${1:-20}"
OUT=bench/out
mkdir -p "$OUT"
BIN="$OUT/hearth"
DATA="$(mktemp -d)"
trap 'rm -rf "$DATA"' EXIT

{
  echo "== build: CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' ($(go version))"
  CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$BIN" .
  size=$(stat -c %s "$BIN")
  awk -v s="$size" 'BEGIN { printf "binary size: %d bytes (%.1f MiB)\n", s, s/1048576 }'
  echo "machine: $(nproc) cores, $(uname -sr)"
  echo "== starts"
  go run ./bench/startup -bin "$BIN" -data-dir "$DATA" -n "$N"
} 2>&1 | tee "$OUT/startup.txt"
