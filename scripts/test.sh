#!/usr/bin/env bash
# Runs every test of the workspace against real ZooKeeper servers (installed if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-zookeeper.sh
cargo test --workspace --all-targets "$@"
cargo test --workspace --doc
