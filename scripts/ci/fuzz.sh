#!/usr/bin/env bash
# Bounded fuzzing for CI (called by .ci/run): builds every libFuzzer target of fuzz/ (cargo-fuzz)
# and runs each for FUZZ_SECONDS seconds (default 20) from its seeds (fuzz/seeds/<target>/);
# exits non-zero if any target crashes (a panic, an assertion, a timeout of one input, an
# out-of-memory), after running all of them. Crash inputs are in fuzz/artifacts/<target>/,
# logs in fuzz/logs/<target>.log; the corpus grows in fuzz/corpus/<target>/ (none committed).
#
# Toolchain: `cargo +nightly` when a nightly toolchain is installed, otherwise the default
# (stable) toolchain with RUSTC_BOOTSTRAP=1 (libFuzzer's coverage flags are unstable options
# of rustc; no `rustup toolchain install` is needed). cargo-fuzz is installed from crates.io
# when missing.
#
# Environment: FUZZ_SECONDS (per target), FUZZ_TARGETS (space-separated; default: all),
# FUZZ_RSS_MB (default 2048), FUZZ_SANITIZER (none or address; default none: the targets are
# safe Rust, and without ASan the build and the runs are about twice as fast).
set -euo pipefail
cd "$(dirname "$0")/../../fuzz"
secs=${FUZZ_SECONDS:-20}
rss=${FUZZ_RSS_MB:-2048}
sanitizer=${FUZZ_SANITIZER:-none}
start=$(date +%s)

if rustup run nightly rustc --version > /dev/null 2>&1; then
  toolchain=(+nightly)
  echo "fuzz: nightly toolchain ($(rustup run nightly rustc --version))"
else
  toolchain=()
  export RUSTC_BOOTSTRAP=1
  echo "fuzz: no nightly toolchain; $(rustc --version) with RUSTC_BOOTSTRAP=1"
fi
if ! cargo fuzz --version > /dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz from crates.io"
  cargo install cargo-fuzz --locked --quiet
fi

targets=${FUZZ_TARGETS:-$(cargo "${toolchain[@]}" fuzz list)}
# One build of all targets (`fuzz build` without a name); the binaries are run directly.
cargo "${toolchain[@]}" fuzz build --sanitizer "$sanitizer"
bin=target/$(rustc "${toolchain[@]}" -vV | sed -n 's/^host: //p')/release
built=$(date +%s)
echo "fuzz: built $(wc -w <<< "$targets") target(s) in $((built - start)) s"

mkdir -p logs
failed=()
for t in $targets; do
  mkdir -p "corpus/$t" "artifacts/$t"
  # -timeout: one input taking longer than 10 s is a finding (a hang), as is -rss_limit_mb.
  if "$bin/$t" "corpus/$t" "seeds/$t" -max_total_time="$secs" -rss_limit_mb="$rss" -timeout=10 \
    -print_final_stats=1 -artifact_prefix="artifacts/$t/" > "logs/$t.log" 2>&1; then
    status=ok
  else
    status=FAILED
    failed+=("$t")
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "logs/$t.log" | tail -n 1)
  printf 'fuzz: %-14s %-6s %10s executions in %s s\n' "$t" "$status" "${runs:-?}" "$secs"
  if [ "$status" = FAILED ]; then
    grep -E 'panicked|ERROR|SUMMARY|Test unit written' "logs/$t.log" | head -n 8 | sed 's/^/    /'
  fi
done
echo "fuzz: total $(($(date +%s) - start)) s (build $((built - start)) s)"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs in fuzz/artifacts/, logs in fuzz/logs/)"
  exit 1
fi
