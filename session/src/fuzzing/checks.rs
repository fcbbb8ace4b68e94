//! The invariants, checked after every step: every event the core emits is judged against what
//! was handed in and what the server model saw.

use crate::{ConnectionState, Event};

use super::harness::Harness;

impl<'a> Harness<'a> {
    /// Drains events, checks invariants, and moves the client's bytes to the server.
    pub(super) fn after_step(&mut self) {
        while let Some(event) = self.s.poll_event() {
            self.check_event(event);
        }
        assert!(
            self.s.in_flight() <= self.outstanding_submits.len() + self.internal_sends,
            "in_flight() = {} with {} requests unanswered and {} sent by the core",
            self.s.in_flight(),
            self.outstanding_submits.len(),
            self.internal_sends
        );
        if !self.stalled {
            let n = self.s.poll_transmit().len();
            self.transmit(n);
        }
    }

    pub(super) fn transmit(&mut self, n: usize) {
        let n = n.min(self.s.poll_transmit().len());
        self.server
            .rx
            .extend_from_slice(&self.s.poll_transmit()[..n]);
        self.s.advance_transmit(n);
        self.server.parse(self.cfg_can_be_read_only);
    }

    fn check_event(&mut self, event: Event<u32>) {
        if let Some(trace) = &mut self.trace {
            trace.push(format!("    {event:?}"));
        }
        if !matches!(event, Event::Watch { .. }) {
            // A notification's events come with nothing between them.
            self.group_run = None;
        }
        if self.closed {
            let allowed = match &event {
                Event::Reply { token, .. } => self.after_close_tokens.contains(token),
                Event::WatcherUnused(w) => self.after_close_watchers.contains(w),
                _ => false,
            };
            assert!(allowed, "{event:?} after Event::Closed");
        }
        match event {
            Event::Connect {
                conn,
                host,
                timeout,
                ..
            } => {
                self.current_conn = conn;
                self.check_connect(host, timeout)
            }
            Event::Disconnect => {
                self.connect_outstanding = false;
                self.rx.clear();
                self.server.reset_connection(false);
            }
            Event::ConnectSpare {
                conn,
                host,
                timeout,
                ..
            } => {
                self.spare_conn = conn;
                self.check_connect_spare(host, timeout)
            }
            Event::DropSpare => {
                assert!(self.spare_outstanding, "DropSpare with no spare");
                self.spare_outstanding = false;
            }
            Event::UseSpare => {
                self.retiring_conn = self.current_conn;
                self.current_conn = self.spare_conn;
                self.use_spare()
            }
            Event::DropRetiring => {
                assert!(self.retiring.take().is_some(), "DropRetiring with none");
            }
            Event::RestoreRetiring => {
                self.current_conn = self.retiring_conn;
                self.restore_retiring()
            }
            Event::Moved { host } => {
                assert!(host < self.host_count, "Moved to host {host}");
                assert!(self.state.is_connected(), "Moved while {:?}", self.state);
            }
            Event::ProbeReadWrite { host } => {
                assert!(host < self.host_count, "ProbeReadWrite of host {host}");
            }
            Event::Reply { token, result } => self.check_reply(token, result),
            Event::Watch { watcher, event } => self.check_watch(watcher, event),
            Event::WatcherUnused(watcher) => self.check_watcher_unused(watcher),
            Event::State(change) => self.check_state(change),
            Event::Closed => {
                assert!(!self.closed, "Closed twice");
                self.closed = true;
                self.connect_outstanding = false;
            }
        }
    }

    /// A connection asked for: to a known host, with time for it, none open before.
    fn check_connect(&mut self, host: usize, timeout: std::time::Duration) {
        assert!(host < self.host_count, "Connect to host {host}");
        assert!(!timeout.is_zero(), "Connect with no time to do it");
        assert!(
            !self.connect_outstanding || self.double_connect_ok,
            "Connect while the previous connection was not ended by a Disconnect"
        );
        self.connect_outstanding = true;
    }

    /// A move's spare asked for: one at a time, from a session in use.
    fn check_connect_spare(&mut self, host: usize, timeout: std::time::Duration) {
        assert!(host < self.host_count, "ConnectSpare to host {host}");
        assert!(!timeout.is_zero(), "ConnectSpare with no time to do it");
        assert!(!self.spare_outstanding, "a second spare connection");
        assert!(self.retiring.is_none(), "a spare while switching");
        assert!(
            self.state.is_connected(),
            "a move from a session not in use ({:?})",
            self.state
        );
        self.spare_outstanding = true;
    }

