//! Retry policies, applied to the errors that are safe to retry.

use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;

use zkrs_client::Result;

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
            } => (retry < max_retries).then(|| {
                let exp = base.saturating_mul(1u32 << retry.min(20));
                // Jitter in [exp, 1.5 exp): processes retrying together spread out.
                let jitter = exp.as_millis() as u64 / 2;
                let extra = if jitter == 0 {
                    0
                } else {
                    pseudo_random() % jitter
                };
                (exp + Duration::from_millis(extra)).min(max_sleep)
            }),
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

fn pseudo_random() -> u64 {
    zkrs_client::__private::random_u64()
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
