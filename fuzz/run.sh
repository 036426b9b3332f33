#!/usr/bin/env bash
# Fuzzes every target for SECONDS each (default 60) with cargo-fuzz and libFuzzer, starting from
# the seeds in seeds/ (the unseal seeds are generated with the fixed fuzzing key) and growing
# corpus/ (not committed), and
# prints the executions and findings of each run. Crashes land in artifacts/<target>/.
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`). cargo-fuzz wants a nightly compiler: the
# pinned stable one is used with RUSTC_BOOTSTRAP=1 and no sanitizer (coverage-guided only).
#
#   fuzz/run.sh            # 60 s per target
#   fuzz/run.sh 600        # 10 minutes per target
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/../target/fuzz}"
cargo run -q --bin unseal_seeds -- seeds/unseal
for target in decode_message http_headers uri_template unseal base64 schema_check; do
  mkdir -p "corpus/$target" "artifacts/$target"
  log="$(mktemp)"
  if cargo fuzz run -s none "$target" "corpus/$target" "seeds/$target" -- \
      -max_total_time="$seconds" -artifact_prefix="artifacts/$target/" -print_final_stats=1 \
      >"$log" 2>&1; then
    result=ok
  else
    result=FAILED
  fi
  runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
  echo "$target: $result, $runs executions in ${seconds}s"
  if [ "$result" = FAILED ]; then tail -40 "$log"; fi
  rm -f "$log"
done
