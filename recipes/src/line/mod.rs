//! The line: queueing on ephemeral-sequential nodes, whoever sorts first going first. Join
//! (create our node), place it in a listing ([`place`]), wait on the node that must go
//! first (and the one before it, the look-ahead), take the hand-off, and refuse a node of a
//! session that is gone. The locks (Curator's `LockInternals`, under every lock and so under
//! `LeaderSelector`) go through it; `LeaderLatch` and `LeaderElection` take the same steps
//! in their own tasks, with [`place`] and [`watch`].
//!
//! [`Line`] decides and holds no client, no future, no watch: inputs in, what became of the
//! line out. A [`Runner`](run::Runner) performs the I/O it asks for; the recipe reacts to
//! what [`Runner::step`](run::Runner::step) returns (a lock returns its guard, a timeout or
//! an error). With the state outside futures, what a dropped future leaves is a field read
//! synchronously (`Runner`'s `Drop`).
//!
//! Compared with Curator's `LockInternals`:
//! - The create and the first listing go out pipelined on the same session: ZooKeeper applies
//!   a session's requests in order, so the listing already contains our node. An uncontended
//!   acquire is one round trip, acquire + release two (Curator: three).
//! - The create returns the node's Stat (create2), and a node that sorts first is only taken
//!   as held if it belongs to the current session: after a lost session, an old node may sort
//!   first until the server expires it (CURATOR-604); holding the lock with it would give two
//!   holders. Such a node is deleted and a new one created.
//! - Every way out (error, timeout, a dropped future) deletes our node, or, when the create's
//!   outcome is unknown, whatever node carries our protected prefix.
//! - A hand-off costs one notification, not a notification and a listing: when the contender
//!   we wait for was, in our last listing, the only one that had to go before us, its
//!   deletion makes us first without asking again (Curator lists the children again).
//! - Deeper in line, we also watch the contender before our predecessor (the look-ahead).
//!   When it leaves, we list again while our predecessor still waits or holds; that listing
//!   usually shows the predecessor as the only one left, so its deletion then hands us the
//!   lock in one notification too. The listing a deep line needs is taken one turn early,
//!   off the hand-off's path, instead of after the predecessor's deletion: a line of 1,000
//!   hands over as a line of 2 does.
//!
//! # Why the hand-off rule holds
//!
//! Our last listing contains our node, so the member that answered it had applied our create,
//! and with it every create before ours. Sequential nodes get their numbers in the order the
//! creates are applied, so every contender that sorts before us and still existed then is in
//! the listing, and none can be created later: the contenders before us only ever leave. When
//! the listing shows one, and we learn it is gone (its deletion's notification, or a read
//! that finds no node), nobody is before us, whatever made it leave (a release, a timeout,
//! an expired session). The remaining question is whether our node is still there:
//! - The notification came over our session's connection, so the session was alive when the
//!   server applied the deletion, and its ephemeral node with it. We check that the session
//!   is still the one that owns our node ([`is_stale`]): after a new session, our node is
//!   gone or going (CURATOR-604), and we start again, as with a listing.
//! - The notification proves that the server writes to us, not that it hears us: with our
//!   requests lost on the way, the server may be expiring the session. The session restarts
//!   its read timeout on replies alone (not on notifications), so such a connection is
//!   suspended within two thirds of the session timeout of its last reply, before the server
//!   can expire the session, and the connection-state policy ends the hold as for any holder
//!   (a holder whose requests vanished must not keep the connection on the strength of
//!   notifications).
//! - A watch that ends with a session event (expired, closed) or a data change is not a
//!   deletion: we list again. So do errors and a predecessor that was not the only one (the
//!   others may still be there; finding out costs a round trip either way, and a listing
//!   answers it at once).
//! - The look-ahead changes nothing in this reasoning: its departure only makes us list again
//!   (keeping the predecessor's watch, set before that listing was asked for, so a deletion
//!   in between is still heard), and only a listing decides where we stand and whether the
//!   predecessor is the only one left.
//! - Two exceptions to "none can be created later", both nodes with a chosen name: the read
//!   node a write-lock holder takes with its write node's number (a downgrade, CURATOR-621),
//!   and a child someone else creates with a name of their choosing. For the first, the
//!   deletion of a write node never hands over the write lock without a listing; a reader
//!   waits only for writers, whose nodes are sequential. The second is outside the lock's
//!   promise, as is a contender's node deleted by someone else (a holder's node so deleted
//!   already lets the next one in, here as in Curator).

pub(crate) mod leftovers;
pub(crate) mod place;
pub(crate) mod run;
pub(crate) mod watch;

use zkrs_client::{Children, Client, Error, ErrorCode, EventType, Result, Stat};

use crate::framework::{node_name, Wake, Watched};
use place::{place, Order, Rule, Standing};

