#!/usr/bin/env bash
# Reproduces the table of BENCHMARKS.md on this machine, in one run:
#
#   - builds (release) the same one-tool server `add(a, b)` with this SDK, with rmcp 3 (the
#     official Rust SDK), as a hand-written std + serde_json stdio loop, and as a bare hyper
#     HTTP server (bench/, its own workspace: the SDK's builds never compile rmcp);
#   - measures this SDK's client and rmcp's client against the raw stdio server (1 and 64
#     requests in flight; calls/s and the client's CPU per call), beside the hand-written
#     driver's figures against the same server;
#   - drives each with bench/src/bin/driver.rs: the server pinned to CPU 0, the driver to CPU 1
#     (taskset), stdio sequential and pipelined (64 in flight), HTTP keep-alive at 1 and 32
#     connections, a 100,000-call stdio flood; server CPU and peak RSS from /proc; stdio
#     sequential once more with server and driver both on CPU 1 (`SERVER_CPU=1`);
#   - runs the in-process engine benches (bench/benches/engine.rs) and the bearer-token check
#     (bench/src/bin/auth-verify.rs: RS256/ES256 signature checks, remembered tokens);
#   - times clean and incremental builds of the one-tool example with each SDK
#     (skip with BUILD_TIMES=0);
#   - prints the markdown table and writes bench/results/results.json and BENCHMARKS.svg.
#
# Usage: scripts/bench.sh            (about 10 minutes on 2 cores, build times included)
#        SECONDS_PER_HTTP_RUN=5 BUILD_TIMES=0 scripts/bench.sh
#        BENCH_PROFILE=lto scripts/bench.sh   (every program built with fat LTO and one
#                                              codegen unit: bench/Cargo.toml's `lto` profile)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo/bench"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target/bench}"
http_seconds="${SECONDS_PER_HTTP_RUN:-5}"
mkdir -p results
profile="${BENCH_PROFILE:-release}"
# The default profile's results feed BENCHMARKS.svg; another profile's are kept beside them.
suffix_of_run=""; [ "$profile" != release ] && suffix_of_run="-$profile"
out="results/results$suffix_of_run.jsonl"
: >"$out"

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(uname -r)"
echo "== building"
echo "   profile: $profile"
cargo build --profile "$profile" --bins -q
bin="$CARGO_TARGET_DIR/$profile"
rmcp_version="$(grep -A1 '^name = "rmcp"$' Cargo.lock | sed -n 's/^version = "\(.*\)"/\1/p')"
echo "   rmcp $rmcp_version"

pin() { if command -v taskset >/dev/null; then taskset -c "$1" "${@:2}"; else "${@:2}"; fi; }

record() { # impl scenario figures-json
  printf '{"impl":"%s","scenario":"%s","figures":%s}\n' "$1" "$2" "$3" >>"$out"
  echo "   $1 / $2: $3"
}

OURS="modelctx (this SDK)"
RMCP="rmcp"
LIMIT="limit (raw loop / bare hyper)"

echo "== stdio"
for mode in sequential pipelined flood; do
  record "$OURS" "stdio-$mode" "$(pin 1 "$bin/driver" stdio "$mode" legacy -- "$bin/ours-stdio")"
  record "$RMCP" "stdio-$mode" "$(pin 1 "$bin/driver" stdio "$mode" legacy -- "$bin/rmcp-stdio")"
  record "$LIMIT" "stdio-$mode" "$(pin 1 "$bin/driver" stdio "$mode" legacy -- "$bin/raw-stdio")"
  record "$OURS, 2026 wire" "stdio-$mode" "$(pin 1 "$bin/driver" stdio "$mode" modern -- "$bin/ours-stdio")"
  if [ "$mode" != flood ]; then
    record "$LIMIT, 2026 wire" "stdio-$mode" "$(pin 1 "$bin/driver" stdio "$mode" modern -- "$bin/raw-stdio")"
  fi
done
# One request at a time with the server on the driver's core (SERVER_CPU=1): every call is
# two context switches on one core, the variant the 1-in-flight target is stated for.
same=(env SERVER_CPU=1)
for era in legacy modern; do
  suffix_era=""; [ "$era" = modern ] && suffix_era=", 2026 wire"
  record "$OURS$suffix_era" "stdio-sequential-same-core" "$(pin 1 "${same[@]}" "$bin/driver" stdio sequential $era -- "$bin/ours-stdio")"
  record "$LIMIT$suffix_era" "stdio-sequential-same-core" "$(pin 1 "${same[@]}" "$bin/driver" stdio sequential $era -- "$bin/raw-stdio")"
done
record "$RMCP" "stdio-sequential-same-core" "$(pin 1 "${same[@]}" "$bin/driver" stdio sequential legacy -- "$bin/rmcp-stdio")"

