#!/usr/bin/env bash
# The long soak (recipes/tests/soak.rs): mixed operations and recipes on three sessions under
# the fault injector for SECONDS (default 3600), resident memory and live heap sampled every
# minute; fails if the resident set (once malloc has returned its free pages; glibc's arenas
# capped at the runtime's threads, ZKR_SOAK_MALLOC_ARENAS=0 for glibc's default) grew more
# than 10% after warm-up, the live heap grew, a recipe's znode or a task was left behind, or a
# step hung. CI runs the 2-minute form as part of scripts/test.sh.
#
#   scripts/soak.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-zookeeper.sh
ZKR_SOAK_SECS="${1:-3600}" cargo test -p zkrs-recipes --test soak -- --nocapture 2>&1 \
    | tee target/soak.log | grep -E '^(suite=|soak for|test |  fault)'