/// The error of a step the line did not expect (a bug: `debug_assert`ed where it happens).
pub(crate) fn unexpected(what: &str) -> Error {
    let detail = format!("line: {what} its state does not expect");
    Error::new(zkrs_client::ErrorKind::InvalidData, detail)
}

/// Whether a node owned by the session `owner` is not ours to go with: that session is no
/// longer the client's (it may sort first until the server expires it).
pub(crate) fn is_stale(owner: i64, client: &Client) -> bool {
    owner != client.session_id()
}

/// Our node in the line.
#[derive(Debug)]
struct Node {
    path: String,
    /// The session that owns it.
    owner: i64,
    /// Its creation zxid.
    czxid: i64,
}

impl Node {
    fn new(path: String, stat: Option<&Stat>) -> Node {
        let (owner, czxid) = stat.map_or((0, 0), |s| (s.ephemeral_owner, s.czxid));
        Node { path, owner, czxid }
    }
}

/// Waiting behind `predecessor` (a node name).
#[derive(Debug)]
struct Waiting {
    node: Node,
    predecessor: String,
    /// The predecessor was the only one before us: its deletion makes us first.
    sole: bool,
    lookahead: Option<String>,
}

#[derive(Debug)]
enum State {
    /// No node: the next step creates one.
    Idle,
    /// A create was sent; its outcome is not known yet.
    Creating,
    /// The directory was missing: the next step makes it.
    MakingParents,
    /// A create's outcome is unknown (its reply was lost): the next step looks for the node.
    InDoubt,
    /// Our node, to place by a listing (the create's pipelined one, when there is one).
    Placing(Node, Option<Children>),
    Waiting(Waiting),
    /// First in line, with a node of the current session.
    First(Node),
    /// The node was taken out (the lock's guard has it).
    Spent,
}

/// The I/O the line needs next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Io {
    /// Create our node, with a listing pipelined.
    Create,
    /// Make the line's directory.
    MakeParents,
    /// Look for the node of a create whose outcome is unknown.
    Look,
    /// List the line (or take the listing the create brought).
    List,
    /// Watch the predecessor and the look-ahead ([`Line::waiting_for`]), and wait.
    Wait,
    /// Nothing: first, or spent.
    None,
}

/// What the I/O gave.
#[derive(Debug)]
pub(crate) enum Input {
    /// The create's outcome (the created path and its Stat), and the pipelined listing.
    Created(Result<(String, Option<Stat>)>, Option<Children>),
    ParentsMade(Result<()>),
    /// The look for a create in doubt: the node and its Stat, if it was made (and is ours).
    Looked(Result<Option<(String, Stat)>>),
    Listed(Result<Children>),
    /// The wait's end.
    Woke(Result<Wake>),
}

/// What became of the line, for the recipe to react to.
#[derive(Debug)]
pub(crate) enum Became {
    /// Our node exists (created, or found after a create in doubt).
    Joined,
    /// The create's outcome is unknown: settle (the recipe's way), then step to look.
    InDoubt,
    /// Waiting behind someone.
    Behind,
    /// Ours, with a node of the current session: the recipe takes it.
    First,
    /// First with an old session's node, `old`: the recipe deletes it; the line goes on.
    Stale { old: String },
    /// Our node is not there (listing, directory gone): the next step creates one.
    Gone,
    /// A retryable failure: settle, then step again.
    Retry,
    /// Nothing the line can do.
    Failed(Error),
    /// The wait's deadline passed.
    TimedOut,
}

/// One node's line, as pure data (see the module's documentation).
#[derive(Debug)]
pub(crate) struct Line {
    order: Order,
    rule: Rule,
    state: State,
}

/// What a way out must delete.
#[derive(Debug)]
pub(crate) enum Leftover {
    Nothing,
    /// Our node.
    Node(String),
    /// Whatever carries our protected prefix (a create in doubt).
    InDoubt,
}

impl Line {
    pub(crate) fn new(order: Order, rule: Rule) -> Line {
        Line {
            order,
            rule,
            state: State::Idle,
        }
    }

    /// The I/O the line needs next.
    pub(crate) fn next(&self) -> Io {
        match &self.state {
            State::Idle => Io::Create,
            State::MakingParents => Io::MakeParents,
            State::InDoubt => Io::Look,
            State::Placing(..) => Io::List,
            State::Waiting(_) => Io::Wait,
            State::Creating | State::First(_) | State::Spent => Io::None,
        }
    }

    /// While waiting: the predecessor's name and the look-ahead's.
    pub(crate) fn waiting_for(&self) -> Option<(&str, Option<&str>)> {
        match &self.state {
            State::Waiting(w) => Some((&w.predecessor, w.lookahead.as_deref())),
            _ => None,
        }
    }

