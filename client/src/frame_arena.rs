//! Where request frames are encoded: cut from a buffer the caller's thread keeps, instead of
//! one allocation per request.
//!
//! A frame is encoded at the end of the thread's arena and split off it: the frame and the
//! arena then share one allocation (`bytes`' shared buffer). The driver copies the frame into
//! its connection's write buffer and drops it; once every frame cut from the arena is gone,
//! `reserve` takes the whole buffer back in place. So a steady stream of requests allocates
//! nothing, and a burst allocates one chunk per [`CHUNK`] bytes of frames still held (by the
//! command channel, or a queue waiting for a connection). A frame larger than [`LARGEST`]
//! gets a buffer of its own: it would hold a chunk alone anyway.
//!
//! Per thread, not per client: a request is encoded in its caller's task, on whichever thread
//! runs it, and a thread-local arena needs no lock.

use std::cell::RefCell;

use bytes::BytesMut;

/// The arena's allocation: many small frames (a getData is about 40 bytes plus its path).
const CHUNK: usize = 64 * 1024;
/// Frames expected to be larger than this are encoded into a buffer of their own.
const LARGEST: usize = 4 * 1024;

thread_local! {
    static ARENA: RefCell<BytesMut> = RefCell::new(BytesMut::new());
}

/// A frame of about `size_hint` bytes, written by `encode`.
pub(crate) fn encode_frame(size_hint: usize, encode: impl FnOnce(&mut BytesMut)) -> BytesMut {
    if size_hint > LARGEST {
        let mut frame = BytesMut::with_capacity(size_hint);
        encode(&mut frame);
        return frame;
    }
    ARENA.with(|arena| {
        let mut arena = arena.borrow_mut();
        if arena.capacity() < size_hint {
            // In place when no frame cut from the chunk is alive any more; a new chunk if not.
            arena.reserve(CHUNK);
        }
        encode(&mut arena);
        arena.split()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_cut_from_one_chunk_and_the_chunk_comes_back() {
        let first = encode_frame(8, |b| b.extend_from_slice(b"12345678"));
        let second = encode_frame(8, |b| b.extend_from_slice(b"abcdefgh"));
        assert_eq!(
            (&first[..], &second[..]),
            (&b"12345678"[..], &b"abcdefgh"[..])
        );
        // Consecutive in one allocation.
        assert_eq!(first.as_ptr().wrapping_add(8), second.as_ptr());
        let start = first.as_ptr();
        drop((first, second));
        // Use up the chunk: the arena is alone in it now, so it starts over at its beginning.
        let mut frames = Vec::new();
        let mut reused = false;
        for _ in 0..(CHUNK / 64 + 2) {
            let frame = encode_frame(64, |b| b.extend_from_slice(&[7; 64]));
            reused |= frame.as_ptr() == start;
            drop(frame);
            frames.push(());
        }
        assert!(reused, "the chunk was taken back in place");
    }

    #[test]
    fn a_large_frame_has_its_own_buffer() {
        let frame = encode_frame(LARGEST + 1, |b| b.extend_from_slice(&[1; LARGEST + 1]));
        assert_eq!(frame.len(), LARGEST + 1);
        let small = encode_frame(4, |b| b.extend_from_slice(b"abcd"));
        assert_eq!(&small[..], b"abcd");
    }
}
