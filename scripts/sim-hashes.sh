#!/usr/bin/env bash
# The simulation's trace hashes, for a change that must not change behaviour: each suite's
# first SEEDS seeds (default 20), one line per run (`suite seed hash`). A run's hash covers
# every line of its trace, so equal hashes mean the same run, byte for byte.
#
#   scripts/sim-hashes.sh [SEEDS] > before.txt      on the tree before the change
#   scripts/sim-hashes.sh [SEEDS] --check before.txt   after it: exit 1 and the runs that
#                                                    differ, if any does
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=20
check=""
while [ $# -gt 0 ]; do
    case "$1" in
        --check) check="$2"; shift 2 ;;
        *) seeds="$1"; shift ;;
    esac
done
cargo build --release -q -p zkrs-sim-suites --bin zkrs-simulate
bin="${CARGO_TARGET_DIR:-target}/release/zkrs-simulate"
# The usage text names the suites; it exits 2, and a seed that finds a violation exits 1
# (its hash counts all the same): under pipefail either would end the script silently.
suites="$("$bin" 2>&1 | sed -n 's/^suites: //p' | tr -d , || true)"
now="$(mktemp)"
trap 'rm -f "$now"' EXIT
for suite in $suites; do
    for seed in $(seq 1 "$seeds"); do
        hash="$("$bin" run "$suite" "$seed" 2>/dev/null | sed -n 's/.* hash=\([0-9a-f]*\) .*/\1/p' | tail -1 || true)"
        echo "$suite $seed ${hash:-none}"
    done
done >"$now"
if [ -z "$check" ]; then
    cat "$now"
    exit 0
fi
if diff -u "$check" "$now" >/dev/null; then
    echo "sim-hashes: $(wc -l <"$now") runs hash as before"
else
    echo "sim-hashes: runs that differ (before, after):"
    diff "$check" "$now" | grep '^[<>]' || true
    exit 1
fi
