//! The gzip member Curator's `GzipCompressionProvider` writes and reads: its own header and
//! trailer around a raw DEFLATE stream (Curator does not use the JDK's `GZIPOutputStream`, to
//! avoid its finalized Deflaters, but writes the same header).

// CRC-32 (ISO 3309, gzip's, RFC 1952) from crc32fast, flate2's own: table-driven, faster
// with SIMD where the CPU has it; its check values are tested in vectors.rs.
use crc32fast::hash as crc32;
use miniz_oxide::inflate::core::{decompress as inflate, inflate_flags, DecompressorOxide};
use miniz_oxide::inflate::TINFLStatus;

use crate::error::{Error, ErrorKind, Result};

/// Curator's header (and `GZIPOutputStream`'s): magic, method 8 (deflate), no flags, no
/// modification time, no extra flags, operating system 0.
const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0];
/// CRC-32 and length, little-endian.
const TRAILER_LEN: usize = 8;
/// The shortest DEFLATE stream (an empty fixed-Huffman block).
const MIN_DEFLATE_LEN: usize = 2;
/// zlib's default level, which `Deflater.DEFAULT_COMPRESSION` (-1) selects.
const LEVEL: u8 = 6;
/// What Curator returns for empty data (its `COMPRESSED_EMPTY_BYTES`): the header, an empty
/// fixed block (`03 00`), a zero CRC and a zero length.
const COMPRESSED_EMPTY: [u8; 20] = [
    0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0,
];

// Header flags (RFC 1952, 2.3.1).
const FHCRC: u8 = 1 << 1;
const FEXTRA: u8 = 1 << 2;
const FNAME: u8 = 1 << 3;
const FCOMMENT: u8 = 1 << 4;

pub(super) fn compress(data: &[u8]) -> Vec<u8> {
    if data.is_empty() {
        return COMPRESSED_EMPTY.to_vec();
    }
    let deflated = miniz_oxide::deflate::compress_to_vec(data, LEVEL);
    let mut out = Vec::with_capacity(HEADER.len() + deflated.len() + TRAILER_LEN);
    out.extend_from_slice(&HEADER);
    out.extend_from_slice(&deflated);
    out.extend_from_slice(&crc32(data).to_le_bytes());
    // ISIZE is the length modulo 2^32 (RFC 1952); node data is far shorter.
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

fn invalid(detail: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidData, detail)
}

pub(super) fn decompress(gzipped: &[u8], max_len: usize) -> Result<Vec<u8>> {
    if gzipped.is_empty() {
        // A node created without data (a parent made on the way, say) holds nothing to
        // decompress: empty, where Curator throws an EOFException.
        return Ok(Vec::new());
    }
    let header_len = header_len(gzipped)?;
    if gzipped.len() < header_len + MIN_DEFLATE_LEN + TRAILER_LEN {
        return Err(invalid("gzip data too short"));
    }
    let body = &gzipped[header_len..gzipped.len() - TRAILER_LEN];
    let data = inflate_bounded(body, max_len)?;
    let trailer = &gzipped[gzipped.len() - TRAILER_LEN..];
    let crc = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
    let len = u32::from_le_bytes([trailer[4], trailer[5], trailer[6], trailer[7]]);
    if crc != crc32(&data) || len != data.len() as u32 {
        return Err(invalid("corrupt gzip trailer (CRC-32 or length)"));
    }
    Ok(data)
}

/// The length of the header, read as Curator reads it: the magic, method 8, then the
/// optional fields its flags announce (reserved flag bits are ignored, as Curator and the
/// JDK do).
fn header_len(gzipped: &[u8]) -> Result<usize> {
    let truncated = || invalid("truncated gzip header");
    if gzipped.len() < HEADER.len() {
        return Err(truncated());
    }
    if gzipped[..2] != HEADER[..2] {
        return Err(invalid("not in gzip format"));
    }
    if gzipped[2] != 8 {
        return Err(invalid("unsupported gzip compression method"));
    }
    let flags = gzipped[3];
    // Magic, method, flags, modification time, extra flags, operating system.
    let mut at = HEADER.len();
    if flags & FEXTRA != 0 {
        let len = gzipped.get(at..at + 2).ok_or_else(truncated)?;
        at += 2 + usize::from(u16::from_le_bytes([len[0], len[1]]));
    }
    for field in [FNAME, FCOMMENT] {
        if flags & field != 0 {
            let rest = gzipped.get(at..).ok_or_else(truncated)?;
            let end = rest.iter().position(|&b| b == 0).ok_or_else(truncated)?;
            at += end + 1;
        }
    }
    if flags & FHCRC != 0 {
        let covered = gzipped.get(..at).ok_or_else(truncated)?;
        let stored = gzipped.get(at..at + 2).ok_or_else(truncated)?;
        if u16::from_le_bytes([stored[0], stored[1]]) != crc32(covered) as u16 {
            return Err(invalid("corrupt gzip header (header CRC)"));
        }
        at += 2;
    }
    if at > gzipped.len() {
        return Err(truncated());
    }
    Ok(at)
}

/// Inflates `body`, which must be exactly one DEFLATE stream, into at most `max_len` bytes.
/// The output grows as it fills (from three times the input, Curator's first guess), never
/// past `max_len`: a bomb costs at most `max_len` bytes before it is refused.
fn inflate_bounded(body: &[u8], max_len: usize) -> Result<Vec<u8>> {
    let flags = inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
    let mut out = vec![0; body.len().saturating_mul(3).min(max_len)];
    // The decompressor's state is about 11 KB: on the heap, not the caller's stack.
    let mut state = Box::<DecompressorOxide>::default();
    let mut input = body;
    let mut out_pos = 0;
    loop {
        let (status, consumed, produced) = inflate(&mut state, input, &mut out, out_pos, flags);
        out_pos += produced;
        input = input.get(consumed..).unwrap_or_default();
        match status {
            TINFLStatus::Done => break,
            TINFLStatus::HasMoreOutput => {
                if out.len() >= max_len {
                    return Err(invalid(format!(
                        "gzip data decompresses to more than the limit of {max_len} bytes"
                    )));
                }
                let grown = out.len().saturating_mul(2).max(1024).min(max_len);
                // Exactly: `resize` alone lets the Vec double its capacity, past the limit
                // (found by tests/curator_compression.rs: 25 MB asked for a 16 MiB limit).
                out.reserve_exact(grown - out.len());
                out.resize(grown, 0);
            }
            TINFLStatus::NeedsMoreInput | TINFLStatus::FailedCannotMakeProgress => {
                return Err(invalid(
                    "truncated gzip data (the DEFLATE stream does not end)",
                ))
            }
            _ => return Err(invalid("corrupt gzip data (invalid DEFLATE stream)")),
        }
    }
    if !input.is_empty() {
        return Err(invalid(
            "expected one gzip member, without data after its DEFLATE stream",
        ));
    }
    out.truncate(out_pos);
    Ok(out)
}
