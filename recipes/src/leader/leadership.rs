//! The one vocabulary of the leader recipes: [`Leadership`] (am I leader, wait for it, its
//! events, close) and [`LeadershipEvent`]; and what they share underneath: the leadership
//! flag with its waiters and listeners. (Their shared line steps are in the crate's
//! `line/`, their back-off in `framework/retry.rs`.)

use crate::error::ErrorExt;
use std::future::Future;
use std::time::Duration;

use crate::framework::Listeners;
use tokio::sync::watch;
use zkrs_client::{Current, Error, EventStream, Lagged, Result};

/// A leadership transition of one participant, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LeadershipEvent {
    /// This participant leads from now on.
    Gained,
    /// This participant no longer leads.
    Lost,
    /// The reader fell behind and `missed` transitions were dropped: read
    /// [`Leadership::is_leader`]. (The leader recipes' streams are unbounded, since
    /// transitions come at the pace of elections; a stream of your own may not be.)
    Lagged {
        /// How many were dropped.
        missed: u64,
    },
}

impl From<Lagged> for LeadershipEvent {
    fn from(lagged: Lagged) -> Self {
        LeadershipEvent::Lagged {
            missed: lagged.missed,
        }
    }
}

/// What every leader recipe answers, in the same words: [`LeaderLatch`](super::LeaderLatch),
/// [`LeaderSelector`](super::LeaderSelector), [`LeaderElection`](super::LeaderElection) and
/// [`MasterElection`](super::MasterElection). Code that only needs "am I leader" can take any
/// of them.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::leader::{Leadership, LeaderLatch, MasterElection};
///
/// async fn lead_once(candidate: impl Leadership) -> zkrs_client::Result<()> {
///     candidate.await_leadership().await?;
///     println!("leading: {}", candidate.is_leader());
///     candidate.close().await
/// }
/// lead_once(LeaderLatch::builder(&client, "/election/a").id("me").start()?).await?;
/// lead_once(MasterElection::builder(&client, "/election/b/master").id("me").start()?).await?;
/// # Ok(()) }
/// ```
pub trait Leadership {
    /// What [`events`](Leadership::events) tells.
    type Event;

    /// Whether this participant leads now.
    fn is_leader(&self) -> bool;

    /// The leadership value, to read or wait on (coalesces quick changes; the events see
    /// every one).
    fn leadership(&self) -> Current<bool>;

    /// Waits until this participant leads. Fails if the recipe stopped for good (an error no
    /// retry can fix: a bad path, `NoAuth`) or was stopped.
    fn await_leadership(&self) -> impl Future<Output = Result<()>> + Send;

    /// Waits at most `timeout` for leadership: `Ok(true)` once leading, `Ok(false)` if the
    /// time ran out, an error as [`await_leadership`](Leadership::await_leadership) says.
    fn await_leadership_timeout(
        &self,
        timeout: Duration,
    ) -> impl Future<Output = Result<bool>> + Send {
        let wait = self.await_leadership();
        async move {
            match tokio::time::timeout(timeout, wait).await {
                Ok(Ok(())) => Ok(true),
                Ok(Err(e)) => Err(e),
                Err(_) => Ok(false),
            }
        }
    }

    /// The recipe's events from now on (leadership transitions; [`LeaderElection`]'s are
    /// its state machine's).
    ///
    /// [`LeaderElection`]: super::LeaderElection
    fn events(&self) -> EventStream<Self::Event>;

    /// Leaves the election for good: leadership ends, the participant's node is deleted
    /// (retrying through connection loss; in the background if this future is dropped).
    fn close(self) -> impl Future<Output = Result<()>> + Send
    where
        Self: Sized;
}

/// The [`Leadership`] impl of a recipe whose inherent methods have the trait's names and
/// whose `shared.flag` is its [`LeaderFlag`]: the same five lines for each of the four.
macro_rules! leadership_by_inherent_methods {
    ($recipe:ty, $event:ty) => {
        impl $crate::leader::Leadership for $recipe {
            type Event = $event;

            fn is_leader(&self) -> bool {
                <$recipe>::is_leader(self)
            }

            fn leadership(&self) -> zkrs_client::Current<bool> {
                <$recipe>::leadership(self)
            }

            fn await_leadership(
                &self,
            ) -> impl std::future::Future<Output = zkrs_client::Result<()>> + Send {
                self.shared.flag.wait()
            }

            fn events(&self) -> zkrs_client::EventStream<$event> {
                <$recipe>::events(self)
            }

            fn close(self) -> impl std::future::Future<Output = zkrs_client::Result<()>> + Send {
                <$recipe>::close(self)
            }
        }
    };
}
pub(crate) use leadership_by_inherent_methods;

