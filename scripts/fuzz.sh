#!/usr/bin/env bash
# Runs the codec's cargo-fuzz targets (fuzz/fuzz_targets/*) for SECONDS each: with nightly when
# it is installed, else with stable and RUSTC_BOOTSTRAP=1 (cargo-fuzz needs nightly's -Z flags;
# the bootstrap switch lets stable take them) and without AddressSanitizer (`-s none`, which the
# codec can do without: it forbids unsafe code). It never installs a toolchain (machines
# without a route to rustup's servers cannot), so it never skips: it prints which one it used.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      # default: 60 s, every target
#   scripts/fuzz.sh --minimize [TARGET...]     # shrink fuzz/corpus/<target> (cargo fuzz cmin)
#
# Each target starts from its committed seeds (fuzz/seeds/<target>, written by hand, read
# only) and its corpus (fuzz/corpus/<target>, committed in minimized form), and grows the
# corpus. After a campaign, --minimize keeps only inputs that add coverage, and the result
# is what gets committed; the stable test suites replay both folders (fuzz/replay.rs). A
# crash is saved under fuzz/artifacts/<target>/ and makes the script exit non-zero once every
# target has run.
# Extra cargo-fuzz flags can be given in CARGO_FUZZ_FLAGS (e.g. "-s none" to fuzz without
# AddressSanitizer: the codec has no unsafe code, and it runs about four times as fast).
set -euo pipefail

cd "$(dirname "$0")/.."

minimize=false
if [[ "${1:-}" == "--minimize" ]]; then
    minimize=true
    shift
    seconds=0
else
    seconds="${1:-60}"
    shift || true
fi
if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
    echo "usage: $0 [SECONDS] [TARGET...]" >&2
    exit 2
fi

# shellcheck disable=SC2206
flags=(${CARGO_FUZZ_FLAGS:-})
# ZKRS_FUZZ_TOOLCHAIN=stable takes the stable path even where nightly is installed.
if [[ "${ZKRS_FUZZ_TOOLCHAIN:-}" != stable ]] && rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    toolchain=+nightly
    echo "== fuzzing with nightly"
else
    toolchain=+stable
    export RUSTC_BOOTSTRAP=1
    # AddressSanitizer needs nightly's sanitizer runtime.
    if [[ " ${flags[*]} " != *" -s none "* ]]; then
        flags+=(-s none)
    fi
    echo "== fuzzing with stable and RUSTC_BOOTSTRAP=1 (no nightly here), ${flags[*]}"
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

if [[ $# -gt 0 ]]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo "$toolchain" fuzz list)
fi

# Build every target once, up front.
cargo "$toolchain" fuzz build "${flags[@]}"

if $minimize; then
    for target in "${targets[@]}"; do
        mkdir -p "fuzz/corpus/$target"
        before="$(find "fuzz/corpus/$target" -type f | wc -l)"
        cargo "$toolchain" fuzz cmin "${flags[@]}" "$target" "fuzz/corpus/$target" \
            -- -print_final_stats=0 >/dev/null 2>&1
        echo "$target: $before inputs -> $(find "fuzz/corpus/$target" -type f | wc -l)"
    done
    exit 0
fi

failed=()
summary=()
for target in "${targets[@]}"; do
    echo "== fuzzing $target for ${seconds}s"
    mkdir -p "fuzz/corpus/$target"
    log="$(mktemp)"
    if cargo "$toolchain" fuzz run "${flags[@]}" "$target" \
        "fuzz/corpus/$target" "fuzz/seeds/$target" \
        -- -max_total_time="$seconds" -print_final_stats=1 2>&1 | tee "$log"; then
        result="ok"
    else
        result="FAILED (see fuzz/artifacts/$target/)"
        failed+=("$target")
    fi
    runs="$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || true)"
    rate="$(grep -Eo 'stat::average_exec_per_sec: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || true)"
    summary+=("$target: ${runs:-?} runs, ${rate:-?} execs/s, $result")
    rm -f "$log"
done

echo
echo "== summary"
printf '%s\n' "${summary[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "crashes in: ${failed[*]}" >&2
    exit 1
fi
