#!/usr/bin/env bash
# Checks the README's promise that `cargo test --workspace --release` reuses
# what `cargo run --release -- demo` built: in a fresh clone of this
# repository (an empty target/), runs the two commands as printed and lists
# every crate the second compiles again with the same name and version
# (a feature set that differs between the binary and the tests makes cargo
# build a crate twice). Exits 1 if there is any, and prints both wall times.
#
#   scripts/check-build-reuse.sh            # clones the working tree's HEAD
#   KEEP=1 scripts/check-build-reuse.sh     # keeps the clone for inspection
#
# It takes as long as a fresh build plus the test suite (about 15 minutes on
# 2 cores). Only the registry is needed (crates are fetched as for any build).
set -euo pipefail

repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
work=$(mktemp -d)
if [[ -z "${KEEP:-}" ]]; then trap 'rm -rf "$work"' EXIT; fi
git clone -q "$repo" "$work/clone"
cd "$work/clone"

t0=$(date +%s)
cargo run --release -- demo >"$work/run.out" 2>"$work/run.err"
t1=$(date +%s)
cargo test --workspace --release >"$work/test.out" 2>"$work/test.err" || {
    echo "cargo test --workspace --release failed; see $work/test.err (KEEP=1 keeps it)" >&2
    exit 1
}
t2=$(date +%s)

# The workspace's own crates are compiled again as test targets by design.
members=$(cargo metadata --no-deps --format-version 1 |
    python3 -c 'import json, sys; print("\n".join(p["name"] for p in json.load(sys.stdin)["packages"]))')
compiled() { sed -n 's/^ *Compiling \([^ ]*\) \(v[^ ]*\).*/\1 \2/p' "$1" | sort -u; }
again=$(comm -12 <(compiled "$work/run.err") <(compiled "$work/test.err") |
    awk 'NR == FNR { member[$1] = 1; next } !($1 in member)' <(echo "$members") -)

echo "cargo run --release -- demo:      $((t1 - t0)) s ($(compiled "$work/run.err" | wc -l) crates compiled)"
echo "cargo test --workspace --release: $((t2 - t1)) s ($(compiled "$work/test.err" | wc -l) crates compiled)"
if [[ -n "$again" ]]; then
    echo "compiled by both commands (not reused):"
    echo "$again" | sed 's/^/  /'
    exit 1
fi
echo "every crate the first command built was reused by the second"