/// Whether a participant leads, told to its waiters and listeners; and, once the recipe
/// has stopped for good, why.
#[derive(Debug)]
pub(crate) struct LeaderFlag {
    leads: watch::Sender<bool>,
    listeners: Listeners<LeadershipEvent>,
    ended: watch::Sender<Option<Error>>,
    /// When the current term began, for the metrics.
    term_began: std::sync::Mutex<Option<tokio::time::Instant>>,
}

impl Drop for LeaderFlag {
    fn drop(&mut self) {
        // A recipe dropped while leading: its term ends here for the metrics.
        let began = self.term_began.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(since) = began.take() {
            crate::metrics::count::term_ended(since.elapsed());
        }
    }
}

impl LeaderFlag {
    pub(crate) fn new() -> LeaderFlag {
        LeaderFlag {
            leads: watch::channel(false).0,
            listeners: Listeners::unbounded(),
            ended: watch::channel(None).0,
            term_began: std::sync::Mutex::new(None),
        }
    }

    pub(crate) fn get(&self) -> bool {
        *self.leads.borrow()
    }

    /// Sets the flag; a change is told to listeners if `tell`. Whether it changed.
    pub(crate) fn set(&self, leads: bool, tell: bool) -> bool {
        let changed = self.leads.send_if_modified(|current| {
            let changed = *current != leads;
            *current = leads;
            if changed {
                // Counted before the waiters are woken: one that reads the metrics once it
                // leads sees its term.
                let mut began = self.term_began.lock().unwrap_or_else(|e| e.into_inner());
                match (leads, began.take()) {
                    (true, _) => {
                        *began = Some(tokio::time::Instant::now());
                        crate::metrics::count::term_began();
                    }
                    (false, Some(since)) => crate::metrics::count::term_ended(since.elapsed()),
                    (false, None) => {}
                }
            }
            changed
        });
        if changed && tell {
            self.listeners.send(if leads {
                LeadershipEvent::Gained
            } else {
                LeadershipEvent::Lost
            });
        }
        changed
    }

    pub(crate) fn current(&self) -> Current<bool> {
        zkrs_client::__private::current_from_watch(self.leads.subscribe())
    }

    pub(crate) fn events(&self) -> EventStream<LeadershipEvent> {
        self.listeners.subscribe()
    }

    /// The recipe stopped for good, because of `why`: waiters get it.
    pub(crate) fn end(&self, why: Error) {
        self.ended.send_if_modified(|ended| {
            let first = ended.is_none();
            if first {
                *ended = Some(why);
            }
            first
        });
    }

    /// Why the recipe stopped for good, if it has.
    pub(crate) fn ended(&self) -> Option<Error> {
        self.ended.borrow().clone()
    }

    /// Stopped by its owner: leadership ends (told if `tell`), waiters fail with `closed`,
    /// the event streams end.
    pub(crate) fn close(&self, tell: bool) {
        self.set(false, tell);
        self.end(Error::closed());
        self.listeners.close();
    }

    /// Started again after a stop (the recipes that can be): waiters wait again.
    pub(crate) fn reopen(&self) {
        self.ended.send_replace(None);
    }

    pub(crate) fn wait(&self) -> impl Future<Output = Result<()>> + Send + 'static {
        let mut leads = self.leads.subscribe();
        let mut ended = self.ended.subscribe();
        async move {
            tokio::select! {
                biased;
                Ok(_) = leads.wait_for(|leads| *leads) => Ok(()),
                ended = ended.wait_for(Option::is_some) => Err(match ended {
                    Ok(why) => why.clone().unwrap_or_else(Error::closed),
                    Err(_) => Error::closed(),
                }),
            }
        }
    }
}
