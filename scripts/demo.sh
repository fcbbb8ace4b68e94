#!/usr/bin/env bash
# The project's main job: `zkctl demo`, the 10-participant leader-latch story against a local
# ZooKeeper that the test kit starts itself (or --server / ZK_SERVER). It runs as zkctl-bench,
# the workspace's build of zkctl with the test kit (the shipped zkctl needs --server).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-zookeeper.sh
exec cargo run --quiet -p zkctl-bench -- demo "$@"
