//! Randomness without a dependency, through one seam: the host shuffle's seed, the UUIDs of
//! protected names, retry jitter, a queue consumer's skips, discovery's random picks.
//!
//! By default each draw hashes the current time with the standard library's per-process
//! random keys (a fresh `RandomState`). A simulation seeds this thread instead
//! ([`seed_thread`]): every draw then comes from one SplitMix64 stream (the workspace's one
//! definition, in the codec's `__private`), so one seed gives the same run. SASL's nonces
//! never take the seam ([`nonce_bits`]).

use std::cell::Cell;
use std::hash::{BuildHasher, Hasher};

use zkrs_codec::__private::splitmix64;

thread_local! {
    /// The seeded stream's state, when a simulation set one on this thread.
    static SEEDED: Cell<Option<u64>> = const { Cell::new(None) };
}

/// 64 random bits: the seeded stream's next draw on a seeded thread, else fresh ones.
pub(crate) fn random_seed() -> u64 {
    SEEDED.with(|s| match s.get() {
        Some(mut state) => {
            let out = splitmix64(&mut state);
            s.set(Some(state));
            out
        }
        None => nonce_bits(),
    })
}

/// Makes this thread's draws one stream from `seed` (`None`: random again).
pub(crate) fn seed_thread(seed: Option<u64>) {
    SEEDED.with(|s| s.set(seed));
}

/// 64 bits from the per-process random keys and the clock, never from a seeded stream: for
/// SASL's nonces, which must not be predictable.
pub(crate) fn nonce_bits() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seeded_thread_draws_the_same_stream_again() {
        seed_thread(Some(7));
        let a: Vec<u64> = (0..4).map(|_| random_seed()).collect();
        seed_thread(Some(7));
        let b: Vec<u64> = (0..4).map(|_| random_seed()).collect();
        assert_eq!(a, b);
        assert_ne!(a[0], a[1]);
        // The stream is SplitMix64's: its published first output for seed 0.
        seed_thread(Some(0));
        assert_eq!(random_seed(), 0xe220_a839_7b1d_cdaf);
        seed_thread(None);
    }
}
