#!/usr/bin/env bash
# The public API of the three crates, compared with the snapshots in public-api/ (one line per
# item, with signatures; see scripts/public_api.py). A change to the surface fails until the
# snapshot is updated in the same commit, so every change is a reviewed diff:
#
#   scripts/public-api.sh           # compare (CI)
#   scripts/public-api.sh --bless   # write the snapshots after a deliberate change
#
# rustdoc's JSON output needs a nightly toolchain (`rustup run nightly`); without one this
# says so and exits 0, unless MCP_REQUIRE_PUBLIC_API=1.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
if ! rustup run nightly rustc -V >/dev/null 2>&1; then
  echo "public-api: skipped, no nightly toolchain (rustdoc's JSON output needs one)" >&2
  [ "${MCP_REQUIRE_PUBLIC_API:-0}" = 1 ] && exit 1
  exit 0
fi
target="${CARGO_TARGET_DIR:-$repo/target}"
status=0
for crate in modelctx modelctx-core modelctx-macros; do
  cargo +nightly rustdoc -q -p "$crate" --all-features --lib -- -Z unstable-options --output-format json
  json="$target/doc/${crate//-/_}.json"
  snapshot="public-api/$crate.txt"
  if [ "${1:-}" = --bless ]; then
    python3 scripts/public_api.py "$json" > "$snapshot.new"
    mv "$snapshot.new" "$snapshot"
    echo "public-api: wrote $snapshot ($(wc -l < "$snapshot") items)"
  elif ! python3 scripts/public_api.py "$json" | diff -u "$snapshot" - ; then
    echo "public-api: $crate's public API differs from $snapshot (above); if the change is meant, run scripts/public-api.sh --bless and commit the snapshot" >&2
    status=1
  else
    echo "public-api: $crate matches $snapshot"
  fi
done
exit "$status"
