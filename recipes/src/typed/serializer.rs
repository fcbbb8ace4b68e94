//! [`ValueSerializer`]: how a typed node's value becomes its bytes and back; JSON by default
//! ([`JsonSerializer`]).

use serde::de::DeserializeOwned;
use serde::Serialize;
use zkrs_client::{Error, ErrorKind};

/// How a value is written to a node's data and read back, as Curator's `ModelSerializer`:
/// bytes out, bytes in. [`JsonSerializer`] is the default; implement this for another
/// format (CBOR, protobuf, a fixed binary layout).
///
/// The errors are the format's own: the typed node reports a failure to write as kind
/// [`InvalidInput`](zkrs_client::ErrorKind::InvalidInput) and a failure to read as kind
/// [`InvalidData`](zkrs_client::ErrorKind::InvalidData), with the path, and the format's
/// error as the [`source`](std::error::Error::source).
///
/// ```
/// use zkrs_recipes::typed::ValueSerializer;
///
/// /// A count as decimal text.
/// struct Decimal;
///
/// impl ValueSerializer<u64> for Decimal {
///     type Error = std::num::ParseIntError;
///     fn serialize(&self, value: &u64) -> Result<Vec<u8>, Self::Error> {
///         Ok(value.to_string().into_bytes())
///     }
///     fn deserialize(&self, bytes: &[u8]) -> Result<u64, Self::Error> {
///         String::from_utf8_lossy(bytes).parse()
///     }
/// }
/// assert_eq!(Decimal.deserialize(b"42"), Ok(42));
/// ```
pub trait ValueSerializer<T>: Send + Sync + 'static {
    /// The format's error.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The bytes a node holds for `value`.
    fn serialize(&self, value: &T) -> Result<Vec<u8>, Self::Error>;

    /// The value a node's bytes hold.
    fn deserialize(&self, bytes: &[u8]) -> Result<T, Self::Error>;
}

/// JSON through serde_json, compact (Curator's `JacksonModelSerializer` writes JSON too).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JsonSerializer;

impl<T: Serialize + DeserializeOwned> ValueSerializer<T> for JsonSerializer {
    type Error = serde_json::Error;

    fn serialize(&self, value: &T) -> Result<Vec<u8>, serde_json::Error> {
        serde_json::to_vec(value)
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<T, serde_json::Error> {
        serde_json::from_slice(bytes)
    }
}

/// `value` as bytes, or kind `InvalidInput` for `path`.
pub(crate) fn encode<T, S: ValueSerializer<T>>(
    serializer: &S,
    path: &str,
    value: &T,
) -> zkrs_client::Result<Vec<u8>> {
    // The format's error is the source only: reporters print each cause once.
    serializer.serialize(value).map_err(|e| {
        Error::new(ErrorKind::InvalidInput, "the value does not serialize")
            .with_path(path)
            .with_source(e)
    })
}

/// The value `bytes` hold, or kind `InvalidData` for `path`.
pub(crate) fn decode<T, S: ValueSerializer<T>>(
    serializer: &S,
    path: &str,
    bytes: &[u8],
) -> zkrs_client::Result<T> {
    serializer.deserialize(bytes).map_err(|e| {
        Error::new(
            ErrorKind::InvalidData,
            "the node's data does not deserialize",
        )
        .with_path(path)
        .with_source(e)
    })
}
