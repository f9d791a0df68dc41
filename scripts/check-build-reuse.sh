#!/usr/bin/env bash
# Checks the README's promise that `cargo test --workspace --release` reuses
# what `cargo run --release -- demo` built: in a fresh clone of this
# repository (an empty target/), runs the two commands as printed and lists
# every library the first built that the second built again (a feature set
# that differs between the binary and the tests makes cargo rebuild a crate
# and everything above it), from cargo's own unit list (--message-format
# json, replayed after each command). Exits 1 if
# there is any, and prints both wall times. The test
# repository::item_17_the_test_build_reuses_every_crate_of_the_release_build
# checks the same from `cargo tree`'s feature sets, in seconds.
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
# The units the first command built (cargo replays them as fresh artifacts).
cargo run --release --quiet --message-format=json -- --version >"$work/run.json"
cargo test --workspace --release >"$work/test.out" 2>"$work/test.err" || {
    echo "cargo test --workspace --release failed; see $work/test.err (KEEP=1 keeps it)" >&2
    exit 1
}
t2=$(date +%s)

compiled() { sed -n 's/^ *Compiling \([^ ]*\) \(v[^ ]*\).*/\1 \2/p' "$1" | sort -u; }
cargo test --workspace --release --no-run --message-format=json >"$work/test.json" 2>/dev/null
# A unit of the first build is reused when the test build uses the same file
# for that crate at that optimisation level (host units of proc macros and
# build scripts are built at opt-level 0, separately, by design).
again=$(python3 - "$work/run.json" "$work/test.json" <<'PY'
import json, sys
def units(path):
    out = {}
    for line in open(path):
        try:
            m = json.loads(line)
        except ValueError:
            continue
        if m.get("reason") == "compiler-artifact":
            key = (m["package_id"], m["target"]["name"], m["profile"]["opt_level"], tuple(m["target"]["kind"]))
            out.setdefault(key, set()).update(f for f in m["filenames"] if f.endswith(".rlib"))
    return out
first, test = units(sys.argv[1]), units(sys.argv[2])
for key, files in sorted(first.items()):
    if files and key in test and not (files & test[key]):
        print(f"  {key[1]} (opt-level {key[2]})")
PY
)

echo "cargo run --release -- demo:      $((t1 - t0)) s ($(compiled "$work/run.err" | wc -l) crates compiled)"
echo "cargo test --workspace --release: $((t2 - t1)) s ($(compiled "$work/test.err" | wc -l) crates compiled)"
if [[ -n "$again" ]]; then
    echo "built by the first command and rebuilt by the second:"
    echo "$again"
    exit 1
fi
echo "the second command reused every library the first built"