    /// The create is sent: from here on its outcome may be unknown.
    pub(crate) fn creating(&mut self) {
        debug_assert!(matches!(self.state, State::Idle));
        self.state = State::Creating;
    }

    /// The listing the create brought, if it is there to place by.
    pub(crate) fn take_listed(&mut self) -> Option<Children> {
        match &mut self.state {
            State::Placing(_, listed) => listed.take(),
            _ => None,
        }
    }

    /// Whether the line has no node and no create under way (a new attempt starts).
    pub(crate) fn is_idle(&self) -> bool {
        matches!(self.state, State::Idle)
    }

    /// Our node's owner and creation zxid, once we have one.
    pub(crate) fn node(&self) -> Option<(i64, i64)> {
        match &self.state {
            State::Placing(n, _) | State::First(n) => Some((n.owner, n.czxid)),
            State::Waiting(w) => Some((w.node.owner, w.node.czxid)),
            _ => None,
        }
    }

    /// Takes our node's path when first (the lock's guard keeps it from here on).
    pub(crate) fn take_first(&mut self) -> Option<String> {
        match std::mem::replace(&mut self.state, State::Spent) {
            State::First(node) => Some(node.path),
            other => {
                self.state = other;
                None
            }
        }
    }

    /// What a way out now must delete.
    pub(crate) fn leftover(&mut self) -> Leftover {
        match std::mem::replace(&mut self.state, State::Spent) {
            State::Creating | State::InDoubt => Leftover::InDoubt,
            State::Placing(node, _) | State::First(node) => Leftover::Node(node.path),
            State::Waiting(w) => Leftover::Node(w.node.path),
            State::Idle | State::MakingParents | State::Spent => Leftover::Nothing,
        }
    }

    /// Feeds what the I/O gave; `session` is the client's session now. `None`: nothing to
    /// react to, step again.
    pub(crate) fn on(&mut self, input: Input, session: i64) -> Option<Became> {
        let (state, became) = match (std::mem::replace(&mut self.state, State::Spent), input) {
            (State::Creating, Input::Created(created, listed)) => on_created(created, listed),
            (State::MakingParents, Input::ParentsMade(Ok(()))) => (State::Idle, None),
            (State::MakingParents, Input::ParentsMade(Err(e))) => {
                (State::Idle, Some(Became::Failed(e)))
            }
            (State::InDoubt, Input::Looked(Ok(Some((path, stat))))) => (
                State::Placing(Node::new(path, Some(&stat)), None),
                Some(Became::Joined),
            ),
            (State::InDoubt, Input::Looked(Ok(None))) => (State::Idle, None),
            // The lock gives up (its caller has a deadline); the prefix is deleted.
            (State::InDoubt, Input::Looked(Err(e))) => (State::InDoubt, Some(Became::Failed(e))),
            (State::Placing(node, _), Input::Listed(listed)) => self.placed(node, listed, session),
            (State::Waiting(w), Input::Woke(woke)) => on_woke(w, woke, session),
            (state, input) => {
                debug_assert!(false, "line: {input:?} in {state:?}");
                (state, Some(Became::Failed(unexpected("an input"))))
            }
        };
        self.state = state;
        became
    }

    fn placed(
        &self,
        node: Node,
        listed: Result<Children>,
        session: i64,
    ) -> (State, Option<Became>) {
        let children = match listed {
            Ok(children) => children,
            // The directory is gone, and our node with it.
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {
                return (State::Idle, Some(Became::Gone))
            }
            Err(e) if e.is_retryable() => return (State::Placing(node, None), Some(Became::Retry)),
            Err(e) => return (State::Placing(node, None), Some(Became::Failed(e))),
        };
        let place = place(
            self.order,
            self.rule,
            children.iter(),
            node_name(&node.path),
        );
        drop(children);
        match place.standing {
            Standing::Gone => (State::Idle, Some(Became::Gone)),
            Standing::First => first(node, session),
            Standing::Behind(predecessor) => {
                let waiting = Waiting {
                    node,
                    predecessor,
                    sole: place.sole,
                    lookahead: place.lookahead,
                };
                (State::Waiting(waiting), Some(Became::Behind))
            }
        }
    }
}

fn on_created(
    created: Result<(String, Option<Stat>)>,
    listed: Option<Children>,
) -> (State, Option<Became>) {
    match created {
        Ok((path, stat)) => (
            State::Placing(Node::new(path, stat.as_ref()), listed),
            Some(Became::Joined),
        ),
        Err(e) if e.code() == Some(ErrorCode::NoNode) => (State::MakingParents, None),
        Err(e) if e.is_retryable() || e.is_session_expired() => {
            (State::InDoubt, Some(Became::InDoubt))
        }
        Err(e) => (State::Idle, Some(Became::Failed(e))),
    }
}

