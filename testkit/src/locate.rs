//! Finding the `java` binary and the ZooKeeper server classpath.
//!
//! Resolution order, for each of the two:
//!
//! * classpath: an explicit value ([`ServerOptions::classpath`]), else an explicit version
//!   ([`ServerOptions::version`]), else the version `ZKRS_TEST_ZOOKEEPER` names, else the
//!   `ZKR_ZOOKEEPER_CLASSPATH` environment variable (a complete java classpath,
//!   `:`-separated, `dir/*` wildcards allowed), else [`DEFAULT_ZOOKEEPER`]. A version is a
//!   folder of the jar cache ([`jar_cache`](crate::jar_cache), filled by
//!   `scripts/fetch-jars.sh`), or `debian`: the Debian `zookeeper` package layout under
//!   `/usr/share/java`;
//! * java: an explicit value ([`ServerOptions::java`]), else `ZKR_JAVA`, else
//!   `$JAVA_HOME/bin/java`, else `java` on the `PATH`.
//!
//! [`ServerOptions::classpath`]: crate::ServerOptions::classpath
//! [`ServerOptions::version`]: crate::ServerOptions::version
//! [`ServerOptions::java`]: crate::ServerOptions::java
//! [`DEFAULT_ZOOKEEPER`]: crate::DEFAULT_ZOOKEEPER

use std::env;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::versions::{Distribution, DEFAULT_ZOOKEEPER};

/// Environment variable holding a complete java classpath for the server; it
/// overrides the Debian layout.
pub const CLASSPATH_ENV: &str = "ZKR_ZOOKEEPER_CLASSPATH";

/// Environment variable naming the `java` binary to use.
pub const JAVA_ENV: &str = "ZKR_JAVA";

/// Where Debian's `zookeeper` package (through `libzookeeper-java`) puts the
/// server jar.
pub const DEBIAN_SERVER_JAR: &str = "/usr/share/java/zookeeper.jar";

/// Extra Debian jars added after the server jar, when present.
///
/// The server jar's manifest `Class-Path` already names its runtime
/// dependencies (slf4j-api, jute, netty, metrics, jetty, jackson...), so the
/// JVM finds those on its own. It does *not* name an SLF4J binding: with the
/// bare jar the server logs nothing at all (slf4j falls back to its no-op
/// logger), which makes startup failures invisible. Debian ships ZooKeeper
/// 3.8 with log4j 1.2 (not logback as upstream does), so we add the
/// slf4j-log4j12 binding and log4j itself; slf4j-simple is the fallback.
const DEBIAN_LOGGING_JARS: &[&[&str]] = &[
    &[
        "/usr/share/java/slf4j-log4j12.jar",
        "/usr/share/java/log4j-1.2.jar",
    ],
    &["/usr/share/java/slf4j-simple.jar"],
];

/// Debian jars the server needs that its manifest does not name, added when
/// present: Netty's codec jar, without which the Netty connection factory
/// (the one serving TLS) starts but fails every connection with
/// `NoClassDefFoundError: io/netty/handler/codec/ByteToMessageDecoder` (its
/// `SslHandler` is a `ByteToMessageDecoder`). Debian's 3.8.0 manifest names
/// netty-buffer, -common, -handler, -transport and -transport-native-epoll
/// only.
const DEBIAN_MISSING_JARS: &[&str] = &["/usr/share/java/netty-codec.jar"];

/// A located ZooKeeper server installation: the `java` binary and the
/// classpath to run the server with.
///
/// Usually built for you by [`TestingServer`](crate::TestingServer) and
/// [`TestingCluster`](crate::TestingCluster); use it directly to check up
/// front that ZooKeeper is installed:
///
/// ```no_run
/// let install = zkrs_testkit::Installation::detect()?;
/// println!("java {} -cp {:?}", install.java().display(), install.classpath());
/// # Ok::<(), zkrs_testkit::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installation {
    java: PathBuf,
    classpath: OsString,
    distribution: Option<Distribution>,
}

