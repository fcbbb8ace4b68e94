#!/usr/bin/env bash
# The compatibility matrix: the real-server suites against every ZooKeeper of
# scripts/versions.sh, and the Curator interop suites against every Curator.
#
#   scripts/test-versions.sh                  the whole matrix (about 6 minutes a version)
#   scripts/test-versions.sh --smoke          CI's short form: a few binaries on every version
#                                             but the defaults (scripts/test.sh ran those)
#   scripts/test-versions.sh [--smoke] zookeeper 3.7.2 debian    those servers only
#   scripts/test-versions.sh [--smoke] curator 5.4.0             those Curators only
#
# Each ZooKeeper runs, with ZKRS_TEST_ZOOKEEPER set to it: the client's real-server tests
# (client:test:*: every opcode, watches, persistent and recursive watches, reconnect and
# resume, multi, reconfig, TLS, SASL, read-only), every recipe's real-server tests
# (recipes:test:*, less the randomized invariant campaigns and the soak, which have scripts of
# their own), the Curator interop tests (.:test:curator_*, on the default Curator) and the
# test kit's own tests (the model's differential test is run per version as docs/model.md
# says). Each Curator runs the Curator interop
# tests (.:test:curator_* and the recipes' queue peers) with ZKRS_TEST_CURATOR set to it, on
# the default server. Versions missing from the jar cache are fetched first
# (scripts/fetch-jars.sh).
#
# Results: a JSON line per binary in target/versions/<kind>-<version>.jsonl; a whole run
# (no --smoke, no version named) also rewrites docs/compatibility.jsonl, from which
# scripts/compat-table.py writes README's compatibility table. Exit 1 if any binary failed.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=versions.sh
. scripts/versions.sh

smoke=false
if [ "${1:-}" = --smoke ]; then
    smoke=true
    shift
fi
zookeepers=("${ZOOKEEPER_MATRIX[@]}")
curators=("${CURATOR_MATRIX[@]}")
whole=true
if [ $# -gt 0 ]; then
    whole=false
    kind="$1"
    shift
    case "$kind" in
    zookeeper) zookeepers=("$@") curators=() ;;
    curator) curators=("$@") zookeepers=() ;;
    *)
        echo "usage: $0 [--smoke] [zookeeper|curator VERSION...]" >&2
        exit 2
        ;;
    esac
fi

scripts/install-zookeeper.sh
[ "${#zookeepers[@]}" -gt 0 ] && scripts/fetch-jars.sh zookeeper "${zookeepers[@]}"
[ "${#curators[@]}" -gt 0 ] && scripts/fetch-jars.sh curator "${curators[@]}"

# The same build as scripts/test.sh (its features), so nothing is built twice.
features=(--features "zkrs/tracing zkrs/tls zkrs/sasl-digest zkrs/sasl-gssapi zkrs/discovery zkrs/typed zkrs/compression")
cargo=(--workspace --all-targets "${features[@]}")

if $smoke && $whole; then
    # The defaults ran everything already in scripts/test.sh (CI runs both).
    keep() {
        local default="$1" v
        shift
        for v in "$@"; do [ "$v" = "$default" ] || echo "$v"; done
    }
    mapfile -t zookeepers < <(keep "$ZOOKEEPER_DEFAULT" "${zookeepers[@]}")
    mapfile -t curators < <(keep "$CURATOR_DEFAULT" "${curators[@]}")
fi
if $smoke; then
    # A few seconds of each area: plain operations and watches, a persistent watch (the
    # fallback before 3.6), the lock, a cache, TLS, and Curator on the same znodes.
    server_suites='^(client:test:(operations|tls)|recipes:test:(persistent_watcher|mutex|cache)|\.:test:curator_recipes)$'
    curator_suites='^\.:test:curator_(recipes|interop)$'
else
    server_suites='^(client:test:|recipes:test:|\.:test:curator_|testkit:test:)'
    curator_suites='^(\.:test:curator_|recipes:test:queue$)'
fi
# Campaigns with scripts of their own (scripts/soak.sh, scripts/faults.sh), and the tests
# that measure this machine rather than a server (allocation budgets, metrics plumbing).
skip='^recipes:test:(invariants|soak|replica_agreement|fuzz_seeds|allocations|recipe_metrics)|^client:test:(allocations|metrics)'

mkdir -p target/versions
status=0
# Curator 5.9 does not run against a 3.5 server (its GroupMember's PersistentWatcher retries
# the UNIMPLEMENTED addWatch until its stack overflows); 5.4, in its 3.5 compatibility mode
# (the 3.5 client library first on its classpath: the test kit does that), does. So the
# Curator interop on 3.5 runs with 5.4.0.
CURATOR_FOR_3_5=5.4.0
scripts/fetch-jars.sh curator "$CURATOR_FOR_3_5"

run() {
    local kind="$1" version="$2" only="$3" var="$4"
    local results="target/versions/$kind-$version.jsonl"
    echo "== $kind $version"
    local started extra=()
    started=$(date +%s)
    if [ "$kind" = zookeeper ] && [[ "$version" == 3.5.* ]]; then
        extra=("ZKRS_TEST_CURATOR=${ZKRS_TEST_CURATOR:-$CURATOR_FOR_3_5}")
    fi
    # The backpressure flood measures memory, not a server's speed: a fifth of it per version
    # (scripts/test.sh floods the default with the whole million).
    if ! env "$var=$version" ZKRS_FLOOD_OPS="${ZKRS_FLOOD_OPS:-200000}" "${extra[@]}" \
        python3 scripts/run-tests.py --jobs 2 --only "$only" \
        --skip "$skip" --results "$results" "${cargo[@]}"; then
        status=1
    fi
    echo "== $kind $version: $(( $(date +%s) - started )) s"
    # What the table names as tested: the commit, marked when the tree had changes.
    local commit
    commit=$(git rev-parse --short HEAD)
    git diff --quiet HEAD || commit="$commit+changes"
    echo "$commit" >"target/versions/$kind-$version.commit"
}

for version in "${zookeepers[@]}"; do
    run zookeeper "$version" "$server_suites" ZKRS_TEST_ZOOKEEPER
done
for version in "${curators[@]}"; do
    run curator "$version" "$curator_suites" ZKRS_TEST_CURATOR
done

if $whole && ! $smoke; then
    python3 scripts/compat-table.py --collect target/versions docs/compatibility.jsonl
fi
python3 scripts/compat-table.py --summary target/versions "${zookeepers[@]/#/zookeeper-}" "${curators[@]/#/curator-}"
exit "$status"
