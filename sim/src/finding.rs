//! What a test found wrong, typed: a [`Finding`] has a [`FindingKind`] to match on and the
//! details in words. The kind is what a shrink keeps ([`Simulation::shrink`] keeps a fault
//! out only if the run still fails the same way), so a safety violation does not shrink into
//! a different failure, such as a step that timed out once a fault was left out.
//!
//! [`Simulation::shrink`]: crate::Simulation::shrink

use std::fmt;

/// Which kind of promise a [`Finding`] says was broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FindingKind {
    /// Something that must never happen happened: two leaders at once, an acknowledged
    /// write lost, a value going backwards.
    Safety,
    /// Something that must happen did not, within its bound: no leader 15 s after the faults
    /// healed, a cache still behind.
    Liveness,
    /// A step of the test itself failed (it could not connect, a read it needed failed), so
    /// it could not check what it meant to.
    Step,
    /// The test did not say ([`Finding`] made from a plain string).
    Unclassified,
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FindingKind::Safety => "safety",
            FindingKind::Liveness => "liveness",
            FindingKind::Step => "step",
            FindingKind::Unclassified => "unclassified",
        })
    }
}

/// What a simulated test found wrong: its kind and its details. A test returns
/// `Err(Finding)`; `?` turns a `String` or `&str` error into one of kind
/// [`FindingKind::Unclassified`].
///
/// ```
/// use zkrs_sim::{Finding, FindingKind};
///
/// let f = Finding::safety("two instances on duty at 1200 ms");
/// assert_eq!(f.kind(), FindingKind::Safety);
/// assert_eq!(f.to_string(), "safety: two instances on duty at 1200 ms");
/// let plain: Finding = String::from("no session").into();
/// assert_eq!(plain.kind(), FindingKind::Unclassified);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    kind: FindingKind,
    detail: String,
}

impl Finding {
    /// A finding of `kind`, with `detail` in words.
    pub fn new(kind: FindingKind, detail: impl Into<String>) -> Finding {
        Finding {
            kind,
            detail: detail.into(),
        }
    }

    /// A [`FindingKind::Safety`] finding.
    pub fn safety(detail: impl Into<String>) -> Finding {
        Finding::new(FindingKind::Safety, detail)
    }

    /// A [`FindingKind::Liveness`] finding.
    pub fn liveness(detail: impl Into<String>) -> Finding {
        Finding::new(FindingKind::Liveness, detail)
    }

    /// A [`FindingKind::Step`] finding.
    pub fn step(detail: impl Into<String>) -> Finding {
        Finding::new(FindingKind::Step, detail)
    }

    /// Its kind.
    pub fn kind(&self) -> FindingKind {
        self.kind
    }

    /// The details, in the test's words.
    pub fn detail(&self) -> &str {
        &self.detail
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            // A plain string reads as it was written (the campaign's and the traces' text).
            FindingKind::Unclassified => f.write_str(&self.detail),
            kind => write!(f, "{kind}: {}", self.detail),
        }
    }
}

impl From<String> for Finding {
    fn from(detail: String) -> Finding {
        Finding::new(FindingKind::Unclassified, detail)
    }
}

impl From<&str> for Finding {
    fn from(detail: &str) -> Finding {
        Finding::new(FindingKind::Unclassified, detail)
    }
}
