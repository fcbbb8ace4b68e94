//! Which ZooKeeper release the model answers as: 3.8.0 (Debian's package, the default) to the
//! 3.9 line. Each behaviour that changed between them is a method here, named after what a
//! client sees, with the release that changed it; the rest of the model asks these methods and
//! never compares versions itself.

use std::fmt;
use std::str::FromStr;

/// The ZooKeeper release the model answers as ([`ServerConfig::zookeeper`]).
///
/// The model follows ZooKeeper 3.8.0 (Debian's package, the default) to 3.9.x; within those
/// lines the patch release matters where a fix changed what a client sees (for instance
/// `exists` checks READ from 3.8.4 and 3.9.2). `srvr`, `stat` and `mntr` report this version.
///
/// ```
/// use zkrs_model::ZooKeeperVersion;
/// let v: ZooKeeperVersion = "3.9.5".parse().unwrap();
/// assert_eq!(v, ZooKeeperVersion::new(3, 9, 5).unwrap());
/// assert_eq!("3.9".parse::<ZooKeeperVersion>().unwrap().to_string(), "3.9.0");
/// assert!("3.7.2".parse::<ZooKeeperVersion>().is_err());
/// ```
///
/// [`ServerConfig::zookeeper`]: crate::ServerConfig::zookeeper
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ZooKeeperVersion {
    minor: u32,
    patch: u32,
}

/// A version the model cannot answer as, or text that is not a version.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum VersionError {
    /// Not `3.MINOR[.PATCH]` with numbers.
    Malformed(String),
    /// A release outside 3.8.0 to 3.9.x (3.5 to 3.7 differ in ways the model does not follow).
    Unsupported(String),
}

impl fmt::Display for VersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VersionError::Malformed(s) => write!(f, "{s:?} is not a ZooKeeper version (3.8.0)"),
            VersionError::Unsupported(s) => {
                write!(f, "ZooKeeper {s} is not modelled: 3.8.0 to 3.9.x are")
            }
        }
    }
}

impl std::error::Error for VersionError {}

impl ZooKeeperVersion {
    /// ZooKeeper 3.8.0, as Debian's package runs it: the default.
    pub const V3_8_0: ZooKeeperVersion = ZooKeeperVersion { minor: 8, patch: 0 };

    /// ZooKeeper 3.9.5, the latest release the model was compared with.
    pub const V3_9_5: ZooKeeperVersion = ZooKeeperVersion { minor: 9, patch: 5 };

    /// `major.minor.patch`, if the model follows that release (3.8.0 to 3.9.x).
    ///
    /// # Errors
    ///
    /// [`VersionError::Unsupported`] for any other release.
    pub fn new(major: u32, minor: u32, patch: u32) -> Result<Self, VersionError> {
        if major == 3 && (minor == 8 || minor == 9) {
            Ok(ZooKeeperVersion { minor, patch })
        } else {
            Err(VersionError::Unsupported(format!(
                "{major}.{minor}.{patch}"
            )))
        }
    }

    /// The release line: 8 or 9.
    pub fn minor(self) -> u32 {
        self.minor
    }

    /// The patch release within the line.
    pub fn patch(self) -> u32 {
        self.patch
    }

    fn at_least(self, minor: u32, patch: u32) -> bool {
        (self.minor, self.patch) >= (minor, patch)
    }

    /// ZOOKEEPER-4466, 4471, 4472 (3.9.0): a connection keeps a standard, a persistent and a
    /// persistent recursive watch on one path side by side; a recursive watch lives in the
    /// data table only; checkWatches and removeWatches look at the asking connection's watch
    /// of the mode the type names (types 4 and 5 accepted). Before: one mode per path, a
    /// standard watch replacing a persistent one, checkWatches answering for any connection.
    pub(crate) fn watch_modes_side_by_side(self) -> bool {
        self.at_least(9, 0)
    }

    /// ZOOKEEPER-4655 (3.9.0): a notification's header carries the zxid of the transaction
    /// that fired it (-1 for setWatches' own events); before, always -1.
    pub(crate) fn events_carry_zxid(self) -> bool {
        self.at_least(9, 0)
    }

    /// ZOOKEEPER-4026 (3.8.2, 3.9.0): a create2 inside a multi stays create2 (its result has
    /// the Stat). Before: every create in a multi but a container or TTL one became create.
    pub(crate) fn create2_in_multi(self) -> bool {
        self.at_least(8, 2)
    }

    /// ZOOKEEPER-2590 (3.8.4, 3.9.2): `exists` of a node needs READ on it (NoAuth, no watch
    /// left); before, anyone could stat any node.
    pub(crate) fn exists_checks_read(self) -> bool {
        match self.minor {
            8 => self.patch >= 4,
            _ => self.at_least(9, 2),
        }
    }
}

impl Default for ZooKeeperVersion {
    fn default() -> Self {
        ZooKeeperVersion::V3_8_0
    }
}

impl fmt::Display for ZooKeeperVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "3.{}.{}", self.minor, self.patch)
    }
}

impl FromStr for ZooKeeperVersion {
    type Err = VersionError;

    /// `3.MINOR` (patch 0) or `3.MINOR.PATCH`.
    fn from_str(s: &str) -> Result<Self, VersionError> {
        let malformed = || VersionError::Malformed(s.to_owned());
        let parts: Vec<u32> = s
            .split('.')
            .map(|p| p.parse::<u32>().map_err(|_| malformed()))
            .collect::<Result<_, _>>()?;
        match parts[..] {
            [major, minor] => ZooKeeperVersion::new(major, minor, 0),
            [major, minor, patch] => ZooKeeperVersion::new(major, minor, patch),
            _ => Err(malformed()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines_and_releases_and_refuses_the_rest() {
        assert_eq!("3.8".parse(), Ok(ZooKeeperVersion::V3_8_0));
        assert_eq!("3.9.5".parse(), Ok(ZooKeeperVersion::V3_9_5));
        assert!(matches!(
            "3.7.2".parse::<ZooKeeperVersion>(),
            Err(VersionError::Unsupported(_))
        ));
        for bad in ["", "3", "3.x", "3.9.5.1", "v3.9", "3.9.-1"] {
            assert!(
                matches!(
                    bad.parse::<ZooKeeperVersion>(),
                    Err(VersionError::Malformed(_))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn each_change_starts_at_its_release() {
        let v = |s: &str| s.parse::<ZooKeeperVersion>().unwrap();
        assert!(!v("3.8.6").watch_modes_side_by_side() && v("3.9.0").watch_modes_side_by_side());
        assert!(!v("3.8.6").events_carry_zxid() && v("3.9.0").events_carry_zxid());
        assert!(!v("3.8.1").create2_in_multi() && v("3.8.2").create2_in_multi());
        assert!(v("3.9.0").create2_in_multi());
        assert!(!v("3.8.3").exists_checks_read() && v("3.8.4").exists_checks_read());
        assert!(!v("3.9.1").exists_checks_read() && v("3.9.2").exists_checks_read());
    }
}