impl Installation {
    /// Locates java and the server from the environment (`ZKR_JAVA`, `ZKRS_TEST_ZOOKEEPER`,
    /// `ZKR_ZOOKEEPER_CLASSPATH`), else the default version.
    ///
    /// # Errors
    ///
    /// [`Error::ServerNotFound`] if a classpath entry is missing (the message
    /// says how to install ZooKeeper), [`Error::JavaNotFound`] if there is no
    /// java.
    pub fn detect() -> Result<Self> {
        Self::select(None, None, None)
    }

    /// Like [`detect`](Self::detect), but an explicit `classpath` and/or
    /// `java` take precedence over the environment variables.
    ///
    /// Every non-empty classpath entry must exist (for a `dir/*` wildcard,
    /// the directory must exist): a typo would otherwise surface as an
    /// obscure `ClassNotFoundException` in the server log.
    ///
    /// # Errors
    ///
    /// As for [`detect`](Self::detect).
    pub fn resolve(classpath: Option<&OsStr>, java: Option<&Path>) -> Result<Self> {
        Self::select(classpath, None, java)
    }

    /// The server `distribution` (a version from the jar cache, or Debian's), with java
    /// found as for [`resolve`](Self::resolve).
    ///
    /// # Errors
    ///
    /// [`Error::NotFetched`] when the jar cache lacks the version, else as for
    /// [`detect`](Self::detect).
    pub fn of(distribution: &Distribution, java: Option<&Path>) -> Result<Self> {
        Self::select(None, Some(distribution), java)
    }

    /// The resolution order of the module's documentation.
    pub(crate) fn select(
        classpath: Option<&OsStr>,
        version: Option<&Distribution>,
        java: Option<&Path>,
    ) -> Result<Self> {
        let chosen = match (classpath, version) {
            (Some(_), _) => None,
            (None, Some(version)) => Some(version.clone()),
            (None, None) => match Distribution::zookeeper_from_env()? {
                Some(version) => Some(version),
                None if env::var_os(CLASSPATH_ENV).is_some_and(|v| !v.is_empty()) => None,
                None => Some(Distribution::Maven(DEFAULT_ZOOKEEPER.into())),
            },
        };
        let classpath = match (&chosen, classpath) {
            (Some(distribution), _) => match distribution.cached_classpath("zookeeper")? {
                Some(cp) => check_classpath(&cp)?,
                None => debian_classpath()?,
            },
            (None, Some(cp)) => check_classpath(cp)?,
            (None, None) => check_classpath(&env::var_os(CLASSPATH_ENV).unwrap_or_default())?,
        };
        let java = match java {
            Some(j) => find_java(j.as_os_str())?,
            None => match env::var_os(JAVA_ENV).filter(|v| !v.is_empty()) {
                Some(j) => find_java(&j)?,
                None => default_java()?,
            },
        };
        Ok(Installation {
            java,
            classpath,
            distribution: chosen,
        })
    }

    /// The `java` binary.
    pub fn java(&self) -> &Path {
        &self.java
    }

    /// The classpath passed to `java -cp`.
    pub fn classpath(&self) -> &OsStr {
        &self.classpath
    }

    /// The distribution the classpath is of, `None` when a classpath was given
    /// ([`ServerOptions::classpath`](crate::ServerOptions::classpath),
    /// `ZKR_ZOOKEEPER_CLASSPATH`). The version a running server reports is
    /// [`TestingServer::version`](crate::TestingServer::version).
    pub fn distribution(&self) -> Option<&Distribution> {
        self.distribution.as_ref()
    }
}

/// Checks that every entry of an explicit classpath exists.
fn check_classpath(cp: &OsStr) -> Result<OsString> {
    let mut any = false;
    for entry in env::split_paths(cp) {
        if entry.as_os_str().is_empty() {
            continue;
        }
        any = true;
        // `dir/*` is a java wildcard: the directory has to exist.
        let must_exist = if entry.file_name() == Some(OsStr::new("*")) {
            entry.parent().map(Path::to_path_buf).unwrap_or_default()
        } else {
            entry.clone()
        };
        if !must_exist.exists() {
            return Err(Error::ServerNotFound { path: entry });
        }
    }
    if !any {
        return Err(Error::ServerNotFound {
            path: PathBuf::from(cp),
        });
    }
    Ok(cp.to_os_string())
}

