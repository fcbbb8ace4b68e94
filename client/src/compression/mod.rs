//! Curator's compressed data: node data gzipped as Apache Curator 5.4's default
//! `CompressionProvider` (`GzipCompressionProvider`) writes it with `.compressed()` and reads
//! it with `.decompressed()`, so Rust and Java processes can share compressed nodes.
//!
//! The client writes and reads such data with
//! [`CreateOptions::compressed`](crate::CreateOptions::compressed),
//! [`Client::set_data_compressed`](crate::Client::set_data_compressed),
//! [`Client::get_data_decompressed`](crate::Client::get_data_decompressed) and
//! [`Op::compressed`](crate::Op::compressed) (in a transaction); the functions here are for data
//! read any other way (a watched read, `multi_read`, a cache of your own).
//!
//! The format, byte for byte as Curator writes it: a 10-byte gzip header with no flags, no
//! modification time, no extra flags and operating system 0 (`1f 8b 08 00 00 00 00 00 00 00`,
//! what the JDK's `GZIPOutputStream` writes too), one raw DEFLATE stream at zlib's default
//! level (6), then the CRC-32 and the length of the data, little-endian. Empty data is
//! Curator's constant 20 bytes. The DEFLATE stream comes from miniz_oxide, not from zlib as
//! in the JDK: for short data the bytes are the same as Curator's; for longer data the two
//! encoders may choose different matches, and either side reads the other's.
//!
//! Reading accepts what Curator accepts: one gzip member, with the optional header fields
//! (extra, name, comment, header CRC) skipped and checked as Curator does, and nothing after
//! its trailer (Curator refuses trailing data, so a concatenation of members is refused here
//! too). Anything else, or a wrong CRC-32 or length, is an error of kind
//! [`ErrorKind::InvalidData`](crate::ErrorKind::InvalidData). One deliberate difference:
//! empty data (a node created without data, such as a parent made on the way) reads as
//! empty, where Curator throws an `EOFException` (and its compressed caches then leave out
//! the node and everything under it).
//!
//! Decompression is bounded: a node whose data would decompress to more than the limit (a
//! "gzip bomb": a megabyte of DEFLATE can stand for a gigabyte) fails with kind
//! `InvalidData` once the output reaches the limit, having allocated at most the limit.
//! [`decompress`] uses [`DEFAULT_MAX_DECOMPRESSED_LEN`]; [`decompress_with_limit`] takes
//! another.
//!
//! ```
//! use zkrs_client::compression::{compress, decompress};
//! let gzipped = compress(b"hello, world");
//! assert_eq!(&gzipped[..4], [0x1f, 0x8b, 0x08, 0x00]);
//! assert_eq!(decompress(&gzipped)?, b"hello, world");
//! // Not gzip: an error to match by kind.
//! let e = decompress(b"hello").unwrap_err();
//! assert_eq!(e.kind(), zkrs_client::ErrorKind::InvalidData);
//! # Ok::<(), zkrs_client::Error>(())
//! ```

mod gzip;
#[cfg(test)]
mod vectors;

use crate::error::Result;

/// The most [`decompress`] (and every decompressing read of the client and the recipes) will
/// produce from one node's data: 16 MiB, sixteen times ZooKeeper's default packet limit
/// (`jute.maxbuffer`, about 1 MiB, which bounds the compressed data). Text such as JSON
/// compresses about 5 to 10 times, so real data fits; a gzip bomb is stopped at this size.
pub const DEFAULT_MAX_DECOMPRESSED_LEN: usize = 16 * 1024 * 1024;

/// `data` gzipped as Curator's `GzipCompressionProvider.compress` does (see the
/// [module](self) for the exact format).
pub fn compress(data: &[u8]) -> Vec<u8> {
    gzip::compress(data)
}

/// `gzipped` decompressed as Curator's `GzipCompressionProvider.decompress` does, producing at
/// most [`DEFAULT_MAX_DECOMPRESSED_LEN`] bytes. Fails with kind
/// [`ErrorKind::InvalidData`](crate::ErrorKind::InvalidData) if `gzipped` is not one valid gzip
/// member or would decompress to more than the limit.
pub fn decompress(gzipped: &[u8]) -> Result<Vec<u8>> {
    gzip::decompress(gzipped, DEFAULT_MAX_DECOMPRESSED_LEN)
}

/// [`decompress`] with a limit of `max_len` bytes of output instead of the default: no more
/// than `max_len` bytes are ever allocated for the output.
pub fn decompress_with_limit(gzipped: &[u8], max_len: usize) -> Result<Vec<u8>> {
    gzip::decompress(gzipped, max_len)
}
