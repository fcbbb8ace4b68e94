//! The client's clocks: one seam, so a simulation can run the library on virtual time.
//!
//! Monotonic time is tokio's (`tokio::time::Instant`), which is the system's monotonic clock,
//! except on a runtime whose clock a test paused (tokio's `test-util`): then it is that
//! runtime's virtual time, the same time its timers fire on. Using it for every deadline and
//! every `now` handed to the session core keeps the core's timers and the driver's sleeps on
//! one clock, whichever it is. Without `test-util` it costs the same as
//! `std::time::Instant::now()`.
//!
//! Wall-clock time (node names of delay queues, discovery's registration time) is the
//! system's, unless a simulation set a virtual epoch on this thread
//! ([`set_thread_wall_clock`]); then it advances with the monotonic clock above.

use std::cell::Cell;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The monotonic time now (see the module's documentation).
pub(crate) fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

thread_local! {
    /// A simulated wall clock: (monotonic origin, milliseconds since the Unix epoch then).
    static WALL_CLOCK: Cell<Option<(Instant, u64)>> = const { Cell::new(None) };
}

/// Milliseconds since the Unix epoch, now: the system clock, or this thread's simulated one.
pub(crate) fn unix_time_ms() -> u64 {
    match WALL_CLOCK.with(Cell::get) {
        Some((origin, epoch_ms)) => {
            epoch_ms + now().saturating_duration_since(origin).as_millis() as u64
        }
        None => SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0),
    }
}

/// Makes this thread's wall clock read `epoch_ms` now and advance with [`now`] (a
/// simulation's virtual time); `None` puts the system clock back.
pub(crate) fn set_thread_wall_clock(epoch_ms: Option<u64>) {
    WALL_CLOCK.with(|c| c.set(epoch_ms.map(|ms| (now(), ms))));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn a_paused_runtime_moves_both_clocks_together() {
        set_thread_wall_clock(Some(1_000_000));
        let start = now();
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(now() - start, Duration::from_secs(5));
        assert_eq!(unix_time_ms(), 1_005_000);
        set_thread_wall_clock(None);
        assert!(unix_time_ms() > 1_600_000_000_000);
    }
}
