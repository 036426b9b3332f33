#!/usr/bin/env bash
# Attacks on the Streamable HTTP server that need many connections or seconds (bounded: at
# most 1,100 connections, about 30 s in all). CI runs it after the tests:
#
#   scripts/http-probe.sh
#
# 1. Slow headers under a small open-files limit: the server (examples/http_limits.rs) runs
#    with `ulimit -n 1024`, a 2 s header-read timeout and the default connection cap (512);
#    1,100 connections trickle a request head one byte a second. A normal call must still be
#    answered (within 10 s), and the server never holds more descriptors than the cap allows.
#
# Exit status 0 when every probe passed.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
cargo build --quiet --example http_limits --example http_probe
bin="${CARGO_TARGET_DIR:-$repo/target}/debug/examples"

out="$(mktemp)"
(
    ulimit -n 1024
    # No per-client share here: this probe is about the header timeout and the global cap
    # (tests/hardening_http.rs checks the share).
    LIMITS_HEADER_TIMEOUT_MS=2000 LIMITS_CONNECTIONS_PER_CLIENT=100000 exec "$bin/http_limits"
) >"$out" &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$out"' EXIT
for _ in $(seq 50); do
    grep -q http "$out" 2>/dev/null && break
    sleep 0.1
done
port="$(sed -n 's#.*:\([0-9]*\)/mcp#\1#p' "$out" | head -1)"
[ -n "$port" ] || { echo "the server did not start"; exit 1; }

# The attacker needs more descriptors than the server has.
ulimit -n 4096 2>/dev/null || true
"$bin/http_probe" --port "$port" --connections 1100 --within 10 --seconds 15 --pid "$server"
echo "http-probe: passed"
