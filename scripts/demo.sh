#!/usr/bin/env bash
# The project's main job: a demo against a local ZooKeeper that the test kit starts itself.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-zookeeper.sh
exec cargo run --quiet --example demo "$@"
