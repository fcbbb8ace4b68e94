//! Which ZooKeeper server and which Curator the tests run, and the jar cache they come from.
//!
//! A server or a Curator is a [`Distribution`]: Debian's packages (`debian`: ZooKeeper 3.8.0,
//! Curator 5.4.0 under `/usr/share/java`), or a version from Maven Central that
//! `scripts/fetch-jars.sh` fetched once into the jar cache ([`jar_cache`]). The test kit never
//! fetches anything itself: a version missing from the cache is an error that says how to
//! fetch it.
//!
//! Selection, for a server: [`ServerOptions::classpath`](crate::ServerOptions::classpath), else
//! [`ServerOptions::version`](crate::ServerOptions::version), else `ZKRS_TEST_ZOOKEEPER`, else
//! `ZKR_ZOOKEEPER_CLASSPATH`, else [`DEFAULT_ZOOKEEPER`]. For Curator: `ZKR_CURATOR_CLASSPATH`,
//! else `ZKRS_TEST_CURATOR`, else [`DEFAULT_CURATOR`].

use std::env;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::error::{Error, Result};

/// Chooses the ZooKeeper server the test kit starts: a version (`3.9.5`) from the jar cache,
/// or `debian`.
pub const ZOOKEEPER_ENV: &str = "ZKRS_TEST_ZOOKEEPER";
/// Chooses the Curator the Java peers run: a version (`5.9.0`) from the jar cache, or
/// `debian`.
pub const CURATOR_ENV: &str = "ZKRS_TEST_CURATOR";
/// Overrides where the jar cache is (else `${XDG_CACHE_HOME:-$HOME/.cache}/zkrs/jars`).
pub const JAR_CACHE_ENV: &str = "ZKRS_JAR_CACHE";

/// The server started when nothing chooses one: the newest 3.9 (what a new deployment runs).
/// `scripts/versions.sh` names the same.
pub const DEFAULT_ZOOKEEPER: &str = "3.9.5";
/// The Curator the peers run when nothing chooses one: the newest.
pub const DEFAULT_CURATOR: &str = "5.9.0";

/// Where a server's or Curator's jars come from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Distribution {
    /// Debian's packages under `/usr/share/java` (ZooKeeper 3.8.0, Curator 5.4.0).
    Debian,
    /// A version from Maven Central, in the jar cache.
    Maven(String),
}

impl Distribution {
    /// The server `ZKRS_TEST_ZOOKEEPER` chooses, `None` when it is unset or empty.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the value is neither `debian` nor a version.
    pub fn zookeeper_from_env() -> Result<Option<Distribution>> {
        from_env(ZOOKEEPER_ENV)
    }

    /// The Curator `ZKRS_TEST_CURATOR` chooses, else [`DEFAULT_CURATOR`].
    ///
    /// # Errors
    ///
    /// As for [`zookeeper_from_env`](Self::zookeeper_from_env).
    pub fn curator_from_env() -> Result<Distribution> {
        Ok(from_env(CURATOR_ENV)?.unwrap_or_else(|| Distribution::Maven(DEFAULT_CURATOR.into())))
    }

    /// The classpath of this distribution's `kind` (`zookeeper` or `curator`) in the jar cache:
    /// `<cache>/<kind>-<version>/*`. `None` for [`Distribution::Debian`], whose jars the
    /// callers pick themselves.
    ///
    /// # Errors
    ///
    /// [`Error::NotFetched`] naming the folder and the command that fetches it, when the cache
    /// does not hold this version whole.
    pub(crate) fn cached_classpath(&self, kind: &str) -> Result<Option<OsString>> {
        let Distribution::Maven(version) = self else {
            return Ok(None);
        };
        let folder = jar_cache().join(format!("{kind}-{version}"));
        if !folder.join("complete").is_file() {
            return Err(Error::NotFetched {
                what: format!("{kind} {version}"),
                folder,
                command: format!("scripts/fetch-jars.sh {kind} {version}"),
            });
        }
        Ok(Some(folder.join("*").into_os_string()))
    }
}

impl FromStr for Distribution {
    type Err = Error;

    fn from_str(value: &str) -> Result<Self> {
        let value = value.trim();
        if value == "debian" {
            return Ok(Distribution::Debian);
        }
        let numeric = value.split('.').count() == 3
            && value
                .split('.')
                .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
        if !numeric {
            return Err(Error::InvalidArgument {
                message: format!(
                    "{value:?} is neither `debian` nor a version like {DEFAULT_ZOOKEEPER}"
                ),
            });
        }
        Ok(Distribution::Maven(value.to_owned()))
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Distribution::Debian => f.write_str("debian"),
            Distribution::Maven(version) => f.write_str(version),
        }
    }
}