    /// The switch to the spare: the old connection keeps its server and unread bytes.
    fn use_spare(&mut self) {
        assert!(self.spare_outstanding, "UseSpare with no spare");
        assert!(
            self.server.queue.is_empty(),
            "switched with requests in flight on the old connection: {:?}",
            self.server.queue
        );
        self.spare_outstanding = false;
        let old = std::mem::take(&mut self.rx);
        self.retiring = Some((self.server.clone(), old));
        // The spare is a new connection: a ConnectRequest first.
        self.server.reset_connection(true);
    }

    /// Back to the old connection, with its server and unread bytes.
    fn restore_retiring(&mut self) {
        let (old, rx) = self.retiring.take().expect("RestoreRetiring with none");
        // The connection-wide state is the old one's; the server's counters go on.
        let (last_xid, zxid, next_session) = (
            self.server.last_xid,
            self.server.zxid,
            self.server.next_session,
        );
        self.server = old;
        self.server.last_xid = last_xid;
        self.server.zxid = zxid;
        self.server.next_session = next_session;
        self.rx = rx;
        self.connect_outstanding = true;
    }

    /// Each token answered once, a successful reply with a body its opcode decodes.
    fn check_reply(&mut self, token: u32, result: crate::Result<crate::Reply>) {
        assert!(
            self.outstanding.remove(&token),
            "token {token} answered twice"
        );
        self.outstanding_submits.remove(&token);
        if let (Some(&op), Ok(reply)) = (self.token_ops.get(&token), &result) {
            if let Err(e) = crate::check_reply(op, &reply.body) {
                panic!("a successful {op} reply whose body does not decode: {e}");
            }
        }
    }

    /// A notification for a known watcher: a one-shot one once, a group once per notification.
    fn check_watch(&mut self, watcher: crate::WatcherId, event: crate::WatchedEvent) {
        assert!(
            !self.unused.contains(&watcher),
            "watcher {watcher} fired after WatcherUnused"
        );
        let one_shot = self
            .watchers
            .iter()
            .find(|(w, _)| *w == watcher)
            .map(|&(_, one_shot)| one_shot);
        assert!(one_shot.is_some(), "unknown watcher {watcher}");
        if self.grouped.contains(&watcher) {
            let this = (event.event_type, event.state, event.path.clone());
            if self.group_run.as_ref() != Some(&this) {
                self.group_run = Some(this);
                self.group_heard = false;
            }
            assert!(
                !self.group_heard,
                "the group heard one notification twice ({event:?}, watcher {watcher})"
            );
            self.group_heard = true;
        }
        self.notified.insert(watcher);
        if one_shot == Some(true) {
            assert!(
                self.fired_one_shot.insert(watcher),
                "one-shot watcher {watcher} fired twice (second: {event:?})"
            );
        }
    }

    /// A watcher let go once, and not after it fired.
    fn check_watcher_unused(&mut self, watcher: crate::WatcherId) {
        assert!(
            self.unused.insert(watcher),
            "WatcherUnused({watcher}) twice"
        );
        assert!(
            !self.fired_one_shot.contains(&watcher),
            "WatcherUnused({watcher}) after it fired"
        );
    }

    /// A state change the state machine allows; a lost session never comes back.
    fn check_state(&mut self, change: crate::StateChange) {
        use ConnectionState::*;
        let from = self.state;
        let allowed = match change.state {
            Connected => matches!(from, Connecting | Lost),
            ReadOnly => matches!(from, Connecting | Suspended | Lost),
            Reconnected => matches!(from, Suspended | Lost),
            Suspended => matches!(from, Connected | Reconnected | ReadOnly),
            Lost => matches!(from, Connecting | Suspended),
            // Only with SASL, before the session opens on a connection.
            AuthFailed => matches!(from, Connecting | Suspended | Lost),
            Closed => true,
            Connecting => false,
        };
        assert!(allowed, "state {from:?} -> {:?}", change.state);
        self.state = change.state;
        match change.state {
            Lost if self.session_id != 0 => {
                self.lost.insert(self.session_id);
            }
            // A session id handed out by bytes the model did not write (raw bytes read
            // with a response) is the script's to reuse: later connections may ask to
            // resume it, and the model then does.
            Connected | Reconnected | ReadOnly if !self.model_connect_response => {
                self.lost.remove(&change.session_id);
            }
            Connected | Reconnected | ReadOnly => {
                assert!(
                    !self.lost.contains(&change.session_id),
                    "session {:#x} reported Lost, then {:?} again",
                    change.session_id,
                    change.state
                );
            }
            _ => {}
        }
        self.session_id = change.session_id;
    }
}
