//! The history of a simulated run as the application saw it: every operation of every client
//! the [`World`](crate::World) made (its session, when it was submitted and answered, its
//! result and zxids) and every watch event delivered, in one order (the run is on one
//! thread, so the order of recording is the order of happening). The guarantee checks
//! ([`guarantees`](crate::check::guarantees)) read it.
//!
//! Recording is cheap: a lock and a push per step, no formatting; the Stat of a reply is
//! decoded only for the operations whose reply ends with one.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;
use zkrs_client::__private::{Answer, Recorded, Recorder};
use zkrs_client::{ErrorCode, ErrorKind};
use zkrs_codec::{Decode, EventType, KeeperState, OpCode, Stat};

/// The bytes of a Stat on the wire.
const STAT_LEN: usize = 68;

/// What the application saw in one run: operations and watch events, each with its place
/// in the one order of the run ([`Answered::seq`], [`Delivery::seq`], [`Operation::seq`]).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct History {
    /// Every operation, in the order submitted.
    pub operations: Vec<Operation>,
    /// Every watch event delivered to the application, in the order delivered.
    pub deliveries: Vec<Delivery>,
}

/// One client operation.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Operation {
    /// The client (numbered from 1 in the order the world made their builders).
    pub client: usize,
    /// The request's number in its client, from 1 in the order the client sent them.
    pub request: u64,
    /// Its place in the run's order when it was submitted.
    pub seq: u64,
    /// The operation.
    pub op: OpCode,
    /// Its server path, for operations on one path.
    pub path: Option<String>,
    /// The watcher it registers on success, if any.
    pub watcher: Option<u64>,
    /// When its client's driver took it (simulated time since the run began).
    pub submitted: Duration,
    /// Its answer, if it got one.
    pub answer: Option<Answered>,
}

/// An operation's answer.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Answered {
    /// Its place in the run's order.
    pub seq: u64,
    /// When it went to the caller.
    pub at: Duration,
    /// The client's session then (the one the server answered on).
    pub session: i64,
    /// What it was.
    pub outcome: Outcome,
}

/// What an operation's answer was.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Outcome {
    /// A reply without error.
    Ok {
        /// The reply header's zxid: a write's own, a read's server's last applied.
        zxid: i64,
        /// The Stat it returned, if the operation returns one.
        stat: Option<Stat>,
    },
    /// An error, from the server or the client.
    Failed {
        /// Its kind.
        kind: ErrorKind,
        /// Its code, if it has one.
        code: Option<ErrorCode>,
    },
}

/// A watch event delivered to the application.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Delivery {
    /// The client.
    pub client: usize,
    /// Its place in the run's order.
    pub seq: u64,
    /// When.
    pub at: Duration,
    /// The watcher it went to.
    pub watcher: u64,
    /// The client's session then.
    pub session: i64,
    /// What happened.
    pub event_type: EventType,
    /// The connection state it carries.
    pub state: KeeperState,
    /// The server path (empty for a session event).
    pub path: String,
}

impl Operation {
    /// The zxid of its reply, if it succeeded.
    pub fn zxid(&self) -> Option<i64> {
        match &self.answer {
            Some(Answered {
                outcome: Outcome::Ok { zxid, .. },
                ..
            }) => Some(*zxid),
            _ => None,
        }
    }

    /// The Stat of its reply, if it succeeded and returns one.
    pub fn stat(&self) -> Option<&Stat> {
        match &self.answer {
            Some(Answered {
                outcome: Outcome::Ok { stat, .. },
                ..
            }) => stat.as_ref(),
            _ => None,
        }
    }

    /// The session that answered it, if it was answered.
    pub fn session(&self) -> Option<i64> {
        self.answer.as_ref().map(|a| a.session)
    }

