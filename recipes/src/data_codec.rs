//! How a recipe stores its data on the server: as given, or gzipped as Curator's
//! `compressed()` stores it and `decompressed()` reads it (feature `compression`). One place
//! for the choice, so a recipe's write paths and read paths cannot disagree.

use zkrs_client::{Bytes, Result};

/// A recipe's data on the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum DataCodec {
    /// As given.
    #[default]
    Plain,
    /// Curator's gzip ([`zkrs_client::compression`]).
    #[cfg(feature = "compression")]
    Gzip,
}

impl DataCodec {
    /// `Gzip` if `compressed`: a builder's `.compressed(bool)`.
    #[cfg(feature = "compression")]
    pub(crate) fn compressed(compressed: bool) -> DataCodec {
        if compressed {
            DataCodec::Gzip
        } else {
            DataCodec::Plain
        }
    }

    /// What to write for `data`.
    pub(crate) fn encode(self, data: &[u8]) -> Vec<u8> {
        match self {
            DataCodec::Plain => data.to_vec(),
            #[cfg(feature = "compression")]
            DataCodec::Gzip => zkrs_client::compression::compress(data),
        }
    }

    /// The data a read found: `InvalidData` if it should be gzip and is not, or would
    /// decompress past [`zkrs_client::compression::DEFAULT_MAX_DECOMPRESSED_LEN`].
    pub(crate) fn decode(self, stored: Bytes) -> Result<Bytes> {
        match self {
            DataCodec::Plain => Ok(stored),
            #[cfg(feature = "compression")]
            DataCodec::Gzip => zkrs_client::compression::decompress(&stored).map(Bytes::from),
        }
    }
}
