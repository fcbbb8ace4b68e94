//! The I/O of a [`Line`]: a runner owns the client, the watches and the back-off, performs
//! what the line asks for, and feeds the results back. No decision is made here.

use tokio::time::Instant;
use zkrs_client::{Client, CreateMode, CreateOptions, EventType, OneshotWatch, Result};

use super::leftovers::Leftovers;
use super::place::{Order, Rule};
use super::watch::watch_line;
use super::{Became, Input, Io, Leftover, Line};
use crate::framework::{
    create_parents, find_protected, join, Backoff, ParentMode, ProtectedName, Wake, Watched,
};

/// Where a line's nodes live, how they are named and sorted, and who goes before whom.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LineSpec<'a> {
    /// The line's directory.
    pub(crate) dir: &'a str,
    /// The name after the protected prefix: `lock-`, `__READ__`, `__WRIT__`.
    pub(crate) lock_name: &'static str,
    /// The node's sequence, when the caller chooses it (the node is then ephemeral, not
    /// sequential: the read lock a write-lock holder takes sorts with its write node,
    /// CURATOR-621).
    pub(crate) sequence: Option<&'a str>,
    pub(crate) order: Order,
    pub(crate) rule: Rule,
}

/// Runs a lock's line: one per acquire. Dropped on any way out, it deletes what the line
/// leaves (our node, or whatever carries our protected prefix while a create is in doubt).
pub(crate) struct Runner<'a> {
    client: &'a Client,
    spec: LineSpec<'a>,
    data: &'a [u8],
    protected: ProtectedName,
    mode: CreateMode,
    options: CreateOptions<'static>,
    /// The path asked for becomes the created node's path: one `String` per acquire (it has
    /// room for the sequence the server appends), made again only if an attempt starts over.
    asked: String,
    backoff: Backoff,
    /// The predecessor's watch, kept while it stays our predecessor: a listing after the
    /// look-ahead's departure does not ask for it again.
    kept: Option<(String, OneshotWatch)>,
    line: Line,
}

impl<'a> Runner<'a> {
    /// A runner for one acquire (it draws its protected name).
    pub(crate) fn new(
        client: &'a Client,
        spec: LineSpec<'a>,
        data: &'a [u8],
        deadline: Option<Instant>,
    ) -> Runner<'a> {
        let protected = ProtectedName::new();
        let mode = match spec.sequence {
            None => CreateMode::EphemeralSequential,
            Some(_) => CreateMode::Ephemeral,
        };
        let mut runner = Runner {
            client,
            spec,
            data,
            protected,
            mode,
            options: CreateOptions::new(mode).with_stat(),
            asked: String::new(),
            backoff: Backoff::until(deadline),
            kept: None,
            line: Line::new(spec.order, spec.rule),
        };
        runner.asked = runner.create_path();
        runner
    }

    fn create_path(&self) -> String {
        match self.spec.sequence {
            None => self.protected.path(self.spec.dir, self.spec.lock_name),
            Some(seq) => {
                let name = format!("{}{seq}", self.spec.lock_name);
                self.protected.path(self.spec.dir, &name)
            }
        }
    }

    /// The back-off the recipe settles with after [`Became::InDoubt`] and
    /// [`Became::Retry`] (its deadline is the acquire's).
    pub(crate) fn backoff(&mut self) -> &mut Backoff {
        &mut self.backoff
    }

    /// Our node's owner and creation zxid, once we have one.
    pub(crate) fn node(&self) -> Option<(i64, i64)> {
        self.line.node()
    }

    /// Takes our node's path after [`Became::First`]: from here on the caller owns it.
    pub(crate) fn take_path(&mut self) -> Option<String> {
        self.line.take_first()
    }

    /// Performs the I/O the line asks for until something happens the recipe reacts to.
    pub(crate) async fn step(&mut self) -> Became {
        loop {
            let input = match self.line.next() {
                Io::Create => self.create().await,
                Io::MakeParents => {
                    let dir = self.spec.dir;
                    Input::ParentsMade(
                        create_parents(self.client, dir, ParentMode::Container).await,
                    )
                }
                Io::Look => {
                    let (client, dir) = (self.client, self.spec.dir);
                    Input::Looked(find_protected(client, dir, &self.protected, self.mode).await)
                }
                Io::List => match self.line.take_listed() {
                    Some(listed) => Input::Listed(Ok(listed)),
                    None => Input::Listed(self.client.get_children(self.spec.dir).await),
                },
                Io::Wait => {
                    let (predecessor, lookahead) = self.line.waiting_for().expect("waiting");
                    let predecessor = join(self.spec.dir, predecessor);
                    let lookahead = lookahead.map(|n| join(self.spec.dir, n));
                    let (client, kept, backoff) = (self.client, &mut self.kept, &mut self.backoff);
                    Input::Woke(wait_in_line(client, predecessor, lookahead, kept, backoff).await)
                }
                Io::None => {
                    debug_assert!(false, "a step of a line that is first or spent");
                    return Became::Failed(super::unexpected("a step"));
                }
            };
            let became = self.line.on(input, self.client.session_id());
            if self.line.is_idle() {
                // A new attempt: the last one's watch says nothing about the next node.
                self.kept = None;
            }
            if let Some(became) = became {
                return became;
            }
        }
    }

    /// Creates our node, with the listing pipelined: applied after the create, it includes
    /// our node.
    async fn create(&mut self) -> Input {
        if self.asked.is_empty() {
            self.asked = self.create_path();
        }
        self.line.creating();
        let (client, dir) = (self.client, self.spec.dir);
        let (created, listed) = tokio::join!(
            zkrs_client::__private::create_in_reply(client, &self.asked, self.data, &self.options),
            client.get_children(dir)
        );
        let created = created.map(|(created, stat)| {
            let mut path = std::mem::take(&mut self.asked);
            path.clear();
            path.push_str(created.as_str());
            (path, stat)
        });
        Input::Created(created, listed.ok())
    }
}

