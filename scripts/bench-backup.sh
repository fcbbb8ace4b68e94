#!/usr/bin/env bash
# Times `zkctl export` + `zkctl import` of a 100,000-node tree against zk-shell's `cp` of the
# same tree, in one run on one fresh ZooKeeper server, and checks the round trip byte for byte.
#
#   scripts/bench-backup.sh [NODES]        (default 100000; NODES must be a multiple of 100)
#
# The tree: /bench/src with 100 children, each with NODES/100 - 1 children (so NODES nodes
# besides /bench/src); 64 bytes of data each (one in ten binary, exported as base64), the
# open ACL, and one in a hundred with a digest ACL as well. It is built with `zkctl import`
# of a generated file, then:
#   1. zkctl export /bench/src --out src.jsonl                        (timed)
#   2. zkctl import src.jsonl --at /bench/copy                         (timed)
#   3. zkctl export /bench/copy --out copy.jsonl; cmp src.jsonl copy.jsonl (must be equal)
#   4. zk-shell --run-once 'cp /bench/src /bench/zkshell true true'   (timed; then diffed)
# zk-shell (PyPI `zk-shell`, on kazoo) is installed into a venv under /tmp; if it cannot be
# installed or run, the script says why and still reports zkctl's figures.
#
# Env: ZKSHELL=no skips zk-shell (zkctl's figures only); ZKCTL_BENCH_DIR (scratch, default /tmp/zkctl-bench-backup), ZKSHELL_VENV (default
# /tmp/zkshell-venv), CARGO_TARGET_DIR (as cargo takes it).
set -euo pipefail
cd "$(dirname "$0")/.."

NODES=${1:-100000}
if (( NODES % 100 != 0 || NODES < 200 )); then
    echo "bench-backup: NODES must be a multiple of 100, at least 200" >&2
    exit 2
fi
DIR=${ZKCTL_BENCH_DIR:-/tmp/zkctl-bench-backup}
VENV=${ZKSHELL_VENV:-/tmp/zkshell-venv}
TARGET=${CARGO_TARGET_DIR:-target}

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
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=*
EOF
CP=/usr/share/java/zookeeper.jar
for jar in /usr/share/java/netty-codec.jar /usr/share/java/slf4j-simple.jar; do
    [[ -f $jar ]] && CP="$CP:$jar"
done
java -Xmx2g -XX:+UseSerialGC -Dzookeeper.forceSync=no -Dzookeeper.preAllocSize=65536 \
    -cp "$CP" org.apache.zookeeper.server.quorum.QuorumPeerMain "$DIR/zoo.cfg" \
    >"$DIR/server.log" 2>&1 &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true' EXIT
SERVER=127.0.0.1:$PORT
for _ in $(seq 1 150); do
    "$ZKCTL" --server "$SERVER" --connect-timeout 1000 ls / >/dev/null 2>&1 && break
    sleep 0.2
done
"$ZKCTL" --server "$SERVER" create /bench >/dev/null

# The tree, as an export file, made by a script (not by zkctl export).
python3 - "$NODES" >"$DIR/tree.jsonl" <<'PY'
import base64, json, sys
nodes = int(sys.argv[1])
per_dir = nodes // 100 - 1
open_acl = [{"perms": "cdrwa", "scheme": "world", "id": "anyone"}]
digest_acl = open_acl + [{"perms": "cdrwa", "scheme": "digest", "id": "ops:kXXfY7sU5N8Qm2HkJ1xL8Tn4ZqE="}]
def line(path, i, acl):
    if i % 10 == 9:
        raw = b"\xff" + bytes((i * 7 + k) % 256 for k in range(63))
        return json.dumps({"path": path, "mode": "persistent", "acl": acl, "encoding": "base64",
                           "data": base64.b64encode(raw).decode()}, separators=(",", ":"))
    text = ("node %d " % i).ljust(64, "x")
    return json.dumps({"path": path, "mode": "persistent", "acl": acl, "encoding": "utf8",
                       "data": text}, separators=(",", ":"))
print(line("/", 0, open_acl))
i = 1
for d in range(100):
    print(line("/d%03d" % d, i, open_acl)); i += 1
    for n in range(per_dir):
        print(line("/d%03d/n%06d" % (d, n), i, digest_acl if i % 100 == 0 else open_acl)); i += 1
PY
now() { date +%s.%N; }
secs() { python3 -c "print(f'{$2 - $1:.2f}')"; }
rate() { python3 -c "print(f'{$1 / ($3 - $2):,.0f}')"; }

