//! [`Timer`]: the core's next deadline as one tokio timer, and the turn the timers get under
//! a socket that is always readable.

use std::pin::Pin;
use std::time::{Duration, Instant};

/// Reads after which the driver looks at the core's deadline before reading again (see
/// `Timer::reads_in_a_row`). A read takes up to a frame, so this is megabytes between looks
/// at worst, and a look costs one clock read.
pub(super) const READS_BEFORE_TIMERS: u32 = 64;

pub(super) struct Timer {
    /// One timer for the whole life of the driver, armed at `armed` (if any). It is moved
    /// earlier when the core's deadline is earlier, and left alone when the deadline moved
    /// later (as it does after every send and receive): it then fires early, which is
    /// harmless, and is re-armed at the real deadline.
    pub(super) sleep: Pin<Box<tokio::time::Sleep>>,
    armed: Option<Instant>,
    /// Reads in a row since the core's timers last had their turn: bounded by
    /// [`READS_BEFORE_TIMERS`], so that a socket that is always readable cannot keep the
    /// timers (the read timeout above all) from running.
    reads_in_a_row: u32,
}

impl Timer {
    pub(super) fn new() -> Timer {
        Timer {
            sleep: Box::pin(tokio::time::sleep(Duration::from_secs(3600))),
            armed: None,
            reads_in_a_row: 0,
        }
    }

    /// Moves the timer earlier when the core's `deadline` is earlier than it is armed for.
    pub(super) fn arm(&mut self, deadline: Option<Instant>) {
        if let Some(deadline) = deadline {
            if self.armed.is_none_or(|armed| deadline < armed) {
                self.sleep.as_mut().reset(deadline.into());
                self.armed = Some(deadline);
            }
        }
    }

    pub(super) fn is_armed(&self) -> bool {
        self.armed.is_some()
    }

    /// The timer went off: the core's timers have their turn now.
    pub(super) fn fired(&mut self) {
        self.armed = None;
        self.reads_in_a_row = 0;
    }

    pub(super) fn count_read(&mut self) {
        self.reads_in_a_row += 1;
    }

    /// Whether the timers' turn has come after [`READS_BEFORE_TIMERS`] reads in a row (the
    /// driver's select serves the socket first: under a stream that never pauses, a server
    /// streaming notifications would keep a call waiting past its read timeout).
    pub(super) fn timers_turn(&mut self) -> bool {
        if self.reads_in_a_row < READS_BEFORE_TIMERS {
            return false;
        }
        self.reads_in_a_row = 0;
        true
    }
}
