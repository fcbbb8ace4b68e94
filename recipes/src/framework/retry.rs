//! Retrying: the one back-off every retry loop of the recipes sleeps with ([`Backoff`]),
//! and the public [`RetryPolicy`] for an application's own operations, both over the same
//! capped, jittered exponential ([`exponential_sleep`]).
//!
//! A retryable error is not always a lost connection: `ThrottledOp` and `RequestTimeout`
//! come over a connection that stays up, from a server that says it is overloaded. Waiting
//! for the connection alone would then send the request again at once, thousands of times a
//! second; every retry sleeps first, longer after each failure.

use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;

use zkrs_client::{Client, Error, ErrorKind, Result};

use super::connection::wait_connected;

/// The first sleep of a recipe's retry loop: short, as most retries follow a reconnect that
/// already took its time.
const FIRST_SLEEP: Duration = Duration::from_millis(10);

/// The longest sleep of a recipe's retry loop: about one request a second to an overloaded
/// server, and a recipe that notices within a second when it is served again.
const MAX_SLEEP: Duration = Duration::from_secs(1);

/// The sleep before retry `retry` (0-based): `base * 2^retry`, plus up to half of it again at
/// random (processes that failed together do not retry together), at most `max_sleep`. The
/// draws go through the client's one randomness seam, which a simulation seeds.
pub(crate) fn exponential_sleep(base: Duration, max_sleep: Duration, retry: u32) -> Duration {
    let exp = base.saturating_mul(1u32 << retry.min(20));
    let jitter = exp.as_millis() as u64 / 2;
    let extra = if jitter == 0 {
        0
    } else {
        zkrs_client::__private::random_u64() % jitter
    };
    exp.saturating_add(Duration::from_millis(extra))
        .min(max_sleep)
}

/// The pause of one retrying operation inside a recipe: after each retryable error, wait
/// until the client is connected, then sleep 10 ms, 20 ms, 40 ms ... up to 1 s (jittered),
/// never past the caller's deadline. Every retry loop of the recipes goes through it; a loop
/// that lives on (a recipe's task) [`reset`](Backoff::reset)s it after a success.
#[derive(Debug, Default)]
pub(crate) struct Backoff {
    retries: u32,
    deadline: Option<Instant>,
}

impl Backoff {
    /// A back-off with no deadline: it waits as long as the client lives.
    pub(crate) fn new() -> Backoff {
        Backoff::default()
    }

    /// A back-off that never waits past `deadline` (none: no bound).
    pub(crate) fn until(deadline: Option<Instant>) -> Backoff {
        Backoff {
            retries: 0,
            deadline,
        }
    }

    /// The next sleep (without sleeping).
    pub(crate) fn next_sleep(&mut self) -> Duration {
        let sleep = exponential_sleep(FIRST_SLEEP, MAX_SLEEP, self.retries);
        self.retries = self.retries.saturating_add(1);
        sleep
    }

    /// Sleeps the next sleep, for a loop that waits for the connection its own way (a
    /// recipe's task applies the state changes on the way: `framework::recover`); never past
    /// the deadline.
    pub(crate) async fn sleep(&mut self) {
        let sleep = self.next_sleep();
        match self.deadline {
            Some(at) => tokio::time::sleep_until(at.min(Instant::now() + sleep)).await,
            None => tokio::time::sleep(sleep).await,
        }
    }

    /// A success: the next failure sleeps the shortest time again.
    pub(crate) fn reset(&mut self) {
        self.retries = 0;
    }

    /// Waits before the next try: until the client is connected, then the next sleep. Fails
    /// if the client is closed, or with kind [`ErrorKind::Timeout`] when the deadline comes
    /// first ([`Backoff::is_deadline`] tells it apart).
    pub(crate) async fn pause(&mut self, client: &Client) -> Result<()> {
        self.pause_after(wait_connected(client)).await
    }