fn from_env(var: &str) -> Result<Option<Distribution>> {
    match env::var(var) {
        Ok(value) if !value.trim().is_empty() => {
            value
                .parse()
                .map(Some)
                .map_err(|e: Error| Error::InvalidArgument {
                    message: format!("{var}: {e}"),
                })
        }
        _ => Ok(None),
    }
}

/// The jar cache: `ZKRS_JAR_CACHE`, else `${XDG_CACHE_HOME:-$HOME/.cache}/zkrs/jars` (the
/// folder `scripts/fetch-jars.sh` fills).
pub fn jar_cache() -> PathBuf {
    if let Some(dir) = env::var_os(JAR_CACHE_ENV).filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    let base = env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(&env::var_os("HOME").unwrap_or_else(|| "/".into())).join(".cache")
        });
    base.join("zkrs").join("jars")
}

/// A server's version as it reports it (`srvr`'s `Zookeeper version: 3.9.5-…` line), for
/// tests whose expectations differ by version.
///
/// ```
/// use zkrs_testkit::ServerVersion;
/// let srvr = "Zookeeper version: 3.9.5-1a2b, built on 2025-01-01\n";
/// let v = ServerVersion::from_srvr(srvr).unwrap();
/// assert_eq!(v, ServerVersion::new(3, 9, 5));
/// assert!(v.at_least(3, 6) && !v.at_least(3, 10));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServerVersion {
    /// 3 for every ZooKeeper this kit runs.
    pub major: u32,
    /// The line: 5 to 9.
    pub minor: u32,
    /// The release within the line.
    pub patch: u32,
}

impl ServerVersion {
    /// `major.minor.patch`.
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        ServerVersion {
            major,
            minor,
            patch,
        }
    }

    /// Whether this is `major.minor` or later.
    pub fn at_least(self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }

    /// The version in a `srvr` or `stat` answer.
    pub fn from_srvr(answer: &str) -> Option<ServerVersion> {
        let line = answer
            .lines()
            .find_map(|line| line.strip_prefix("Zookeeper version:"))?;
        let digits = line.trim().split(['-', ',', ' ']).next()?;
        let mut parts = digits.split('.').map(|p| p.parse::<u32>().ok());
        let (major, minor, patch) = (parts.next()??, parts.next()??, parts.next()??);
        Some(ServerVersion::new(major, minor, patch))
    }
}

impl fmt::Display for ServerVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributions_parse_and_refuse_what_is_not_one() {
        assert_eq!(
            "debian".parse::<Distribution>().unwrap(),
            Distribution::Debian
        );
        assert_eq!(
            " 3.5.10 ".parse::<Distribution>().unwrap(),
            Distribution::Maven("3.5.10".into())
        );
        for bad in ["", "3.9", "3.9.x", "latest", "3..1"] {
            assert!(bad.parse::<Distribution>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_version_missing_from_the_cache_names_the_fetch_command() {
        let err = Distribution::Maven("0.0.1".into())
            .cached_classpath("zookeeper")
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("zookeeper 0.0.1")
                && text.contains("scripts/fetch-jars.sh zookeeper 0.0.1"),
            "{text}"
        );
        assert_eq!(
            Distribution::Debian.cached_classpath("curator").unwrap(),
            None
        );
    }

    #[test]
    fn versions_are_read_from_srvr() {
        let answer =
            "Zookeeper version: 3.5.10-c4c1b1f, built on 05/31/2022 GMT\nMode: standalone\n";
        assert_eq!(
            ServerVersion::from_srvr(answer),
            Some(ServerVersion::new(3, 5, 10))
        );
        assert_eq!(
            ServerVersion::from_srvr("Zookeeper version: 3.8.0-debian--1, built on ...\n"),
            Some(ServerVersion::new(3, 8, 0))
        );
        assert_eq!(ServerVersion::from_srvr("not serving"), None);
        assert!(ServerVersion::new(3, 10, 0) > ServerVersion::new(3, 9, 5));
    }

    /// The scripts fetch and test what the kit starts by default.
    #[test]
    fn defaults_match_scripts_versions() {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/versions.sh");
        let Ok(text) = std::fs::read_to_string(script) else {
            // Outside the repository (the published crate): nothing to compare.
            return;
        };
        assert!(
            text.contains(&format!("\nZOOKEEPER_DEFAULT={DEFAULT_ZOOKEEPER}\n")),
            "{text}"
        );
        assert!(
            text.contains(&format!("\nCURATOR_DEFAULT={DEFAULT_CURATOR}\n")),
            "{text}"
        );
    }
}
