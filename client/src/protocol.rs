//! The protocol between the client's handles and its driver task: the commands handles
//! send, where answers and watch events go, and the state both sides share. Its own module so
//! that neither side imports the other.

use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};
use zkrs_codec::Secret;

use crate::error::Error;
use crate::event_stream::EventSender;
use crate::in_flight::Place;
use crate::reply_slot::{ReplySlots, SlotReceiver, SlotSender};
use crate::session::{HostChange, Reply, Request, StateChange, WatcherGroup, WatcherId};
use crate::watched_event::{PersistentWatchItem, WatchedEvent};

/// What a request's caller gets: the reply, or why there is none.
pub(crate) type Answer = Result<Reply, Error>;

/// Where a request's answer goes, with the place in flight it holds until then (see
/// `InFlight`): freed with the slot, when the answer is delivered or the request fails.
#[derive(Debug)]
pub(crate) struct ReplyTx {
    tx: SlotSender<Answer>,
    _place: Option<Place>,
    /// Its number in a simulation's history (`history.rs`), when one is recorded.
    pub(crate) recorded: Option<u64>,
}

impl ReplyTx {
    /// A slot of `slots` and the receiver of its answer (`None` if the driver stopped without
    /// one). `place`: the place in flight it holds (`None` for what is not bounded: closing,
    /// adding an identity, no bound set).
    pub(crate) fn new(
        slots: &ReplySlots<Answer>,
        place: Option<Place>,
    ) -> (ReplyTx, SlotReceiver<Answer>) {
        let (tx, rx) = slots.take();
        (
            ReplyTx {
                tx,
                _place: place,
                recorded: None,
            },
            rx,
        )
    }

    /// Delivers the answer (nobody may be waiting any more) and frees the place.
    pub(crate) fn send(self, result: Answer) {
        self.tx.send(result);
    }
}

/// Where a watcher's events go. Which events a watcher gets, and when it is done, is the
/// session core's to say (`zkrs_session::Session::poll_event`): the driver only routes.
pub(crate) enum WatchSink {
    /// A one-shot watch: the first event ends it.
    Once(oneshot::Sender<WatchedEvent>),
    /// A persistent watch: every event, until the receiver is dropped.
    Stream(EventSender<PersistentWatchItem>),
    /// A one-shot watch left through a [`crate::Watcher`]: the first event ends it and goes
    /// into the watcher's shared stream (the core tells each notification to a group once).
    Group(mpsc::UnboundedSender<WatchedEvent>),
}

impl WatchSink {
    /// Whether nobody waits for a one-shot watch's event any more (a stream is never
    /// abandoned: dropping it forgets it at once).
    pub(crate) fn is_abandoned(&self) -> bool {
        match self {
            WatchSink::Once(tx) => tx.is_closed(),
            WatchSink::Group(tx) => tx.is_closed(),
            WatchSink::Stream(_) => false,
        }
    }
}

/// What client handles ask of the driver.
pub(crate) enum Command {
    /// Send a request; `sink` receives the events of the watch it may leave.
    Request {
        request: Request<ReplyTx>,
        sink: Option<(WatcherId, WatchSink)>,
        /// The session it must go out on, if bound to one
        /// (`Session::submit_in_session`).
        session: Option<i64>,
    },
    /// Add an identity to the session.
    AddAuth {
        scheme: String,
        auth: Secret,
        reply: ReplyTx,
    },
    /// A watch receiver was dropped.
    ForgetWatcher(WatcherId),
    /// A [`crate::WatcherEvents`] stream was dropped: forget every watch left through it.
    ForgetGroup(WatcherGroup),
    /// Close the session.
    Close(Option<ReplyTx>),
    /// Stop without closing the session; the sender is dropped once the connection is.
    Detach(oneshot::Sender<()>),
    /// A new host list; the answer says whether the client moves.
    UpdateHosts {
        hosts: Vec<(String, u16)>,
        /// Whether ZOOKEEPER-1355's draw may move a client whose host is kept.
        change: HostChange,
        reply: oneshot::Sender<bool>,
    },
    /// How many one-shot watchers the session core holds (live or abandoned and not yet
    /// swept), for a simulation's check (`__private::one_shot_watches`).
    CountOneShotWatches(oneshot::Sender<usize>),
}

/// State shared between the driver and the handles: the current state and the subscribers.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) current: StateChange,
    /// The current session's password (empty when there is no session).
    pub(crate) password: Secret,
    pub(crate) negotiated_timeout: Duration,
    /// The core's `Session::last_heard`, as of the driver's last read or state change.
    pub(crate) last_heard: Option<Instant>,
    pub(crate) subscribers: crate::listeners::Listeners<StateChange>,
    /// Why no session was made yet, for the error of a connect that gave up.
    pub(crate) diagnosis: crate::connect_diagnosis::ConnectDiagnosis,
    /// The hosts the client connects to now (`name:port`), as the driver has them.
    pub(crate) hosts: Vec<String>,
}
