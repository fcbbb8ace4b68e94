#!/usr/bin/env bash
# Installs what zkr-testkit needs to run real ZooKeeper servers: Debian's
# `zookeeper` package (server jar at /usr/share/java/zookeeper.jar plus its
# dependency jars) and a java runtime.
#
# Idempotent: does nothing when the jar is there (or ZKR_ZOOKEEPER_CLASSPATH
# points elsewhere) and java exists. Prints one line saying what it did.
set -euo pipefail

JAR=/usr/share/java/zookeeper.jar

# Run as root directly, else through sudo when available.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        echo "install-zookeeper.sh: need root (or sudo) to run: $*" >&2
        exit 1
    fi
}

have_java() {
    if [ -n "${ZKR_JAVA:-}" ]; then
        [ -x "$ZKR_JAVA" ] || command -v "$ZKR_JAVA" >/dev/null 2>&1
    else
        command -v java >/dev/null 2>&1
    fi
}

packages=()
if [ -z "${ZKR_ZOOKEEPER_CLASSPATH:-}" ] && [ ! -f "$JAR" ]; then
    packages+=(zookeeper)
fi
if ! have_java; then
    packages+=(default-jre-headless)
fi

if [ "${#packages[@]}" -eq 0 ]; then
    if [ -n "${ZKR_ZOOKEEPER_CLASSPATH:-}" ]; then
        echo "install-zookeeper.sh: nothing to do (ZKR_ZOOKEEPER_CLASSPATH is set, java found)"
    else
        echo "install-zookeeper.sh: nothing to do ($JAR and java found)"
    fi
    exit 0
fi

# Quiet apt: its output goes to stderr only if something fails.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { as_root apt-get update && as_root env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "${packages[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "install-zookeeper.sh: apt-get install ${packages[*]} failed" >&2
    exit 1
fi
echo "install-zookeeper.sh: installed ${packages[*]}"
