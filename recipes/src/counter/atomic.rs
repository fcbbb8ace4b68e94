//! [`DistributedAtomicLong`] and [`DistributedAtomicInteger`]: counters changed with
//! optimistic compare-and-set on the node version, as Curator's, optionally promoted to a
//! mutex when the optimistic tries run out ([`PromotedToLock`]).

use std::time::Duration;
use tokio::time::Instant;

use zkrs_client::{Client, CreateMode, ErrorCode, Result};

use super::number::{read_number, Number};
use crate::framework::{create_parents, parent, ParentMode, RetryPolicy};
use crate::lock::InterProcessMutex;

/// What an atomic operation did, as Curator's `AtomicValue`: whether it succeeded, the value
/// before and after, and what it cost. Failure (too much contention) is a value, not an
/// error; errors are for what no retry can fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtomicValue<T> {
    /// Whether the change was made.
    pub succeeded: bool,
    /// The value the change was computed from (the value read, if it failed).
    pub pre_value: T,
    /// The value written (if it failed: the value read, unlike Curator's 0).
    pub post_value: T,
    /// Tries and time spent.
    pub stats: AtomicStats,
}

/// Tries and time an atomic operation took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AtomicStats {
    /// Optimistic tries.
    pub optimistic_tries: u32,
    /// Tries made while holding the promoted lock.
    pub promoted_lock_tries: u32,
    /// Time spent trying optimistically.
    pub optimistic_time: Duration,
    /// Time spent on the promoted lock (waiting for it included).
    pub promoted_time: Duration,
}

/// Curator's `PromotedToLock`: when the optimistic tries run out, take a mutex at
/// `lock_path` (an `InterProcessMutex`: Curator's nodes) and try again under it. The mutex
/// keeps other promoted writers out, not optimistic ones.
#[derive(Debug, Clone)]
pub struct PromotedToLock {
    /// The mutex's directory.
    pub lock_path: String,
    /// How long to wait for the mutex (`None`: as long as it takes).
    pub max_lock_time: Option<Duration>,
    /// Tries under the mutex.
    pub retry: RetryPolicy,
}

impl PromotedToLock {
    /// A mutex at `lock_path`, waited for at most `max_lock_time`, with the default retry.
    pub fn new(lock_path: &str, max_lock_time: Option<Duration>) -> PromotedToLock {
        PromotedToLock {
            lock_path: lock_path.to_string(),
            max_lock_time,
            retry: RetryPolicy::default(),
        }
    }
}

/// What one try found.
enum Try<N> {
    Done(N, N),
    /// Someone else wrote between our read and our write; what we read.
    Contended(N),
}

#[derive(Debug, Clone)]
struct Atomic {
    client: Client,
    path: String,
    retry: RetryPolicy,
    promoted: Option<PromotedToLock>,
}

impl Atomic {
    async fn read<N: Number>(&self) -> Result<(N, Option<i32>)> {
        match self.client.get_data(&self.path).await {
            Ok((data, stat)) => Ok((read_number(&self.path, &data)?, Some(stat.version))),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => Ok((N::zero(), None)),
            Err(e) => Err(e),
        }
    }

