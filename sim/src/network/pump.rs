//! The network shared by the pump, the dialers and the world's handle, and the pump: the one
//! task that drives the network on the runtime's virtual time.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::Network;
use crate::violation::Violation;

/// Steps within [`PROGRESS`] of virtual time after which the network is stuck: time must
/// move, and not by microseconds (a run crawling a microsecond a step takes hours).
const STUCK_STEPS: u64 = 1_000_000;
const PROGRESS: Duration = Duration::from_millis(1);

/// The network shared by the pump, the dialer and the world's handle.
#[derive(Debug, Clone)]
pub(crate) struct SharedNetwork {
    inner: Arc<Mutex<Network>>,
    /// Woken when a client writes, closes, or dials.
    pub(crate) notify: Arc<Notify>,
    pub(crate) start: Instant,
}

impl SharedNetwork {
    pub(crate) fn new(net: Network, start: Instant) -> SharedNetwork {
        SharedNetwork {
            inner: Arc::new(Mutex::new(net)),
            notify: Arc::new(Notify::new()),
            start,
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Network> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Virtual time since the run began.
    pub(crate) fn now(&self) -> Duration {
        Instant::now().saturating_duration_since(self.start)
    }
}

/// Runs the network until the runtime stops: every step at its virtual instant. Returns
/// only if it is stuck: woken again and again without time moving (a livelock in the
/// simulated world, which virtual time would otherwise never end).
pub(crate) async fn pump(net: SharedNetwork, real_deadline: std::time::Instant) -> Violation {
    let started = std::time::Instant::now();
    // Where the current window of steps began, and its steps.
    let mut window: Option<(Duration, u64)> = None;
    loop {
        let now = net.now();
        match &mut window {
            Some((from, steps)) if now.saturating_sub(*from) < PROGRESS => {
                *steps += 1;
                if *steps >= STUCK_STEPS {
                    return Violation::Stuck {
                        steps: STUCK_STEPS,
                        at: now,
                    };
                }
            }
            _ => window = Some((now, 0)),
        }
        if std::time::Instant::now() >= real_deadline {
            let real = started.elapsed();
            return Violation::Stalled { real, at: now };
        }
        let next = net.lock().step(now);
        match next {
            Some(at) => {
                tokio::select! {
                    biased;
                    () = net.notify.notified() => {}
                    () = tokio::time::sleep_until(net.start + at) => {}
                }
            }
            None => net.notify.notified().await,
        }
    }
}