echo "== clients (stdio, against the raw server: the client is what is measured)"
server0=("$bin/raw-stdio")
command -v taskset >/dev/null && server0=(taskset -c 0 "$bin/raw-stdio")
for depth in 1 64; do
  record "modelctx client" "client-stdio-$depth" "$(pin 1 "$bin/client-ours" "$depth" 100000 -- "${server0[@]}")"
  record "rmcp client" "client-stdio-$depth" "$(pin 1 "$bin/client-rmcp" "$depth" 100000 -- "${server0[@]}")"
done

http_run() { # impl label server-args... ; mode comes from $mode
  local impl="$1" cmd=("${@:2}") log pid url
  log="$(mktemp)"
  # taskset execs the server, so $! is the server's own PID (for /proc and for kill).
  if command -v taskset >/dev/null; then
    taskset -c 0 "${cmd[@]}" >"$log" 2>/dev/null &
  else
    "${cmd[@]}" >"$log" 2>/dev/null &
  fi
  pid=$!
  for _ in $(seq 1 100); do [ -s "$log" ] && break; sleep 0.05; done
  url="$(head -n 1 "$log")"
  for conns in 1 32; do
    record "$impl" "http-$conns$suffix" "$(pin 1 "$bin/driver" http "$url" "$conns" "$http_seconds" "$mode" "$pid")"
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -f "$log"
}

echo "== HTTP"
suffix=""
mode=modern  http_run "$OURS" "$bin/ours-http" 0
mode=session http_run "$RMCP" "$bin/rmcp-http" --nodelay 0
mode=plain   http_run "$LIMIT" "$bin/hyper-http" 0
# The same 2026 requests as ours gets (routing headers, `_meta` envelope), answered by bare
# hyper: the limit for the 2026 wire.
suffix="-2026"
mode=modern  http_run "$LIMIT" "$bin/hyper-http" 0
suffix="-session"
mode=session http_run "$OURS, 2025 session" "$bin/ours-http" 0
suffix="-stateless"
mode=plain   http_run "$RMCP, stateless JSON" "$bin/rmcp-http" --stateless --nodelay 0
suffix="-docs"
mode=session http_run "$RMCP, exactly as its docs serve it (no TCP_NODELAY)" "$bin/rmcp-http" 0

echo "== in-process engine"
cargo bench -q --profile "$profile" --bench engine 2>/dev/null | while read -r line; do
  name="$(echo "$line" | sed -n 's/.*"bench":"\([^"]*\)".*/\1/p')"
  record "$OURS" "in-process: $name" "$line"
done

echo "== bearer tokens (JwtVerifier, fixed key set)"
line="$(pin 1 "$bin/auth-verify" 20000)"
echo "   $line"

if [ "${BUILD_TIMES:-1}" != 0 ]; then
  echo "== build time of the one-tool example (dev profile, clean then after touching main.rs)"
  # ours: default features (stdio and HTTP, validation); ours-stdio: the features the example
  # uses, chosen as the rmcp example chooses its own (stdio, validation). Both build the SDK
  # from its path, as local code (incrementally, every lint); ours-published builds `ours`
  # against the SDK as crates.io would serve it (scripts/published-example.sh), as a user's
  # build and the rmcp build get their dependencies: the like-for-like figure.
  published="$(mktemp -d)"
  "$repo/scripts/published-example.sh" "$published" >/dev/null
  for which in ours-published rmcp ours ours-stdio; do
    dir="$repo/bench/buildtime/$which"
    [ "$which" = ours-published ] && dir="$published/one-tool"
    target="$(mktemp -d)"
    start=$(date +%s.%N)
    (cd "$dir" && CARGO_TARGET_DIR="$target" cargo build -q)
    clean=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.1f", a - b }')
    # ours-stdio builds the same source as ours (its manifest points there).
    source="$dir/src/main.rs"; [ "$which" = ours-stdio ] && source="$repo/bench/buildtime/ours/src/main.rs"
    touch "$source"
    start=$(date +%s.%N)
    (cd "$dir" && CARGO_TARGET_DIR="$target" cargo build -q)
    incremental=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.1f", a - b }')
    rm -rf "$target"
    impl="$OURS"; [ "$which" = rmcp ] && impl="$RMCP"
    [ "$which" = ours-stdio ] && impl="$OURS, stdio only (no default features; validation)"
    [ "$which" = ours ] && impl="$OURS, from its path (incremental, as local code)"
    record "$impl" "build" "{\"clean_s\":$clean,\"incremental_s\":$incremental}"
  done
  rm -rf "$published"
fi

echo "== table"
"$bin/report" "$out" "results/results$suffix_of_run.json"
if [ "$profile" = release ]; then
  "$bin/chart" results/results.json "$repo/BENCHMARKS.svg"
fi
