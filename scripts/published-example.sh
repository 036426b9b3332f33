#!/usr/bin/env bash
# Sets up the one-tool example of bench/buildtime/ours against this SDK as crates.io would
# serve it, in the directory given (created if missing):
#
#   <dir>/vendor     the three crates as `cargo package` makes them, beside the registry crates
#                    the example uses (`cargo vendor`), as one directory source;
#   <dir>/one-tool   the example, depending on `modelctx = "=<version>"` through that source.
#
# Built from a path (bench/buildtime/ours), cargo compiles the SDK's crates as local code:
# incrementally, with every lint. A user's build gets them from the registry, as it gets
# rmcp: not incrementally, lints capped. This is that build, for a like-for-like build time.
#
# Usage: scripts/published-example.sh /tmp/published && cd /tmp/published/one-tool && cargo build
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:?usage: scripts/published-example.sh <dir>}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
rm -rf "$dir/vendor" "$dir/one-tool" "$dir/package"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$repo/Cargo.toml" | head -1)"

(cd "$repo" && CARGO_TARGET_DIR="$dir/package" cargo package -q --no-verify --allow-dirty \
  -p modelctx-macros -p modelctx-core -p modelctx)
(cd "$repo/bench/buildtime/ours" && cargo vendor -q "$dir/vendor" >/dev/null)
for crate in modelctx modelctx-core modelctx-macros; do
  file="$dir/package/package/$crate-$version.crate"
  tar xzf "$file" -C "$dir/vendor"
  sum="$(sha256sum "$file" | cut -d' ' -f1)"
  printf '{"files":{},"package":"%s"}\n' "$sum" >"$dir/vendor/$crate-$version/.cargo-checksum.json"
done
rm -rf "$dir/package"

mkdir -p "$dir/one-tool/src" "$dir/one-tool/.cargo"
cp "$repo/bench/buildtime/ours/src/main.rs" "$dir/one-tool/src/main.rs"
sed -e 's|^modelctx = .*|modelctx = "='"$version"'"|' \
  "$repo/bench/buildtime/ours/Cargo.toml" >"$dir/one-tool/Cargo.toml"
cat >"$dir/one-tool/.cargo/config.toml" <<CONFIG
[source.crates-io]
replace-with = "published"
[source.published]
directory = "$dir/vendor"
CONFIG
(cd "$dir/one-tool" && cargo generate-lockfile -q --offline)
echo "$dir/one-tool"