    /// Whether it is a write: a transaction with a zxid of its own ([`OpCode::is_write`]).
    pub fn is_write(&self) -> bool {
        self.op.is_write()
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "client {} request {} {:?}",
            self.client, self.request, self.op
        )?;
        if let Some(path) = &self.path {
            write!(f, " {path}")?;
        }
        write!(f, " submitted at {} us", self.submitted.as_micros())?;
        let Some(answer) = &self.answer else {
            return f.write_str(", never answered");
        };
        write!(
            f,
            ", answered at {} us in session {:#x}: ",
            answer.at.as_micros(),
            answer.session
        )?;
        match &answer.outcome {
            Outcome::Ok { zxid, stat } => {
                write!(f, "zxid {zxid:#x}")?;
                if let Some(s) = stat {
                    write!(
                        f,
                        " (czxid {:#x}, mzxid {:#x}, pzxid {:#x})",
                        s.czxid, s.mzxid, s.pzxid
                    )?;
                }
                Ok(())
            }
            Outcome::Failed { kind, code } => match code {
                Some(code) => write!(f, "{kind:?} ({code:?})"),
                None => write!(f, "{kind:?}"),
            },
        }
    }
}

impl fmt::Display for Delivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "client {} event {:?} {} to watcher {} at {} us in session {:#x}",
            self.client,
            self.event_type,
            self.path,
            self.watcher,
            self.at.as_micros(),
            self.session
        )
    }
}

/// The history of a run being recorded: shared by the world and every client's recorder.
#[derive(Debug, Clone)]
pub(crate) struct HistoryLog {
    inner: Arc<Mutex<Log>>,
    start: Instant,
}

#[derive(Debug, Default)]
struct Log {
    history: History,
    /// The next place in the run's order.
    seq: u64,
    /// Clients made so far.
    clients: usize,
    /// Where each unanswered operation is in `history.operations`, by client and request.
    open: HashMap<(usize, u64), usize>,
}

impl HistoryLog {
    pub(crate) fn new(start: Instant) -> HistoryLog {
        HistoryLog {
            inner: Arc::new(Mutex::new(Log::default())),
            start,
        }
    }

    /// A recorder for the next client.
    pub(crate) fn recorder(&self) -> Arc<dyn Recorder> {
        let client = {
            let mut log = self.lock();
            log.clients += 1;
            log.clients
        };
        Arc::new(ClientRecorder {
            client,
            log: self.clone(),
        })
    }

    /// What was recorded so far.
    pub(crate) fn take(&self) -> History {
        std::mem::take(&mut self.lock().history)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Records one client's steps into the run's history.
struct ClientRecorder {
    client: usize,
    log: HistoryLog,
}

impl Recorder for ClientRecorder {
    fn record(&self, step: Recorded<'_>) {
        let at = Instant::now().saturating_duration_since(self.log.start);
        let mut log = self.log.lock();
        let log = &mut *log;
        log.seq += 1;
        let seq = log.seq;
        match step {
            Recorded::Submitted {
                id,
                op,
                path,
                watcher,
            } => {
                log.open
                    .insert((self.client, id), log.history.operations.len());
                log.history.operations.push(Operation {
                    client: self.client,
                    request: id,
                    seq,
                    op,
                    path: path.map(str::to_string),
                    watcher,
                    submitted: at,
                    answer: None,
                });
            }
            Recorded::Answered {
                id,
                session,
                answer,
            } => {
                let Some(index) = log.open.remove(&(self.client, id)) else {
                    return;
                };
                let operation = &mut log.history.operations[index];
                let outcome = match answer {
                    Answer::Ok { zxid, body } => Outcome::Ok {
                        zxid,
                        stat: trailing_stat(operation.op, body),
                    },
                    Answer::Err(e) => Outcome::Failed {
                        kind: e.kind(),
                        code: e.code(),
                    },
                };
                operation.answer = Some(Answered {
                    seq,
                    at,
                    session,
                    outcome,
                });
            }
            Recorded::Delivered {
                watcher,
                session,
                event_type,
                state,
                path,
            } => log.history.deliveries.push(Delivery {
                client: self.client,
                seq,
                at,
                watcher,
                session,
                event_type,
                state,
                path: path.to_string(),
            }),
            _ => {}
        }
    }
}

/// The Stat a reply body ends with, for the operations whose reply does.
fn trailing_stat(op: OpCode, body: &[u8]) -> Option<Stat> {
    if !op.reply_ends_with_stat() || body.len() < STAT_LEN {
        return None;
    }
    Stat::decode_prefix(&body[body.len() - STAT_LEN..]).ok()
}