    /// Writes `value` if the node is still at `version` (`None`: still missing).
    async fn write<N: Number>(&self, value: N, version: Option<i32>) -> Result<bool> {
        let data = value.encode();
        let written = match version {
            Some(v) => self
                .client
                .set_data(&self.path, &data, Some(v))
                .await
                .map(drop),
            None => {
                create_parents(&self.client, parent(&self.path), ParentMode::Container).await?;
                self.client
                    .create(&self.path, &data, CreateMode::Persistent)
                    .await
                    .map(drop)
            }
        };
        match written {
            Ok(()) => Ok(true),
            Err(e)
                if matches!(
                    e.code(),
                    Some(ErrorCode::BadVersion | ErrorCode::NodeExists)
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    async fn try_once<N: Number>(&self, change: &impl Fn(N) -> N) -> Result<Try<N>> {
        let (pre, version) = self.read::<N>().await?;
        let post = change(pre);
        Ok(if self.write(post, version).await? {
            Try::Done(pre, post)
        } else {
            Try::Contended(pre)
        })
    }

    /// Tries under `policy` until done, the policy gives up, or an error no retry fixes.
    /// Connection trouble counts as a failed try. Returns the outcome and the tries made.
    async fn tries<N: Number>(
        &self,
        policy: &RetryPolicy,
        change: &impl Fn(N) -> N,
    ) -> Result<(Option<(N, N)>, N, u32)> {
        let start = Instant::now();
        let mut tries = 0;
        let mut last = N::zero();
        loop {
            tries += 1;
            match self.try_once(change).await {
                Ok(Try::Done(pre, post)) => return Ok((Some((pre, post)), pre, tries)),
                Ok(Try::Contended(pre)) => last = pre,
                Err(e) if e.is_retryable() => {}
                Err(e) => return Err(e),
            }
            match policy.sleep_before_retry(tries - 1, start.elapsed()) {
                Some(sleep) => tokio::time::sleep(sleep).await,
                None => return Ok((None, last, tries)),
            }
        }
    }

    /// Curator's worker: optimistic tries, then (if set) tries under the promoted mutex.
    async fn change<N: Number>(&self, change: impl Fn(N) -> N) -> Result<AtomicValue<N>> {
        let mut stats = AtomicStats::default();
        let started = Instant::now();
        let (done, last, tries) = self.tries(&self.retry, &change).await?;
        stats.optimistic_tries = tries;
        stats.optimistic_time = started.elapsed();
        let mut outcome = (done, last);
        if outcome.0.is_none() {
            if let Some(promoted) = &self.promoted {
                let started = Instant::now();
                let mutex = InterProcessMutex::internal(&self.client, &promoted.lock_path);
                let guard = match promoted.max_lock_time {
                    Some(limit) => mutex.try_acquire(limit).await?,
                    None => Some(mutex.acquire().await?),
                };
                if let Some(guard) = guard {
                    let tried = self.tries(&promoted.retry, &change).await;
                    let released = guard.release().await;
                    let (done, last, tries) = tried?;
                    released?;
                    stats.promoted_lock_tries = tries;
                    outcome = (done, last);
                }
                stats.promoted_time = started.elapsed();
            }
        }
        Ok(match outcome {
            (Some((pre, post)), _) => AtomicValue {
                succeeded: true,
                pre_value: pre,
                post_value: post,
                stats,
            },
            (None, last) => AtomicValue {
                succeeded: false,
                pre_value: last,
                post_value: last,
                stats,
            },
        })
    }

    async fn get<N: Number>(&self) -> Result<AtomicValue<N>> {
        let (value, _) = self.retry.run(|| async { self.read::<N>().await }).await?;
        Ok(AtomicValue {
            succeeded: true,
            pre_value: value,
            post_value: value,
            stats: AtomicStats::default(),
        })
    }

    async fn compare_and_set<N: Number>(&self, expected: N, new: N) -> Result<AtomicValue<N>> {
        let started = Instant::now();
        let mut tries = 0;
        let (succeeded, pre) = self
            .retry
            .run(|| {
                tries += 1;
                async {
                    let (pre, version) = self.read::<N>().await?;
                    if pre != expected {
                        return Ok((false, pre));
                    }
                    Ok((self.write(new, version).await?, pre))
                }
            })
            .await?;
        Ok(AtomicValue {
            succeeded,
            pre_value: pre,
            post_value: if succeeded { new } else { pre },
            stats: AtomicStats {
                optimistic_tries: tries,
                optimistic_time: started.elapsed(),
                ..AtomicStats::default()
            },
        })
    }

    async fn force_set<N: Number>(&self, value: N) -> Result<()> {
        self.retry
            .run(|| async {
                loop {
                    match self
                        .client
                        .set_data(&self.path, &value.encode(), None)
                        .await
                    {
                        Ok(_) => return Ok(()),
                        Err(e) if e.code() == Some(ErrorCode::NoNode) => {
                            if self.write(value, None).await? {
                                return Ok(());
                            }
                            // Created by someone else meanwhile: overwrite it.
                        }
                        Err(e) => return Err(e),
                    }
                }
            })
            .await
    }
}

macro_rules! atomic_counter {
    ($(#[$doc:meta])* $name:ident, $builder:ident, $t:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name {
            atomic: Atomic,
        }

        #[doc = concat!("Settings for a [`", stringify!($name), "`]; [`", stringify!($builder), "::build`] makes it.")]
        #[derive(Debug, Clone)]
        #[must_use = "a builder does nothing until built"]
        pub struct $builder {
            atomic: Atomic,
        }

        impl $builder {
            /// How contended or disconnected tries are retried (default
            /// [`RetryPolicy::default`]).
            pub fn retry(mut self, retry: RetryPolicy) -> $builder {
                self.atomic.retry = retry;
                self
            }

            /// When the optimistic tries run out, take a mutex and try again under it.
            pub fn promoted_to_lock(mut self, promoted: PromotedToLock) -> $builder {
                self.atomic.promoted = Some(promoted);
                self
            }

            /// The counter (nothing is sent). `InvalidInput` for a bad path or lock path.
            pub fn build(self) -> Result<$name> {
                zkrs_client::validate_path(&self.atomic.path)?;
                if let Some(promoted) = &self.atomic.promoted {
                    zkrs_client::validate_path(&promoted.lock_path)?;
                }
                Ok($name {
                    atomic: self.atomic,
                })
            }
        }

        impl $name {
            /// Settings for a counter at `path`. The node is created on the first write; a
            /// missing node reads as 0.
            pub fn builder(client: &Client, path: &str) -> $builder {
                $builder {
                    atomic: Atomic {
                        client: client.clone(),
                        path: path.to_string(),
                        retry: RetryPolicy::default(),
                        promoted: None,
                    },
                }
            }

            /// The counter's path.
            pub fn path(&self) -> &str {
                &self.atomic.path
            }

            /// The current value (0 if the node does not exist; nothing is created).
            pub async fn get(&self) -> Result<AtomicValue<$t>> {
                self.atomic.get().await
            }

            /// Adds 1.
            pub async fn increment(&self) -> Result<AtomicValue<$t>> {
                self.add(1).await
            }

            /// Subtracts 1.
            pub async fn decrement(&self) -> Result<AtomicValue<$t>> {
                self.add(-1).await
            }

            /// Adds `delta` (wrapping, as Java's arithmetic does).
            pub async fn add(&self, delta: $t) -> Result<AtomicValue<$t>> {
                self.atomic.change(move |v: $t| Number::wrapping_add(v, delta)).await
            }

            /// Subtracts `delta` (wrapping).
            pub async fn subtract(&self, delta: $t) -> Result<AtomicValue<$t>> {
                self.add(Number::wrapping_neg(delta)).await
            }

            /// Sets `new` if the value is `expected` (one read, one conditional write;
            /// retried only through connection trouble).
            pub async fn compare_and_set(&self, expected: $t, new: $t) -> Result<AtomicValue<$t>> {
                self.atomic.compare_and_set(expected, new).await
            }

            /// Sets `value` atomically: the optimistic tries (and the promoted lock, if
            /// set) decide; check `succeeded`.
            pub async fn try_set(&self, value: $t) -> Result<AtomicValue<$t>> {
                self.atomic.change(move |_: $t| value).await
            }

            /// Sets `value` whatever the node holds (creating it if needed).
            pub async fn force_set(&self, value: $t) -> Result<()> {
                self.atomic.force_set(value).await
            }
        }
    };
}

atomic_counter!(
    /// A 64-bit counter shared by every process, as Curator's `DistributedAtomicLong` (an
    /// 8-byte big-endian node): changed with an optimistic compare-and-set on the node's
    /// version, retried per its [`RetryPolicy`], and optionally promoted to a mutex.
    ///
    /// A try whose outcome is unknown (connection lost after the write was sent) is tried
    /// again, so under connection loss an increment may apply twice, as with Curator's.
    ///
    /// ```no_run
    /// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
    /// use zkrs_recipes::counter::DistributedAtomicLong;
    /// use zkrs_recipes::framework::RetryPolicy;
    /// let hits = DistributedAtomicLong::builder(&client, "/stats/hits")
    ///     .retry(RetryPolicy::default())
    ///     .build()?;
    /// let r = hits.increment().await?;
    /// if r.succeeded {
    ///     println!("{} -> {}", r.pre_value, r.post_value);
    /// }
    /// # Ok(()) }
    /// ```
    DistributedAtomicLong,
    DistributedAtomicLongBuilder,
    i64
);

atomic_counter!(
    /// A 32-bit counter shared by every process, as Curator's `DistributedAtomicInteger` (a
    /// 4-byte big-endian node); otherwise as [`DistributedAtomicLong`].
    DistributedAtomicInteger,
    DistributedAtomicIntegerBuilder,
    i32
);
