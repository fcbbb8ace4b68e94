#!/usr/bin/env bash
# Runs every test of the workspace against real ZooKeeper servers (installed if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-zookeeper.sh
cargo test --workspace --all-targets "$@"
# The optional `tracing` feature: its events reach a subscriber.
cargo test -p zkrs-client --features tracing --test tracing "$@"
cargo test -p zkrs-client --features metrics --test metrics_facade "$@"
cargo test -p zkrs-recipes --features metrics --test recipe_metrics_facade "$@"
# The optional `tls` feature against real TLS servers (the workspace run above may already
# include it through zkctl's features; this line makes sure it always runs), and its example.
cargo test -p zkrs-client --features tls --test tls "$@"
cargo run --quiet --example tls_client --features tls
# The optional `sasl-digest` feature against real servers with a JAAS file, and its example.
cargo test -p zkrs-client --features sasl-digest --test sasl "$@"
cargo run --quiet --example sasl_digest --features sasl-digest
# The optional `sasl-gssapi` feature (Kerberos) against the test kit's own MIT KDC and a
# Kerberos server (krb5 and libkrb5-dev come from install-zookeeper.sh), and its example.
cargo test -p zkrs-client --features sasl-gssapi --test sasl_kerberos "$@"
cargo run --quiet --example sasl_kerberos --features sasl-gssapi
# The optional `discovery` feature (the root crate's, which the workspace run above does not
# turn on for it): service discovery against Curator 5.4's own, the example against a server
# it starts, and every crate's doc tests with it.
cargo test --features discovery --test curator_discovery "$@"
cargo run --quiet --example service_discovery --features discovery
cargo test --workspace --doc --features discovery
# The guide's examples that need the other features (TLS, SASL, Kerberos, metrics): every
# Rust block of the docs compiles with every feature on too.
cargo test -p zkrs --doc --all-features
