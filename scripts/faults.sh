#!/usr/bin/env bash
# The long form of the invariant suites under faults, one after the other, each on its own
# 3-node ensemble; prints each suite's summary line (and the seed, to replay one with
# ZKR_FAULT_SEED=<seed>). The full output goes to target/faults.log.
#   recipes/tests/invariants.rs            watches sessions  (zkrs_testkit::FaultSchedule, proxies)
#   recipes/tests/invariants_mutex.rs      mutex semaphore read_write       (FaultSchedule, proxies)
#   recipes/tests/invariants_leadership.rs latch election master selector   (FaultSchedule, proxies)
#   recipes/tests/invariants_data.rs       caches queues     (zkrs_testkit::FaultSchedule, proxies)
# CI runs the short forms (25 s, 45 s) as part of scripts/test.sh.
#
#   scripts/faults.sh [SECONDS] [SUITE...]     # SECONDS: ZKR_FAULT_SECS, default 1800;
#                                              # SUITE: a test name filter (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-${ZKR_FAULT_SECS:-1800}}"
shift || true
scripts/install-zookeeper.sh
export ZKR_FAULT_SECS="$seconds"
mkdir -p target
: > target/faults.log
status=0
for target in invariants invariants_mutex invariants_leadership invariants_data; do
    cargo test -p zkrs-recipes --test "$target" -- --nocapture --test-threads 1 "$@" 2>&1 \
        | tee -a target/faults.log | grep -E '^(suite=|fault schedule|test |  VIOLATION)' \
        || status=1
done
exit "$status"