    /// [`pause`](Backoff::pause), with `connected` for the wait for the connection.
    async fn pause_after<T>(&mut self, connected: impl Future<Output = Result<T>>) -> Result<()> {
        let sleep = self.next_sleep();
        let wait = async {
            connected.await?;
            tokio::time::sleep(sleep).await;
            Ok(())
        };
        match self.deadline {
            None => wait.await,
            Some(at) => match tokio::time::timeout_at(at, wait).await {
                Ok(waited) => waited,
                Err(_) => Err(Error::new(
                    ErrorKind::Timeout,
                    "the deadline passed while retrying",
                )),
            },
        }
    }

    /// The deadline it never waits past.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Whether the deadline has passed: a [`pause`](Backoff::pause) that failed with kind
    /// `Timeout` failed for it.
    pub(crate) fn is_deadline(&self) -> bool {
        self.deadline.is_some_and(|at| Instant::now() >= at)
    }
}

/// How often, and how long apart, an operation is tried again after a retryable error
/// (connection loss, operation timeout, session moved: [`zkrs_client::Error::is_retryable`]).
///
/// ```
/// use std::time::Duration;
/// use zkrs_recipes::framework::RetryPolicy;
/// let policy = RetryPolicy::exponential(Duration::from_millis(100), Duration::from_secs(5), 10);
/// assert_eq!(policy.sleep_before_retry(0, Duration::ZERO).map(|d| d >= Duration::from_millis(100)), Some(true));
/// assert_eq!(policy.sleep_before_retry(10, Duration::ZERO), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RetryPolicy {
    /// Sleeps `base * 2^n` (with jitter, at most `max_sleep`) before retry `n`, at most
    /// `max_retries` times (Curator's `ExponentialBackoffRetry`).
    ExponentialBackoff {
        /// First sleep.
        base: Duration,
        /// Cap on one sleep.
        max_sleep: Duration,
        /// Number of retries.
        max_retries: u32,
    },
    /// `n` retries, `sleep` apart (`RetryNTimes`).
    NTimes {
        /// Number of retries.
        n: u32,
        /// Sleep between tries.
        sleep: Duration,
    },
    /// Retries until `max_elapsed` has passed since the first try (`RetryUntilElapsed`).
    UntilElapsed {
        /// Total time allowed.
        max_elapsed: Duration,
        /// Sleep between tries.
        sleep: Duration,
    },
    /// Retries forever (`RetryForever`).
    Forever {
        /// Sleep between tries.
        sleep: Duration,
    },
    /// Never retries.
    Never,
}

impl Default for RetryPolicy {
    /// Exponential back-off from 100 ms, capped at 5 s, 10 retries.
    fn default() -> Self {
        RetryPolicy::exponential(Duration::from_millis(100), Duration::from_secs(5), 10)
    }
}

impl RetryPolicy {
    /// [`RetryPolicy::ExponentialBackoff`].
    pub fn exponential(base: Duration, max_sleep: Duration, max_retries: u32) -> RetryPolicy {
        RetryPolicy::ExponentialBackoff {
            base,
            max_sleep,
            max_retries,
        }
    }

    /// How long to sleep before retry number `retry` (0-based), `elapsed` after the first
    /// try; `None` when no retry is left.
    pub fn sleep_before_retry(&self, retry: u32, elapsed: Duration) -> Option<Duration> {
        match *self {
            RetryPolicy::ExponentialBackoff {
                base,
                max_sleep,
                max_retries,
            } => (retry < max_retries).then(|| exponential_sleep(base, max_sleep, retry)),
            RetryPolicy::NTimes { n, sleep } => (retry < n).then_some(sleep),
            RetryPolicy::UntilElapsed { max_elapsed, sleep } => {
                (elapsed + sleep < max_elapsed).then_some(sleep)
            }
            RetryPolicy::Forever { sleep } => Some(sleep),
            RetryPolicy::Never => None,
        }
    }

