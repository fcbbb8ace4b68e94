#!/usr/bin/env bash
# The deterministic simulation's campaign: seeds of the suites (the real-server fault suites'
# invariants, run by zkrs-sim against the model ensemble on virtual time), on every core, for
# SECONDS of real time or COUNT seeds, whichever ends first. Prints seeds per hour, simulated hours per hour, and each violation
# with its seed, the fewest faults that still show it, and the command that replays it.
# No JVM, no network: nothing to install.
#
#   scripts/simulate.sh [SECONDS] [SUITE|all] [--jobs N] [--first-seed S] [--seeds COUNT]
#                                                                        (default 600 all)
#   scripts/simulate.sh --replay SUITE SEED [--skip 1,2] [--trace]            (one run)
#
# The output also goes to target/simulate.log. Exit status 1 if any seed failed.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p zkrs-sim-suites --bin zkrs-simulate
bin="${CARGO_TARGET_DIR:-target}/release/zkrs-simulate"
mkdir -p target
if [ "${1:-}" = "--replay" ]; then
    shift
    exec "$bin" run "$@"
fi
seconds="${1:-600}"
shift || true
suite="${1:-all}"
shift || true
"$bin" campaign "$seconds" "$suite" "$@" | tee target/simulate.log
exit "${PIPESTATUS[0]}"
