//! Plumbing for the workspace's own crates and their tests, in the manner of serde's
//! `__private`: hidden from the docs, carrying no promise, free to change in any release.
//! Nothing here is part of the API.
//!
//! The codec holds it because it is the one crate every other crate of the workspace already
//! depends on (the client and the recipes reach it through `zkrs_client::__private`): what is
//! shared lives once, with no new edge between the crates.

/// SplitMix64's increment: 2^64 divided by the golden ratio, odd. A generator that advances
/// its state by itself (the recipes' lock-free one, with an atomic add) passes the old state
/// to [`splitmix64`] as the stream's next step.
pub const SPLITMIX64_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// One step of SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
/// generators", 2014): advances `state` by [`SPLITMIX64_GAMMA`] and returns the new state
/// mixed. The workspace's seeded streams (the simulation's, the client's seeded randomness,
/// the model's seeded passwords, the test kit's fault schedules, discovery's random picks)
/// all take this one definition. Written here, not taken from a random-number crate: a seed
/// recorded today must replay the same run after any dependency update, and such a crate
/// does not promise its streams across versions.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(SPLITMIX64_GAMMA);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_gives_the_reference_outputs() {
        // The reference implementation's (splitmix64.c, Vigna) first outputs for seed 0.
        let mut state = 0;
        assert_eq!(splitmix64(&mut state), 0xe220_a839_7b1d_cdaf);
        assert_eq!(splitmix64(&mut state), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(splitmix64(&mut state), 0x06c4_5d18_8009_454f);
        assert_eq!(state, SPLITMIX64_GAMMA.wrapping_mul(3));
    }
}
