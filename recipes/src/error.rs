//! The recipes' shorthands for the local errors they make most, built with the client's
//! public API ([`Error::new`]) as a recipe of your own would.

use zkrs_client::{Error, ErrorKind};

/// `Error::invalid(..)` and the like, for the recipes' code.
pub(crate) trait ErrorExt {
    /// Input refused before anything was sent ([`ErrorKind::InvalidInput`]).
    fn invalid(detail: impl Into<String>) -> Error;
    /// A node's data is not what the recipe expects ([`ErrorKind::InvalidData`]).
    fn invalid_data(detail: impl Into<String>) -> Error;
    /// The recipe (or its client) was closed ([`ErrorKind::Closed`]).
    fn closed() -> Error;
}

impl ErrorExt for Error {
    fn invalid(detail: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidInput, detail)
    }

    fn invalid_data(detail: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidData, detail)
    }

    fn closed() -> Error {
        Error::new(ErrorKind::Closed, "the client is closed")
    }
}
