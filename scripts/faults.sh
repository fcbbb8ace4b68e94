#!/usr/bin/env bash
# The long form of the invariant suites under faults (recipes/tests/invariants.rs): each suite
# runs for SECONDS (default 1800) on a 3-node ensemble with the seeded fault injector, one
# after the other, and prints its summary line. CI runs the short form (25 s) as part of
# scripts/test.sh. Replay a schedule with ZKR_FAULT_SEED=<seed>.
#
#   scripts/faults.sh [SECONDS] [SUITE...]     # suites: watches sessions (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-1800}"
shift || true
scripts/install-zookeeper.sh
export ZKR_FAULT_SECS="$seconds"
cargo test -p zkr-recipes --test invariants -- --nocapture --test-threads 1 "$@" 2>&1 \
    | tee target/faults.log | grep -E '^(suite=|fault schedule|test )'
