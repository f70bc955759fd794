#!/bin/sh
# The coverage-guided long fuzz run: every target, library and command line, built with
# LLVM's SanitizerCoverage inline 8-bit counters (stable rustc flags; the engine in
# stress/fuzz_targets.rs reads them), for EXECS executions each.
#
#   stress/fuzz.sh [EXECS] [SEED] [TARGET...]     (defaults: 1000000 executions, seed 1)
#
# Library targets run in the `fuzz` example, the command line's (target and sim scenario
# JSON, queries CSV) in the CLI's own test binary. A finding's input is written under
# target/fuzz/findings/. Exits non-zero if anything was found.
set -eu
cd "$(dirname "$0")/.."
EXECS=${1:-1000000}
SEED=${2:-1}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=3 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters"
export CARGO_TARGET_DIR=target/fuzz-coverage
# Whole-program optimisation only slows the instrumented build down.
export CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
# With the target named, the flags reach waymark and its dependencies but not the build
# scripts and derive macros, which run on the host and would lack the counters' callback.
HOST=$(rustc -vV | sed -n 's/^host: //p')
status=0
cargo run --release --target "$HOST" --example fuzz -- "$EXECS" "$SEED" "$@" || status=1
WAYMARK_FUZZ_EXECUTIONS=$EXECS WAYMARK_FUZZ_SEED=$SEED WAYMARK_FUZZ_TARGETS="$*" \
    cargo test --release --target "$HOST" --bin waymark -- --ignored --nocapture fuzz_long \
    || status=1
exit $status
