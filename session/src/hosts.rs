//! Which host to try next, and how long to wait first.
//!
//! Hosts are tried in a shuffled order (so many clients do not all land on the first host),
//! one after another without delay; after a whole round fails, the client backs off
//! exponentially with jitter, up to a cap.

use std::time::Duration;

/// A small deterministic random generator (xorshift64*): the core takes its seed from the
/// driver, so tests are repeatable and no clock or OS randomness is read inside the core.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (0 is replaced: xorshift needs a non-zero state).
    pub fn new(seed: u64) -> Rng {
        Rng(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// Chooses hosts in shuffled round-robin order with back-off between rounds.
#[derive(Debug, Clone)]
pub struct HostPicker {
    order: Vec<usize>,
    cursor: usize,
    /// Where the current round started: the last host that worked (or the first). Coming
    /// back to it means every host failed once.
    round_start: usize,
    failed_rounds: u32,
    base: Duration,
    max: Duration,
}

impl HostPicker {
    /// A picker over `count` hosts.
    pub fn new(count: usize, rng: &mut Rng, base: Duration, max: Duration) -> HostPicker {
        let mut order: Vec<usize> = (0..count.max(1)).collect();
        // Fisher-Yates.
        for i in (1..order.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            order.swap(i, j);
        }
        HostPicker {
            order,
            cursor: 0,
            round_start: 0,
            failed_rounds: 0,
            base,
            max,
        }
    }

    /// The host to try first.
    pub fn current(&self) -> usize {
        self.order[self.cursor]
    }

    /// Moves to the next host after a failure or a lost connection; returns it and how long
    /// to wait before trying it: zero, unless this comes back to where the round started
    /// (every host failed since the last one that worked).
    pub fn advance(&mut self, rng: &mut Rng) -> (usize, Duration) {
        self.cursor = (self.cursor + 1) % self.order.len();
        let mut delay = Duration::ZERO;
        if self.cursor == self.round_start {
            self.failed_rounds = self.failed_rounds.saturating_add(1);
            let exp = self
                .base
                .saturating_mul(1u32 << self.failed_rounds.min(16))
                .min(self.max);
            // Jitter in [exp/2, exp]: clients that lost the same server do not return in step.
            let half = exp.as_millis() as u64 / 2;
            delay = Duration::from_millis(half + rng.below(half + 1));
        }
        (self.current(), delay)
    }

    /// A new host list, tried in `order` (every host once) from `order[start]`: a fresh
    /// round, no back-off owed.
    pub fn reorder(&mut self, order: Vec<usize>, start: usize) {
        if order.is_empty() {
            return;
        }
        self.cursor = start.min(order.len() - 1);
        self.order = order;
        self.round_start = self.cursor;
        self.failed_rounds = 0;
    }

    /// Jumps to a given host (a read-write server found while read-only).
    pub fn jump_to(&mut self, host: usize) {
        if let Some(i) = self.order.iter().position(|&h| h == host) {
            self.cursor = i;
        }
    }

    /// A connection worked (it stayed open long enough to count): the next failure starts a
    /// fresh round.
    pub fn connected(&mut self) {
        self.failed_rounds = 0;
        self.round_start = self.cursor;
    }

    /// Number of hosts.
    pub fn host_count(&self) -> usize {
        self.order.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visits_every_host_per_round_then_backs_off() {
        let mut rng = Rng::new(7);
        let ms = Duration::from_millis;
        let mut p = HostPicker::new(3, &mut rng, ms(100), ms(1000));
        let mut seen = vec![p.current()];
        for _ in 0..2 {
            let (h, d) = p.advance(&mut rng);
            assert_eq!(d, Duration::ZERO);
            seen.push(h);
        }
        seen.sort();
        assert_eq!(seen, [0, 1, 2]);
        let (_, d) = p.advance(&mut rng);
        assert!(d >= ms(100) && d <= ms(200), "{d:?}");
        for _ in 0..30 {
            let (_, d) = p.advance(&mut rng);
            assert!(d <= ms(1000));
        }
    }
}