    /// Runs `op` until it succeeds, fails with an error that is not retryable, or the policy
    /// gives up (then the last error is returned).
    pub async fn run<T, F, Fut>(&self, mut op: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let start = Instant::now();
        let mut retry = 0;
        loop {
            match op().await {
                Ok(v) => return Ok(v),
                Err(e) if e.is_retryable() => match self.sleep_before_retry(retry, start.elapsed())
                {
                    Some(sleep) => {
                        retry += 1;
                        tokio::time::sleep(sleep).await;
                    }
                    None => return Err(e),
                },
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use zkrs_client::Error;

    #[test]
    fn policies_stop_when_they_should() {
        let ms = Duration::from_millis;
        let p = RetryPolicy::NTimes { n: 2, sleep: ms(5) };
        assert_eq!(p.sleep_before_retry(1, ms(0)), Some(ms(5)));
        assert_eq!(p.sleep_before_retry(2, ms(0)), None);
        let p = RetryPolicy::UntilElapsed {
            max_elapsed: ms(100),
            sleep: ms(10),
        };
        assert!(p.sleep_before_retry(50, ms(50)).is_some());
        assert!(p.sleep_before_retry(0, ms(95)).is_none());
        let p = RetryPolicy::exponential(ms(10), ms(50), 5);
        for r in 0..5 {
            let s = p.sleep_before_retry(r, ms(0)).unwrap();
            assert!(s >= ms(10).min(ms(50)) && s <= ms(50), "{s:?}");
        }
        assert_eq!(RetryPolicy::Never.sleep_before_retry(0, ms(0)), None);
    }

    #[test]
    fn the_backoff_doubles_with_jitter_up_to_its_cap_and_starts_over() {
        let ms = Duration::from_millis;
        let mut backoff = Backoff::new();
        for retry in 0..12u32 {
            let exp = FIRST_SLEEP.saturating_mul(1 << retry).min(MAX_SLEEP);
            let sleep = backoff.next_sleep();
            assert!(
                sleep >= exp && sleep <= (exp + exp / 2).min(MAX_SLEEP),
                "{sleep:?}"
            );
        }
        assert_eq!(backoff.next_sleep(), MAX_SLEEP);
        backoff.reset();
        assert!(backoff.next_sleep() < ms(15));
    }

    #[tokio::test(start_paused = true)]
    async fn a_pause_sleeps_after_the_connection_and_never_past_the_deadline() {
        let ms = Duration::from_millis;
        let connected = || async { Ok(()) };
        let start = Instant::now();
        let mut backoff = Backoff::until(Some(start + ms(100)));
        backoff.pause_after(connected()).await.unwrap();
        let first = start.elapsed();
        assert!(first >= ms(10) && first < ms(15), "{first:?}");
        // 20, 40, 80 ms...: the deadline cuts one short, the third or the fourth.
        let mut pauses = 1;
        let e = loop {
            match backoff.pause_after(connected()).await {
                Ok(()) => pauses += 1,
                Err(e) => break e,
            }
        };
        assert!((2..=3).contains(&pauses), "{pauses}");
        assert_eq!(e.kind(), ErrorKind::Timeout);
        assert!(backoff.is_deadline());
        assert_eq!(start.elapsed(), ms(100));
        // No connection in sight: the deadline ends the wait for it too.
        let start = Instant::now();
        let mut backoff = Backoff::until(Some(start + ms(30)));
        let never = std::future::pending::<Result<()>>();
        let e = backoff.pause_after(never).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Timeout);
        assert_eq!(start.elapsed(), ms(30));
        // A closed client fails the pause at once.
        let closed = async { Err::<(), _>(Error::new(ErrorKind::Closed, "closed")) };
        let e = Backoff::new().pause_after(closed).await.unwrap_err();
        assert!(e.is_closed());
    }

    #[tokio::test(start_paused = true)]
    async fn run_retries_only_retryable_errors() {
        use zkrs_client::ErrorKind;
        let calls = AtomicU32::new(0);
        let p = RetryPolicy::NTimes {
            n: 3,
            sleep: Duration::from_millis(1),
        };
        let r: Result<()> = p
            .run(|| async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err(Error::new(ErrorKind::ConnectionLoss, ""))
            })
            .await;
        assert!(r.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 4);
        calls.store(0, Ordering::SeqCst);
        let r: Result<()> = p
            .run(|| async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err(Error::from(zkrs_client::ErrorCode::NoNode))
            })
            .await;
        assert!(r.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
