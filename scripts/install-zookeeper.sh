#!/usr/bin/env bash
# Installs what the tests need to run real ZooKeeper servers and real Apache Curator peers:
# - Debian's `zookeeper` package (3.8.0: server jar at /usr/share/java/zookeeper.jar plus its
#   dependency jars, `ZKRS_TEST_ZOOKEEPER=debian`) and a java runtime, for zkrs-testkit;
# - Maven (Debian's `maven`), and through it (scripts/fetch-jars.sh) the default ZooKeeper
#   server and the default Curator of scripts/versions.sh into the jar cache
#   (~/.cache/zkrs/jars): what every test runs unless ZKRS_TEST_ZOOKEEPER / ZKRS_TEST_CURATOR
#   choose another version (scripts/test-versions.sh fetches the others it runs);
# - a JDK with javac, for the Curator interop tests (tests/curator_interop.rs,
#   tests/curator_discovery.rs, ...: they compile tests/java/*.java);
# - the `openssl` command, with which zkrs-testkit makes the certificates of its TLS servers
#   (`TlsCertificates::generate`);
# - MIT Kerberos (Debian's `krb5-kdc`, `krb5-admin-server` and `krb5-user`: krb5kdc,
#   kdb5_util, kadmin.local, kinit, klist), with which zkrs-testkit runs a throw-away KDC
#   (`KerberosRealm::start`) for GSSAPI tests, and `libkrb5-dev` (the GSS-API library to link
#   against: the `sasl-gssapi` feature of zkrs-client, which zkctl turns on);
# - Debian's `python3-kazoo` (kazoo for Debian's /usr/bin/python3), for the kazoo test of the
#   `zkrs-model` binary (model-server/tests/kazoo.rs).
#
# Idempotent: installs only what is missing (the server jar unless ZKR_ZOOKEEPER_CLASSPATH is
# set, java unless found, mvn unless found, the jar cache's default versions unless complete,
# javac unless found, openssl unless found or ZKR_OPENSSL is set, the krb5 packages
# unless krb5kdc, kadmin.local and kinit are found, on the PATH or in /usr/sbin,
# /usr/local/sbin, /sbin, or ZKR_KRB5_PATH is set, python3-kazoo unless /usr/bin/python3
# imports kazoo or ZKRS_KAZOO_PYTHON is set). Prints one line saying what it did.
set -euo pipefail

JAR=/usr/share/java/zookeeper.jar
cd "$(dirname "$0")/.."
# shellcheck source=versions.sh
. scripts/versions.sh

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

have_javac() {
    if [ -n "${ZKR_JAVAC:-}" ]; then
        [ -x "$ZKR_JAVAC" ] || command -v "$ZKR_JAVAC" >/dev/null 2>&1
    elif [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/javac" ]; then
        true
    else
        command -v javac >/dev/null 2>&1
    fi
}

# A command on the PATH or in an sbin folder (Debian's KDC commands live in /usr/sbin, which a
# non-root PATH may lack; zkrs-testkit looks there too).
have_command() {
    command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/local/sbin/$1" ] \
        || [ -x "/sbin/$1" ]
}

packages=()
if [ -z "${ZKR_ZOOKEEPER_CLASSPATH:-}" ] && [ ! -f "$JAR" ]; then
    packages+=(zookeeper)
fi
if ! command -v mvn >/dev/null 2>&1; then
    packages+=(maven)
fi
if ! have_javac; then
    # A JDK brings java too.
    packages+=(default-jdk-headless)
elif ! have_java; then
    packages+=(default-jre-headless)
fi
if [ -z "${ZKR_OPENSSL:-}" ] && ! command -v openssl >/dev/null 2>&1; then
    packages+=(openssl)
fi
if [ -z "${ZKR_KRB5_PATH:-}" ] \
    && ! { have_command krb5kdc && have_command kadmin.local && have_command kinit; }; then
    packages+=(krb5-kdc krb5-admin-server krb5-user)
fi
# The link-time library of `sasl-gssapi` (the runtime one, libgssapi-krb5-2, comes with it).
if ! compgen -G '/usr/lib/*/libgssapi_krb5.so' >/dev/null \
    && ! compgen -G '/usr/lib/libgssapi_krb5.so' >/dev/null; then
    packages+=(libkrb5-dev)
fi
if [ -z "${ZKRS_KAZOO_PYTHON:-}" ] \
    && ! /usr/bin/python3 -c 'import kazoo' >/dev/null 2>&1; then
    packages+=(python3-kazoo)
fi

if [ "${#packages[@]}" -eq 0 ]; then
    server="$JAR"
    [ -n "${ZKR_ZOOKEEPER_CLASSPATH:-}" ] && server="ZKR_ZOOKEEPER_CLASSPATH"
    echo "install-zookeeper.sh: no package to install ($server, mvn, java, javac, openssl, krb5, libkrb5-dev and kazoo found)"
else
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
fi

# The default server and Curator from Maven Central, once (the jar cache keeps them; nothing
# is fetched at test time).
scripts/fetch-jars.sh zookeeper "$ZOOKEEPER_DEFAULT"
scripts/fetch-jars.sh curator "$CURATOR_DEFAULT"
