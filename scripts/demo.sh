#!/usr/bin/env bash
# The project's main job: the 10-participant leader-latch story against a local ZooKeeper
# that the test kit starts itself (or ZK_SERVER).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-zookeeper.sh
exec cargo run --quiet --example leader_latch "$@"