/// The wait's end: the hand-off rule (the predecessor, the only one before us, is gone),
/// or a new listing.
fn on_woke(w: Waiting, woke: Result<Wake>, session: i64) -> (State, Option<Became>) {
    match woke {
        Ok(Wake::Node(Watched::Predecessor, EventType::NodeDeleted)) if w.sole => {
            first(w.node, session)
        }
        Ok(Wake::TimedOut) => (State::Waiting(w), Some(Became::TimedOut)),
        Ok(_) => (State::Placing(w.node, None), None),
        Err(e) => (State::Waiting(w), Some(Became::Failed(e))),
    }
}

/// First in line: ours, unless the node is of a session that is gone.
fn first(node: Node, session: i64) -> (State, Option<Became>) {
    if node.owner != session {
        (State::Idle, Some(Became::Stale { old: node.path }))
    } else {
        (State::First(node), Some(Became::First))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zkrs_client::ErrorKind;

    fn stat(owner: i64, czxid: i64) -> Stat {
        Stat {
            ephemeral_owner: owner,
            czxid,
            ..Stat::default()
        }
    }

    fn line() -> Line {
        Line::new(Order::Lock("lock-"), Rule::Exclusive)
    }

    fn lost() -> Error {
        Error::new(ErrorKind::ConnectionLoss, "cut")
    }

    #[test]
    fn a_create_in_doubt_is_looked_for_and_deleted_by_prefix_until_known() {
        let mut line = line();
        assert_eq!(line.next(), Io::Create);
        line.creating();
        assert!(matches!(line.leftover(), Leftover::InDoubt));
        let mut line = self::line();
        line.creating();
        let became = line.on(Input::Created(Err(lost()), None), 7);
        assert!(matches!(became, Some(Became::InDoubt)));
        assert_eq!(line.next(), Io::Look);
        // A look that fails leaves the doubt (the lock gives up; its way out deletes by
        // prefix).
        let became = line.on(Input::Looked(Err(lost())), 7);
        assert!(matches!(became, Some(Became::Failed(_))));
        assert_eq!(line.next(), Io::Look);
        // Not made: create again.
        assert!(line.on(Input::Looked(Ok(None)), 7).is_none());
        assert!(line.is_idle());
        assert_eq!(line.next(), Io::Create);
        // Made: ours, placed by a new listing.
        line.creating();
        line.on(Input::Created(Err(lost()), None), 7);
        let found = Some(("/l/_c_x-lock-0000000001".to_string(), stat(7, 42)));
        assert!(matches!(
            line.on(Input::Looked(Ok(found)), 7),
            Some(Became::Joined)
        ));
        assert_eq!(line.node(), Some((7, 42)));
        assert_eq!(line.next(), Io::List);
        assert!(line.take_listed().is_none());
        match line.leftover() {
            Leftover::Node(path) => assert_eq!(path, "/l/_c_x-lock-0000000001"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_missing_directory_is_made_then_the_create_is_sent_again() {
        let mut line = line();
        line.creating();
        let no_node = Error::from(zkrs_client::ErrorCode::NoNode);
        assert!(line.on(Input::Created(Err(no_node), None), 7).is_none());
        assert_eq!(line.next(), Io::MakeParents);
        assert!(matches!(line.leftover(), Leftover::Nothing));
        let mut line = self::line();
        line.creating();
        let no_node = Error::from(zkrs_client::ErrorCode::NoNode);
        line.on(Input::Created(Err(no_node), None), 7);
        assert!(line.on(Input::ParentsMade(Ok(())), 7).is_none());
        assert_eq!(line.next(), Io::Create);
    }

    #[test]
    fn a_create_refused_fails_and_leaves_nothing() {
        let mut line = line();
        line.creating();
        let refused = Error::from(zkrs_client::ErrorCode::NoAuth);
        let became = line.on(Input::Created(Err(refused), None), 7);
        assert!(matches!(became, Some(Became::Failed(_))));
        assert!(matches!(line.leftover(), Leftover::Nothing));
    }

    #[test]
    fn a_retryable_listing_keeps_the_node_and_lists_again() {
        let mut line = line();
        line.creating();
        let created = Ok(("/l/_c_x-lock-0000000001".to_string(), Some(stat(7, 1))));
        line.on(Input::Created(created, None), 7);
        let became = line.on(Input::Listed(Err(lost())), 7);
        assert!(matches!(became, Some(Became::Retry)));
        assert_eq!(line.next(), Io::List);
        let gone = Error::from(zkrs_client::ErrorCode::NoNode);
        assert!(matches!(
            line.on(Input::Listed(Err(gone)), 7),
            Some(Became::Gone)
        ));
        assert!(line.is_idle());
    }
}
