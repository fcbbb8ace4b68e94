# The ZooKeeper and Curator versions the project is tested against: sourced by
# scripts/fetch-jars.sh, scripts/install-zookeeper.sh and scripts/test-versions.sh.
#
# `debian` is Debian's packages (ZooKeeper 3.8.0, Curator 5.4.0 under /usr/share/java); every
# other name is a version from Maven Central, fetched once into the jar cache
# (scripts/fetch-jars.sh). The defaults are what `scripts/test.sh` runs everything against; the
# test kit's own defaults (`zkrs_testkit::DEFAULT_ZOOKEEPER`, `DEFAULT_CURATOR`) are checked to
# be these (testkit/src/versions.rs, its test `defaults_match_scripts_versions`).

# What a new deployment runs: the newest 3.9 that Maven Central serves whole (3.9.6's parent
# POM's dependencies are not all served).
ZOOKEEPER_DEFAULT=3.9.5
# Every server line people run, oldest first: the last of each line Maven Central serves
# (3.8.7's parent POM is not served: 3.8.6), and Debian's 3.8.0.
ZOOKEEPER_MATRIX=(3.5.10 3.6.4 3.7.2 debian 3.8.6 3.9.5)

CURATOR_DEFAULT=5.9.0
CURATOR_MATRIX=(5.4.0 5.9.0)
