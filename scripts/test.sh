#!/usr/bin/env bash
# Runs every test of the workspace against real ZooKeeper servers (installed if missing).
#
#   scripts/test.sh                 everything
#   scripts/test.sh FILTER [ARGS]   `cargo test` of the main build below, with a filter
#
# The main build has every feature on but `metrics` (tracing, tls, sasl-digest, sasl-gssapi,
# discovery, typed, compression), so that those features' tests (client/tests/tls.rs, sasl.rs, sasl_kerberos.rs,
# tracing.rs, the root's curator_discovery.rs) run from the same build as the rest, and the
# examples are linked on it. `metrics` is left out of it: its reporting task
# allocates once a second, which the allocation-budget tests (client/tests/allocations.rs,
# recipes/tests/allocations.rs) would count. The default-feature build is checked by clippy.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-zookeeper.sh
features=(--features "zkrs/tracing zkrs/tls zkrs/sasl-digest zkrs/sasl-gssapi zkrs/discovery zkrs/typed zkrs/compression")
if [ $# -gt 0 ]; then
    exec cargo test --workspace --all-targets "${features[@]}" "$@"
fi
# The test binaries, two at a time (scripts/run-tests.py says why and how).
python3 scripts/run-tests.py --jobs 2 --workspace --all-targets "${features[@]}"
# The examples that need a feature, on the build above (`cargo test` builds examples as test
# harnesses; this links them as programs, a few seconds): TLS, SASL DIGEST-MD5, Kerberos (its
# own MIT KDC; krb5 comes from install-zookeeper.sh), and service discovery against a server it
# starts.
cargo build --quiet --workspace --examples "${features[@]}"
for example in tls_client sasl_digest sasl_kerberos service_discovery; do
    echo "example $example"
    "${CARGO_TARGET_DIR:-target}/debug/examples/$example"
done
# Every feature on: the `metrics` feature's tests, and every Rust block of the docs (the
# guide's too), from one more build.
cargo test --workspace --all-features --test metrics_facade --test recipe_metrics_facade
cargo test --workspace --all-features --doc
