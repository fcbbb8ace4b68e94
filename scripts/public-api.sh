#!/usr/bin/env bash
# Compares each library crate's public API with its committed listing, public-api/<crate>.txt,
# so that a change to the surface is deliberate.
#
#   scripts/public-api.sh            compare; print a unified diff and exit 1 on any difference
#   scripts/public-api.sh --bless    write the listings (after reviewing the change)
#   scripts/public-api.sh --self-test  check the reader itself: its listing of
#       scripts/public-api-fixture (one of each kind of item and type) must equal
#       scripts/public-api-fixture/expected.txt (after a deliberate change to the reader or a
#       toolchain update, regenerate that file with scripts/public-api.py and review its diff)
#
# The listing comes from rustdoc's JSON output (scripts/public-api.py reads it). The JSON
# output is unstable in rustdoc; RUSTC_BOOTSTRAP=1 unlocks it on the stable toolchain, and the
# reader refuses a format_version it was not written for. Every feature is on (cfg'd-out items
# are not in the JSON). Only rustdoc runs (no codegen), in a target folder of its own
# (target/public-api) so it neither waits for nor invalidates other builds.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${PUBLIC_API_TARGET_DIR:-target/public-api}"

bless=false
case "${1:-}" in
    --bless) bless=true ;;
    --self-test)
        fixture=scripts/public-api-fixture
        if ! RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$target/fixture" cargo rustdoc --quiet \
            --manifest-path "$fixture/Cargo.toml" -- -Z unstable-options --output-format json; then
            echo "public-api: rustdoc JSON build of the fixture failed" >&2
            exit 1
        fi
        if diff -u --label expected --label got "$fixture/expected.txt" \
            <(python3 scripts/public-api.py "$target/fixture/doc/public_api_fixture.json"); then
            echo "public-api: self-test passed"
            exit 0
        fi
        echo "public-api: self-test failed: scripts/public-api.py renders the fixture differently"
        exit 1
        ;;
    "") ;;
    *) echo "usage: scripts/public-api.sh [--bless | --self-test]" >&2; exit 2 ;;
esac

# Library crates, in dependency order (a crate's listing names the items it re-exports from
# the ones before it, so their JSON must be there first). zkctl (a library only so that the
# unpublished zkctl-bench can run its commands), zkctl-bench and zkrs-model-server (the
# zkrs-model program) are programs: no API.
crates=(zkrs-codec zkrs-session zkrs-client zkrs-recipes zkrs-testkit zkrs-model zkrs-sim zkrs)

doc="$target/doc"
out="$target/listings"
mkdir -p "$out" public-api
log="$target/rustdoc.log"
: >"$log"

for crate in "${crates[@]}"; do
    # Rustdoc's own warnings (broken doc links and the like) are the rustdoc CI step's job;
    # here they go to the log, shown only if the build fails.
    if ! RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$target" cargo rustdoc --quiet -p "$crate" --lib \
        --all-features -- -Z unstable-options --output-format json >>"$log" 2>&1; then
        cat "$log"
        echo "public-api: rustdoc JSON build of $crate failed" >&2
        exit 1
    fi
done

status=0
for crate in "${crates[@]}"; do
    name="${crate//-/_}"
    python3 scripts/public-api.py "$doc/$name.json" >"$out/$crate.txt"
    committed="public-api/$crate.txt"
    if $bless; then
        if ! cmp -s "$out/$crate.txt" "$committed"; then
            cp "$out/$crate.txt" "$committed"
            echo "public-api: wrote $committed"
        fi
    elif [ ! -f "$committed" ]; then
        echo "public-api: $committed is missing"
        status=1
    elif ! diff -u --label "$committed (committed)" --label "$crate (this tree)" \
        "$committed" "$out/$crate.txt"; then
        status=1
    fi
done

if [ "$status" -ne 0 ]; then
    echo
    echo "public-api: the public API differs from the committed listing (diff above: - committed, + this tree)."
    echo "Review the change: is it meant, and is it compatible (or the version bumped)? If so,"
    echo "run scripts/public-api.sh --bless to accept it, and commit public-api/*.txt with it."
    exit 1
fi
$bless || echo "public-api: every crate's public API matches public-api/*.txt"