/// The classpath for Debian's `zookeeper` package.
fn debian_classpath() -> Result<OsString> {
    let jar = Path::new(DEBIAN_SERVER_JAR);
    if !jar.is_file() {
        return Err(Error::ServerNotFound {
            path: jar.to_path_buf(),
        });
    }
    let mut entries = vec![jar.to_path_buf()];
    entries.extend(
        DEBIAN_MISSING_JARS
            .iter()
            .map(PathBuf::from)
            .filter(|j| j.is_file()),
    );
    if let Some(jars) = DEBIAN_LOGGING_JARS
        .iter()
        .find(|jars| jars.iter().all(|j| Path::new(j).is_file()))
    {
        entries.extend(jars.iter().map(PathBuf::from));
    }
    env::join_paths(entries).map_err(|e| Error::InvalidArgument {
        message: format!("cannot build the classpath: {e}"),
    })
}

/// `$JAVA_HOME/bin/java` if it exists, else `java` on the `PATH`.
fn default_java() -> Result<PathBuf> {
    if let Some(home) = env::var_os("JAVA_HOME").filter(|v| !v.is_empty()) {
        let java = Path::new(&home).join("bin").join("java");
        if java.is_file() {
            return Ok(java);
        }
    }
    find_java(OsStr::new("java"))
}

/// Resolves a java binary given as a path or as a bare name looked up on the
/// `PATH` (so that a missing java is reported by us, not as a spawn error).
fn find_java(java: &OsStr) -> Result<PathBuf> {
    let path = Path::new(java);
    if path.components().count() > 1 {
        return if path.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(Error::JavaNotFound {
                java: path.to_path_buf(),
            })
        };
    }
    env::var_os("PATH")
        .iter()
        .flat_map(env::split_paths)
        .map(|dir| dir.join(path))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| Error::JavaNotFound {
            java: path.to_path_buf(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_explicit_jar_is_server_not_found() {
        let err = Installation::resolve(
            Some(OsStr::new("/nonexistent/zookeeper.jar")),
            Some(Path::new("/bin/sh")),
        )
        .unwrap_err();
        assert!(
            matches!(&err, Error::ServerNotFound { path } if path == Path::new("/nonexistent/zookeeper.jar")),
            "{err:?}"
        );
    }

    #[test]
    fn wildcard_entries_need_their_directory() {
        let ok = Installation::resolve(Some(OsStr::new("/tmp/*")), Some(Path::new("/bin/sh")));
        assert!(ok.is_ok(), "{ok:?}");
        let err = Installation::resolve(
            Some(OsStr::new("/tmp:/nonexistent-dir/*")),
            Some(Path::new("/bin/sh")),
        )
        .unwrap_err();
        assert!(matches!(err, Error::ServerNotFound { .. }), "{err:?}");
    }

    #[test]
    fn missing_java_is_reported() {
        let err = Installation::resolve(
            Some(OsStr::new("/tmp")),
            Some(Path::new("/nonexistent/bin/java")),
        )
        .unwrap_err();
        assert!(matches!(err, Error::JavaNotFound { .. }), "{err:?}");
        let err = Installation::resolve(
            Some(OsStr::new("/tmp")),
            Some(Path::new("no-such-java-binary-zkr")),
        )
        .unwrap_err();
        assert!(matches!(err, Error::JavaNotFound { .. }), "{err:?}");
    }

    #[test]
    fn bare_names_are_looked_up_on_the_path() {
        let found = Installation::resolve(Some(OsStr::new("/tmp")), Some(Path::new("sh")))
            .expect("sh is on the PATH");
        assert!(found.java().is_absolute(), "{found:?}");
    }
}
