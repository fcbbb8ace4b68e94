//! [`Backoff`]: the leader recipes' pause between rounds that failed.

use std::time::Duration;

/// The pause before another round after rounds that failed in a row for a reason no
/// reconnect fixes (no permission, say): 200 ms after the first, doubling up to 6.4 s, so
/// that a lasting error does not spin. A round that succeeds starts it over. Used by
/// [`LeaderSelector`](super::LeaderSelector) (between attempts on its lock, as Curator
/// requeues), [`MasterElection`](super::MasterElection) and
/// [`LeaderElection`](super::LeaderElection) (between creates).
#[derive(Debug, Default)]
pub(crate) struct Backoff {
    failures: u32,
}

impl Backoff {
    /// One more failed round: how long to wait before the next.
    pub(crate) fn failed(&mut self) -> Duration {
        self.failures = self.failures.saturating_add(1);
        Duration::from_millis(100u64 << self.failures.min(6))
    }

    /// A round succeeded: the next failure waits the shortest time again.
    pub(crate) fn reset(&mut self) {
        self.failures = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_up_to_a_cap_and_starts_over() {
        let mut backoff = Backoff::default();
        let waits: Vec<u64> = (0..8)
            .map(|_| backoff.failed().as_millis() as u64)
            .collect();
        assert_eq!(waits, [200, 400, 800, 1600, 3200, 6400, 6400, 6400]);
        backoff.reset();
        assert_eq!(backoff.failed(), Duration::from_millis(200));
    }
}
