//! [`LossReason`]: why a connection was dropped, told to every request that was in flight
//! and kept as the session's last failure.

use crate::error::Error;

/// Why the connection was dropped: told to every request that was in flight.
#[derive(Debug, Clone)]
pub(crate) struct LossReason {
    pub(crate) detail: String,
    /// What caused it (the I/O error, the malformed frame's error), shared by every request
    /// that failed because of it: their errors' `source()`.
    pub(crate) cause: Option<std::sync::Arc<dyn std::error::Error + Send + Sync>>,
}

impl std::fmt::Display for LossReason {
    /// The core's words for `last_connection_failure`, with every cause:
    /// `the connection failed: Connection reset ...`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.detail)?;
        let mut cause = self
            .cause
            .as_deref()
            .map(|c| c as &(dyn std::error::Error + 'static));
        while let Some(c) = cause {
            write!(f, ": {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}

impl LossReason {
    pub(crate) fn detail(detail: String) -> LossReason {
        LossReason {
            detail,
            cause: None,
        }
    }

    pub(crate) fn error(&self) -> Error {
        let error = Error::connection_loss().with_detail(self.detail.clone());
        match &self.cause {
            Some(cause) => error.with_shared_cause(cause.clone()),
            None => error,
        }
    }
}
