//! Randomness without a dependency: seeds for the host shuffle and SASL nonces.

/// 64 random bits from the standard library's per-process random keys and the clock (a
/// fresh `RandomState` each call): the host shuffle's seed, SASL's client nonce.
pub(crate) fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}
