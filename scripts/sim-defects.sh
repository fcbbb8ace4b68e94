#!/usr/bin/env bash
# Does the simulation find the defects the real-server fault suites found? Each patch in
# sim/defects/ puts one back; this applies it to a scratch copy of the tree, runs a campaign
# of its suite from seed 1 until the first violation, and says which seed found it. A defect
# not found within its bound fails the script. Runs are deterministic: the same patch is found
# at the same seed every time.
#
#   scripts/sim-defects.sh          the defects CI checks (found within a few hundred seeds)
#   scripts/sim-defects.sh --all    and the long ones (tens of thousands of seeds, minutes)
#   scripts/sim-defects.sh PATCH..  only these (long ones included)
#   scripts/sim-defects.sh --check  only that every patch still applies to the tree (seconds;
#                                   CI runs it before the tests: a patch the tree has moved
#                                   past fails here, not twenty minutes later)
#
# A defect marked `seed` is one the campaigns found too rarely to find again from seed 1 in
# CI's time: its line names the seed that found it, which must still show it (replayed in
# the world it was found in, before skipped replies: `--no-skipped-replies`).
#
# A defect whose suite is `test` is shown by a directed test instead of a campaign: one the
# random schedules do not line up (it needs a fault of a length within a narrow window and
# a request held back past a session's loss). Its bound names the test as CRATE:TARGET; the
# script builds it on the patched copy (a build that fails is an error, not a defect shown)
# and runs `cargo test -p CRATE --test TARGET`, which must fail; its panic message says what
# it saw.
#
# Builds into a folder of its own, sim-defects/ under $CARGO_TARGET_DIR (default target/): a
# patched build there is never taken for the tree's own.
set -euo pipefail
all=""
check=""
only=()
for arg in "$@"; do
    case "$arg" in
        --all) all=--all ;;
        --check) check=--check ;;
        *) only+=("$arg") ;;
    esac
done
cd "$(dirname "$0")/.."
root="$PWD"
# Every patch must apply before any is built: a defect that no longer applies is one the
# simulation is no longer shown, and the fix is to put it back into the code as it is now.
stale=0
for patch in sim/defects/*.patch; do
    if ! git apply --check "$patch" 2>/dev/null; then
        echo "defect $(basename "$patch"): does not apply to the tree; write it again against the code as it is now:"
        git apply --check "$patch" 2>&1 | sed 's/^/  /'
        stale=1
    fi
done
if [ "$stale" = 1 ]; then exit 1; fi
if [ -n "$check" ]; then
    echo "sim-defects: all $(ls sim/defects/*.patch | wc -l) patches apply"
    exit 0
fi
target="${CARGO_TARGET_DIR:-$root/target}/sim-defects"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
status=0
# patch, suite (or `test`), the most seeds it may take (for `seed`: the seed that must show
# it; for `test`: CRATE:TARGET), ci, long or seed
while read -r patch suite bound when; do
    case "$patch" in ''|'#'*) continue ;; esac
    if [ "${#only[@]}" -gt 0 ]; then
        printf '%s\n' "${only[@]}" | grep -qxF "$patch" || continue
    elif [ "$when" = long ] && [ "$all" != --all ]; then
        echo "defect $patch: skipped (long: scripts/sim-defects.sh --all)"
        continue
    fi
    # A plain copy of the tracked files as they are now (uncommitted changes included).
    rm -rf "$scratch/tree" && mkdir "$scratch/tree"
    git ls-files -z | tar --null -T - -cf - | tar xf - -C "$scratch/tree"
    # Every file newer than any build: cargo names a workspace crate's artifacts by its path
    # inside the workspace, so the copy shares them with the last patch's copy, and a file
    # with its old time would count as built. Without this, a crate the last patch changed
    # and this one does not kept the last patch's code.
    find "$scratch/tree" -type f -exec touch {} +
    (cd "$scratch/tree" && git apply "$root/sim/defects/$patch")
    if [ "$suite" = test ]; then
        # A directed test: built first, so that a patch that no longer compiles is not
        # taken for a test that fails; then run, and it must fail. Release, as the
        # campaigns' builds are, so it reuses most of their dependencies' artifacts.
        crate="${bound%%:*}"
        test_target="${bound#*:}"
        cargo_test=(cargo test --release -q --manifest-path "$scratch/tree/Cargo.toml"
            -p "$crate" --test "$test_target")
        if ! CARGO_INCREMENTAL=1 CARGO_TARGET_DIR="$target" "${cargo_test[@]}" --no-run; then
            echo "defect $patch: the patched copy does not build $crate's test $test_target"
            status=1
            continue
        fi
        if out="$(CARGO_INCREMENTAL=1 CARGO_TARGET_DIR="$target" "${cargo_test[@]}" 2>&1)"; then
            echo "defect $patch: NOT shown: $crate's test $test_target passes with it"
            status=1
        else
            echo "defect $patch: shown by $crate's test $test_target (it fails with the patch)"
            # The line after each panic's location is its message (none: nothing to show,
            # and no reason to stop the script under pipefail).
            printf '%s\n' "$out" | grep -A1 'panicked at' | grep -v -e 'panicked at' -e '^--' \
                | cut -c1-400 || true
        fi
        continue
    fi
    # Incremental: a patch changes one function, and most of each crate's code is reused
    # from the last patch's build (the script's builds take a third of the time).
    CARGO_INCREMENTAL=1 CARGO_TARGET_DIR="$target" cargo build --release -q \
        --manifest-path "$scratch/tree/Cargo.toml" -p zkrs-sim-suites --bin zkrs-simulate
    if [ "$when" = seed ]; then
        # A defect too rare to find from seed 1 in CI's time: the seed that found it must
        # still show it.
        out="$("$target/release/zkrs-simulate" run "$suite" "$bound" --no-skipped-replies 2>&1 || true)"
        if printf '%s\n' "$out" | grep -q "violation=none"; then
            echo "defect $patch: NOT shown by $suite seed $bound"
            status=1
        else
            echo "defect $patch: shown by $suite seed $bound (the seed that found it)"
            printf '%s\n' "$out" | grep -o 'violation=.*' | head -1 | cut -c1-200
        fi
        continue
    fi
    out="$(ZKRS_SIM_STOP_AT_FIRST=1 "$target/release/zkrs-simulate" \
        campaign 1800 "$suite" --jobs 1 --first-seed 1 --seeds "$bound" || true)"
    found="$(printf '%s\n' "$out" | sed -n 's/^VIOLATION suite=[a-z_]* seed=\([0-9]*\).*/\1/p' | head -1)"
    if [ -n "$found" ] && [ "$found" -le "$bound" ]; then
        echo "defect $patch: found by $suite at seed $found (bound $bound)"
        printf '%s\n' "$out" | grep -E '^  (participant|replay:|beliefs)' | head -3 | cut -c1-200
    else
        echo "defect $patch: NOT found by $suite within $bound seeds (first violation: ${found:-none})"
        status=1
    fi
done < sim/defects/LIST
exit "$status"