t0=$(now); "$ZKCTL" --server "$SERVER" import "$DIR/tree.jsonl" --at /bench/src >/dev/null; t1=$(now)
echo "built /bench/src: $(( NODES + 1 )) nodes in $(secs "$t0" "$t1") s (zkctl import)"
TOTAL=$(( NODES + 1 ))

# GNU time's peak resident set (KiB), when it is installed.
TIME=()
if [[ -x /usr/bin/time ]]; then TIME=(/usr/bin/time -f %M -o); fi
t0=$(now); "${TIME[@]}" ${TIME[0]:+"$DIR/export.rss"} "$ZKCTL" --server "$SERVER" export /bench/src --out "$DIR/src.jsonl"; t1=$(now)
t2=$(now); "${TIME[@]}" ${TIME[0]:+"$DIR/import.rss"} "$ZKCTL" --server "$SERVER" import "$DIR/src.jsonl" --at /bench/copy >/dev/null; t3=$(now)
"$ZKCTL" --server "$SERVER" export /bench/copy --out "$DIR/copy.jsonl"
cmp "$DIR/src.jsonl" "$DIR/copy.jsonl"
cmp "$DIR/tree.jsonl" "$DIR/src.jsonl"
echo "round trip: export of /bench/copy equals export of /bench/src byte for byte ($(wc -c <"$DIR/src.jsonl") bytes, $(wc -l <"$DIR/src.jsonl") lines), and equals the generated tree"
EXPORT_S=$(secs "$t0" "$t1"); IMPORT_S=$(secs "$t2" "$t3")
BOTH_S=$(python3 -c "print(f'{$EXPORT_S + $IMPORT_S:.2f}')")
echo "zkctl export: $EXPORT_S s, $(rate "$TOTAL" "$t0" "$t1") nodes/s"
echo "zkctl import: $IMPORT_S s, $(rate "$TOTAL" "$t2" "$t3") nodes/s"
if [[ -f $DIR/export.rss ]]; then
    echo "peak resident set: export $(( $(tail -1 "$DIR/export.rss") / 1024 )) MiB, import $(( $(tail -1 "$DIR/import.rss") / 1024 )) MiB"
fi
echo "zkctl export+import: $BOTH_S s, $(python3 -c "print(f'{$TOTAL / $BOTH_S:,.0f}')") nodes/s"

# zk-shell's cp of the same tree.
if [[ ${ZKSHELL:-yes} == no ]]; then
    exit 0
fi
if [[ ! -x $VENV/bin/zk-shell ]]; then
    if ! { python3 -m venv "$VENV" && "$VENV/bin/pip" install --quiet zk-shell; } >"$DIR/zkshell-install.log" 2>&1; then
        echo "zk-shell: cannot be installed: $(tail -1 "$DIR/zkshell-install.log")"
        exit 0
    fi
fi
echo "zk-shell: $("$VENV/bin/zk-shell" --version 2>&1 | tail -1), kazoo $("$VENV/bin/python" -c 'import kazoo.version as v; print(v.__version__)' 2>/dev/null || echo '?'), $("$VENV/bin/python" --version)"
t0=$(now)
if ! "$VENV/bin/zk-shell" --run-once "cp /bench/src /bench/zkshell true true" "$SERVER" >"$DIR/zkshell.out" 2>&1; then
    echo "zk-shell cp failed: $(tail -3 "$DIR/zkshell.out")"
    exit 0
fi
t1=$(now)
ZKSHELL_S=$(secs "$t0" "$t1")
echo "zk-shell cp: $ZKSHELL_S s, $(rate "$TOTAL" "$t0" "$t1") nodes/s (output: $(head -c 200 "$DIR/zkshell.out" | tr '\n' ' '))"
set +e
"$ZKCTL" --server "$SERVER" diff /bench/src /bench/zkshell >"$DIR/zkshell.diff"
DIFF_CODE=$?
set -e
echo "zkctl diff /bench/src /bench/zkshell: exit $DIFF_CODE, $(wc -l <"$DIR/zkshell.diff") lines; by kind: $(cut -d' ' -f1 "$DIR/zkshell.diff" | sort | uniq -c | tr '\n' ' ')"
echo "ratio: zkctl export+import is $(python3 -c "print(f'{$ZKSHELL_S / $BOTH_S:.1f}')")x as fast as zk-shell cp"
