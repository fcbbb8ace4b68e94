#!/usr/bin/env bash
# Runs every test of the workspace against real ZooKeeper servers (installed if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-zookeeper.sh
cargo test --workspace --all-targets "$@"
# The optional `tracing` feature: its events reach a subscriber.
cargo test -p zkr-client --features tracing --test tracing "$@"
cargo test --workspace --doc
