#!/usr/bin/env bash
# Start-up cost of one read: `zkctl get /x` against `zkCli.sh -server H get /x`, on one fresh
# ZooKeeper server, in the same run, each a new process (zkCli.sh: a new JVM).
#
#   scripts/bench-startup.sh [RUNS]        (default 10 runs of each, alternating)
#
# Wall time per run (process start to exit, from bash), both cold in the sense that each run
# is a new process; nothing is dropped between runs (the page cache, the JVM's class data
# sharing archive and the server stay as they are: dropping them needs root and would measure
# the disk, not the tools). Prints each run, then per tool the median, min and max (ms), and
# the ratio of the medians.
#
# Env: ZKCLI (default: /usr/share/zookeeper/bin/zkCli.sh, else zkCli or zkCli.sh on PATH),
# ZKCTL_BENCH_DIR (scratch, default /tmp/zkctl-bench-startup), CARGO_TARGET_DIR (as cargo
# takes it).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${1:-10}
DIR=${ZKCTL_BENCH_DIR:-/tmp/zkctl-bench-startup}
TARGET=${CARGO_TARGET_DIR:-target}
ZKCLI=${ZKCLI:-}
if [[ -z $ZKCLI ]]; then
    for c in /usr/share/zookeeper/bin/zkCli.sh "$(command -v zkCli || true)" \
        "$(command -v zkCli.sh || true)"; do
        [[ -n $c && -x $c ]] && ZKCLI=$c && break
    done
fi
if [[ -z $ZKCLI ]]; then
    echo "bench-startup: zkCli.sh not found (Debian's zookeeper package; or set ZKCLI)" >&2
    exit 2
fi

cargo build --release --quiet -p zkctl
ZKCTL="$TARGET/release/zkctl"

rm -rf "$DIR"
mkdir -p "$DIR/data"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$DIR/zoo.cfg" <<EOF
tickTime=2000
dataDir=$DIR/data
clientPort=$PORT
clientPortAddress=127.0.0.1
admin.enableServer=false
EOF
CP=/usr/share/java/zookeeper.jar
for jar in /usr/share/java/netty-codec.jar /usr/share/java/slf4j-simple.jar; do
    [[ -f $jar ]] && CP="$CP:$jar"
done
java -XX:+UseSerialGC -Dzookeeper.forceSync=no \
    -cp "$CP" org.apache.zookeeper.server.quorum.QuorumPeerMain "$DIR/zoo.cfg" \
    >"$DIR/server.log" 2>&1 &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true' EXIT
SERVER=127.0.0.1:$PORT
for _ in $(seq 1 150); do
    "$ZKCTL" --server "$SERVER" --connect-timeout 1000 ls / >/dev/null 2>&1 && break
    sleep 0.2
done
"$ZKCTL" --server "$SERVER" create /x hello >/dev/null

# Both must read the data, or the figures mean nothing.
[[ $("$ZKCTL" --server "$SERVER" get /x) == hello ]] || { echo "zkctl get failed" >&2; exit 1; }
"$ZKCLI" -server "$SERVER" get /x 2>/dev/null | grep -qx hello ||
    { echo "zkCli.sh get failed" >&2; exit 1; }

# Milliseconds (3 decimals) one command takes, start to exit: bash's $EPOCHREALTIME (no
# process is started to read the clock; the fork and exec of the command are counted, about
# 1 ms here: see the `/bin/true` line).
elapsed() {
    local t0 t1
    t0=$EPOCHREALTIME
    "$@" >/dev/null 2>&1
    t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", (b - a) * 1000}'
}

: >"$DIR/zkctl.ms"
: >"$DIR/zkcli.ms"
echo "run zkctl_ms zkcli_ms"
for i in $(seq 1 "$RUNS"); do
    a=$(elapsed "$ZKCTL" --server "$SERVER" get /x)
    b=$(elapsed "$ZKCLI" -server "$SERVER" get /x)
    echo "$a" >>"$DIR/zkctl.ms"
    echo "$b" >>"$DIR/zkcli.ms"
    echo "$i $a $b"
done

for _ in 1 2 3; do elapsed /bin/true >/dev/null; done
echo "/bin/true (the cost of starting a process here): $(elapsed /bin/true) ms"

# Median (the mean of the middle two for an even count), min, max.
summary() {
    sort -n "$1" | awk '{v[NR] = $1} END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%.1f %.1f %.1f\n", m, v[1], v[NR]
    }'
}
read -r zkctl_med zkctl_min zkctl_max < <(summary "$DIR/zkctl.ms")
read -r zkcli_med zkcli_min zkcli_max < <(summary "$DIR/zkcli.ms")
echo "zkctl get /x:                 median ${zkctl_med} ms (min ${zkctl_min}, max ${zkctl_max}; $RUNS runs)"
echo "zkCli.sh -server H get /x:    median ${zkcli_med} ms (min ${zkcli_min}, max ${zkcli_max}; $RUNS runs)"
awk -v a="$zkcli_med" -v b="$zkctl_med" 'BEGIN {printf "ratio (zkCli.sh / zkctl, medians): %.1fx\n", a / b}'
echo "zkCli.sh: $ZKCLI ($(java -version 2>&1 | head -1)); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
