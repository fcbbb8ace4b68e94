#!/usr/bin/env bash
# Fetches ZooKeeper servers and Curator peers of given versions from Maven Central into the
# jar cache, once: the test kit starts them from there (ZKRS_TEST_ZOOKEEPER=VERSION,
# ZKRS_TEST_CURATOR=VERSION, `ServerOptions::version`), and never fetches anything itself.
#
#   scripts/fetch-jars.sh zookeeper 3.9.5 [3.7.2 ...]
#   scripts/fetch-jars.sh curator 5.9.0 [5.4.0 ...]
#
# The cache: $ZKRS_JAR_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/zkrs/jars; one folder per
# version (zookeeper-3.9.5/, curator-5.9.0/) holding every jar of the classpath, and a file
# `complete` written last, so an interrupted fetch is fetched again. `debian` as a version is
# Debian's packages (scripts/install-zookeeper.sh installs them): nothing to fetch.
#
# A ZooKeeper folder holds the server jar with its runtime dependencies, what its POM leaves to
# the distribution that the server needs (metrics-core, snappy-java, commons-cli), and slf4j-simple of the
# same slf4j line (the logging binding is left to the distribution too; without one the server
# logs nothing). A Curator folder holds curator-recipes, curator-x-discovery, curator-x-async
# (ModeledFramework, with jackson-databind for its JSON) and their dependencies, the ZooKeeper
# client that version of Curator was released with included.
#
# Needs `mvn` (Debian's `maven`, installed by scripts/install-zookeeper.sh). A version Maven
# Central does not serve fails with Maven's own answer and the version named.
set -euo pipefail

usage() {
    echo "usage: $0 zookeeper|curator VERSION..." >&2
    exit 2
}
[ $# -ge 2 ] || usage
kind="$1"
shift
case "$kind" in zookeeper | curator) ;; *) usage ;; esac

cache="${ZKRS_JAR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zkrs/jars}"

if ! command -v mvn >/dev/null 2>&1; then
    echo "fetch-jars.sh: mvn not found (apt-get install maven, or run scripts/install-zookeeper.sh)" >&2
    exit 1
fi

dependency() {
    printf '<dependency><groupId>%s</groupId><artifactId>%s</artifactId><version>%s</version>%s</dependency>\n' "$1" "$2" "$3" "${4:-}"
}

# Writes a POM to $1/pom.xml: its dependency management imports the BOM $2 (a rendered
# dependency, or empty), its dependencies are the rest (rendered).
write_pom() {
    local dir="$1" bom="$2"
    shift 2
    {
        echo '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        echo '<groupId>zkrs</groupId><artifactId>fetch-jars</artifactId><version>1</version><packaging>pom</packaging>'
        [ -n "$bom" ] && echo "<dependencyManagement><dependencies>$bom</dependencies></dependencyManagement>"
        echo '<dependencies>'
        printf '%s\n' "$@"
        echo '</dependencies></project>'
    } >"$dir/pom.xml"
}

# Copies the dependencies of $1/pom.xml into $2; on failure prints Maven's errors naming $3.
copy_dependencies() {
    local dir="$1" out="$2" what="$3" log="$1/mvn.log"
    if ! (cd "$dir" && mvn -B -q -Dstyle.color=never dependency:copy-dependencies \
        -DincludeScope=runtime -DoutputDirectory="$out") >"$log" 2>&1; then
        echo "fetch-jars.sh: $what could not be fetched from Maven Central; Maven said:" >&2
        # Its first error is the answer; the rest is Maven's advice on how to debug.
        sed -E 's/\x1b\[[0-9;]*m//g' "$log" | grep -m1 '^\[ERROR\]' >&2 || cat "$log" >&2
        return 1
    fi
}

fetch() {
    local version="$1"
    local target="$cache/$kind-$version"
    if [ "$version" = debian ] || [ -f "$target/complete" ]; then
        return 0
    fi
    local work
    work=$(mktemp -d)
    local deps=() bom=""
    case "$kind" in
    zookeeper)
        deps+=("$(dependency org.apache.zookeeper zookeeper "$version")")
        # What the server's POM marks `provided` (the distribution's lib/ ships it) and the
        # server or its shell (ZooKeeperMain, which tests run too) needs at run time:
        # Dropwizard's metrics (3.6 on: the default metrics provider), snappy (snapshot
        # compression) and commons-cli, in the versions of that release's parent POM.
        bom=$(dependency org.apache.zookeeper parent "$version" '<type>pom</type><scope>import</scope>')
        deps+=("<dependency><groupId>org.xerial.snappy</groupId><artifactId>snappy-java</artifactId></dependency>")
        deps+=("<dependency><groupId>commons-cli</groupId><artifactId>commons-cli</artifactId></dependency>")
        case "$version" in
        3.[0-5].*) ;;
        *) deps+=("<dependency><groupId>io.dropwizard.metrics</groupId><artifactId>metrics-core</artifactId></dependency>") ;;
        esac
        ;;
    curator)
        local artifact
        for artifact in curator-recipes curator-x-discovery curator-x-async; do
            deps+=("$(dependency org.apache.curator "$artifact" "$version")")
        done
        ;;
    esac
    write_pom "$work" "$bom" "${deps[@]}"
    mkdir -p "$work/jars"
    if ! copy_dependencies "$work" "$work/jars" "$kind $version"; then
        rm -rf "$work"
        return 1
    fi
    # The logging binding of the slf4j line the jars use (and, for Curator's typed nodes,
    # jackson-databind, which curator-x-async leaves to its users).
    local slf4j
    slf4j=$(find "$work/jars" -name 'slf4j-api-*.jar' -printf '%f\n' | sed -E 's/^slf4j-api-(.*)\.jar$/\1/' | head -n1)
    local extra=()
    [ -n "$slf4j" ] && extra+=("$(dependency org.slf4j slf4j-simple "$slf4j")")
    if [ "$kind" = curator ] && ! compgen -G "$work/jars/jackson-databind-*.jar" >/dev/null; then
        extra+=("$(dependency com.fasterxml.jackson.core jackson-databind 2.17.2)")
    fi
    if [ "${#extra[@]}" -gt 0 ]; then
        mkdir -p "$work/extra"
        write_pom "$work/extra" "" "${extra[@]}"
        if ! copy_dependencies "$work/extra" "$work/jars" "the logging binding of $kind $version"; then
            rm -rf "$work"
            return 1
        fi
    fi
    mkdir -p "$cache"
    rm -rf "$target"
    mv "$work/jars" "$target"
    rm -rf "$work"
    ls "$target" >"$target/complete"
    echo "fetch-jars.sh: $kind $version into $target ($(find "$target" -name '*.jar' | wc -l) jars)"
}

status=0
for version in "$@"; do
    fetch "$version" || status=1
done
exit "$status"