impl Drop for Runner<'_> {
    fn drop(&mut self) {
        // The watch goes first, as the acquire's locals did.
        self.kept = None;
        let (node, in_doubt) = match self.line.leftover() {
            Leftover::Nothing => (None, false),
            Leftover::Node(path) => (Some(path), false),
            Leftover::InDoubt => (None, true),
        };
        drop(Leftovers {
            client: self.client,
            dir: self.spec.dir,
            protected: &self.protected,
            node,
            in_doubt,
        });
    }
}

/// Waits until the predecessor or the look-ahead leaves: watches both (pipelined, the
/// predecessor's watch reused from `kept` when it is the same node), each with `getData`
/// (Curator's way: no watch is left behind on a node that is gone already). When the wait
/// ends with the look-ahead ([`Watched::Ahead`]), the predecessor's watch is left in `kept`
/// (the predecessor still waits or holds: a listing says where we stand).
async fn wait_in_line(
    client: &Client,
    predecessor: String,
    lookahead: Option<String>,
    kept: &mut Option<(String, OneshotWatch)>,
    backoff: &mut Backoff,
) -> Result<Wake> {
    let deadline = backoff.deadline();
    let (watch, ahead) = watch_line(client, &predecessor, lookahead.as_deref(), kept.take()).await;
    let mut watch = match watch {
        Ok(Some(watch)) => watch,
        Ok(None) => return Ok(Wake::Node(Watched::Predecessor, EventType::NodeDeleted)),
        Err(e) if e.is_retryable() => {
            return match backoff.pause(client).await {
                Ok(()) => Ok(Wake::Reset),
                Err(_) if backoff.is_deadline() => Ok(Wake::TimedOut),
                Err(e) => Err(e),
            };
        }
        Err(e) => return Err(e),
    };
    let ahead = match ahead {
        Some(Ok(Some(ahead))) => Some(ahead),
        Some(Ok(None)) => {
            *kept = Some((predecessor, watch));
            return Ok(Wake::Node(Watched::Ahead, EventType::NodeDeleted));
        }
        None => None,
        // The predecessor's watch alone still says what we need.
        Some(Err(e)) if e.is_retryable() => None,
        Some(Err(e)) => return Err(e),
    };
    let woke = async {
        match ahead {
            Some(ahead) => tokio::select! {
                biased;
                event = &mut watch => (Watched::Predecessor, event),
                event = ahead => (Watched::Ahead, event),
            },
            None => (Watched::Predecessor, (&mut watch).await),
        }
    };
    let (which, event) = match deadline {
        None => woke.await,
        Some(d) => match tokio::time::timeout_at(d, woke).await {
            Ok(woke) => woke,
            Err(_) => return Ok(Wake::TimedOut),
        },
    };
    // Whatever ended the look-ahead's watch (its deletion, a session event), a listing
    // tells where we stand, with the predecessor's watch kept. A session event (expired,
    // closed) or a data change on the predecessor's says nothing about the line: look again.
    if which == Watched::Ahead {
        *kept = Some((predecessor, watch));
    }
    Ok(Wake::Node(which, event.event_type))
}
