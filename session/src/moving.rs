//! Moving the session to another host without suspending it: make before break.
//!
//! When the client itself chooses to leave its host (a new host list, ZOOKEEPER-1355's
//! rebalancing, the ensemble tracker), the connection it is on is healthy. Dropping it and
//! reconnecting, as a failure is handled, would report `Suspended` and make every recipe
//! under Curator's standard policy give up its lock or leadership for nothing. Instead:
//!
//! 1. **Dial** (`Event::ConnectSpare`): the driver opens a second connection to the new
//!    host (TCP, TLS) while the session carries on over the old one.
//! 2. **Drain**: once the spare is open, no new request goes out on the old connection
//!    (they wait, in order, in `waiting`); the old connection's requests, identities and
//!    pings in flight are answered (in order: ZooKeeper answers a session's requests in
//!    order) until nothing is outstanding on it and nothing is left to write to it.
//! 3. **Switch** (`Event::UseSpare`): the ConnectRequest (session id, password, last zxid
//!    seen) goes out on the spare, which becomes the connection; SASL, if configured, runs
//!    there as on any reconnection. The old connection is only read now, for
//!    notifications (`retiring_read`): it has nothing in flight.
//! 4. **Done**: at the server's answer the old connection is closed (`Event::DropRetiring`)
//!    *before* anything else is written to the new one; then, as after any reconnection,
//!    identities (every `add_auth`, [`crate::SessionConfig::auth`] included), SetWatches
//!    with the last zxid, and the requests that waited, in order. No state change is
//!    reported; `Event::Moved` says where the session went.
//!
//! Watches. A notification read on the old connection during the switch is delivered, and
//! ends its one-shot registrations (`WatchRegistry::trigger`), so they are not in the
//! SetWatches sent to the new host, which therefore cannot deliver that change again: no
//! one-shot watcher hears a change twice. A change the old host would have notified after
//! it was closed is one after the last zxid seen (a server sends a change's notification
//! before any reply that follows it), so the new host fires it from SetWatches' relative
//! zxid. Nothing reaches a registration made on the new host from the old one: the old
//! connection is closed before the first request is written to the new one. Persistent
//! watches are another matter: ZooKeeper 3.8 re-adds them without firing what changed while
//! they were away (notifications carry no zxid to tell), so a reconnection may miss a
//! change, and their users (caches) re-read when told `Reconnected`. A silent move would
//! hide that gap; so a session holding a persistent watch moves the old way (`Suspended`,
//! then `Reconnected`).
//!
//! Failures. Until the switch the old connection is untouched: a spare that cannot be
//! opened, times out, or closes is dropped, and the move is tried again (next host, with
//! the host picker's back-off) while the old connection lasts; if the old host is still in
//! the list, after one round of failures the client stays where it is (a rebalance is worth
//! no more than that), and `Session::last_connection_failure` says why. After the switch,
//! a handshake that fails (closed, timed out, a read-only server, SASL refused) falls back
//! to the old connection if it is still open: it has every watch and identity the session
//! had, nothing in flight, and the session (a server that refused the handshake did not
//! take it over; if it did, the old host closes the old connection at the next write, and
//! the client reconnects as after any failure). A server that says the session expired
//! ends it for both connections: `Suspended`, then `Lost`, as before. If the old
//! connection broke meanwhile, the client is where a failure leaves it: `Suspended`, and
//! reconnection as usual. Identities added during the switch are sent to the old
//! connection when the client falls back to it.
//!
//! Read-only servers: only a session on a read-write server moves this way (a read-only
//! server's session is local to it); a new host that turns out to be read-only is given up,
//! as the client would lose writes there.
//!
//! The old server. Once the new one has taken the session over, the old one answers a
//! write on the old connection with SessionMoved and closes it: nothing is written to it
//! after the drain, so that never happens, and an end of the old connection during the
//! switch only means there is nothing to fall back to (`retiring_closed`). A fallback
//! after the new server did take the session over is the one case where the old connection
//! is stale: its first write makes the old server close it, and the client reconnects as
//! after any failure.
//!
//! The bound on requests in flight (the client's `max_in_flight`) counts the requests that
//! wait for the switch like any other; the drain only frees places (replies arrive, nothing
//! new is sent), so a move cannot deadlock against the bound: callers beyond it wait, as on
//! any slow connection, until the requests that waited are sent and answered.

use super::*;
use crate::move_state::{Move, MoveStage};

impl<T> Session<T> {
    /// Whether new requests must wait: a move is draining the old connection.
    pub(super) fn draining(&self) -> bool {
        matches!(
            self.moving,
            Some(Move {
                stage: MoveStage::Draining,
                ..
            })
        )
    }

    /// Whether the session is between the switch and the new host's answer.
    pub(super) fn switching(&self) -> bool {
        matches!(
            self.moving,
            Some(Move {
                stage: MoveStage::Switching { .. },
                ..
            })
        )
    }

    /// Whether a move may replace a teardown: a session on a read-write server, in use, not
    /// closing, with no persistent watch (see the module's notes).
    pub(super) fn can_move(&self) -> bool {
        matches!(
            self.conn,
            Conn::Open {
                read_only: false,
                ..
            }
        ) && self.seen_read_write
            && self.session_id != 0
            && self.closing.under_way.is_none()
            && !self.watching.registry.has_persistent()
    }

    /// Starts a move to the picker's current host.
    pub(super) fn begin_move(&mut self, from_listed: bool, now: Instant) {
        self.moving = Some(Move {
            to: self.hosts.current(),
            stage: MoveStage::Waiting { retry_at: now },
            attempts: 0,
            from_listed,
        });
        self.dial_spare(now);
    }

    /// Asks the driver for the spare connection.
    fn dial_spare(&mut self, now: Instant) {
        let Some(m) = self.moving.as_mut() else {
            return;
        };
        let to = self.hosts.current();
        let timeout =
            (self.negotiated / self.hosts.host_count() as u32).max(Duration::from_millis(100));
        m.to = to;
        m.stage = MoveStage::Dialing {
            deadline: now + timeout,
        };
        let shuffle = self.shuffle_rng.next_u64();
        let conn = self.connections.open_spare();
        self.events.push_back(Event::ConnectSpare {
            conn,
            host: to,
            timeout,
            shuffle,
        });
    }

    /// The spare connection asked for by [`Event::ConnectSpare`] is open: the old
    /// connection drains, then the session switches to the spare.
    pub(super) fn spare_connected(&mut self, now: Instant) {
        if let Some(m) = self.moving.as_mut() {
            if matches!(m.stage, MoveStage::Dialing { .. }) {
                m.stage = MoveStage::Draining;
                self.try_switch(now);
            }
        }
    }

    /// The spare connection could not be opened, or failed before the switch (it closed,
    /// or sent bytes unasked): the session stays on its connection; `error` is kept as the
    /// reason ([`Session::last_connection_failure`]).
    pub(super) fn spare_failed(&mut self, error: Option<std::io::Error>, now: Instant) {
        if matches!(
            self.moving,
            Some(Move {
                stage: MoveStage::Dialing { .. } | MoveStage::Draining,
                ..
            })
        ) {
            self.events.push_back(Event::DropSpare);
            let reason = ConnectionFailure::CouldNotConnect(error.map(std::sync::Arc::new));
            self.move_failed(reason, false, now);
        }
    }

    /// Bytes from the old connection between the switch ([`Event::UseSpare`]) and its
    /// close: notifications are delivered (the module's notes say why exactly once); ping
    /// replies are ignored; anything else means the old connection is not what it should
    /// be, and it is dropped.
    pub(super) fn retiring_read(&mut self, buf: &mut BytesMut, now: Instant) {
        loop {
            let Some(Move {
                stage:
                    MoveStage::Switching {
                        retiring_alive: true,
                        last_recv,
                        ..
                    },
                ..
            }) = self.moving.as_mut()
            else {
                buf.clear();
                return;
            };
            let len = match check_frame(buf, self.cfg.max_reply_len) {
                Ok(Some(len)) => len,
                Ok(None) => return,
                Err(_) => return self.drop_retiring(buf),
            };
            *last_recv = now;
            let mut frame = buf.split_to(4 + len).freeze();
            let _ = frame.split_to(4);
            let Ok((header, body)) = parse_reply(&frame) else {
                return self.drop_retiring(buf);
            };
            match header.xid {
                xid::NOTIFICATION => {
                    let body = frame.slice_ref(body);
                    if self.notification(&body).is_err() {
                        return self.drop_retiring(buf);
                    }
                }
                xid::PING | xid::SET_WATCHES | xid::AUTH => {}
                _ => return self.drop_retiring(buf),
            }
        }
    }

    /// The old connection closed (or failed) during the switch: the new host's answer
    /// decides alone now.
    pub(super) fn retiring_closed(&mut self, now: Instant) {
        let _ = now;
        if let Some(Move {
            stage: MoveStage::Switching { retiring_alive, .. },
            ..
        }) = self.moving.as_mut()
        {
            *retiring_alive = false;
        }
    }

    fn drop_retiring(&mut self, buf: &mut BytesMut) {
        buf.clear();
        if let Some(Move {
            stage: MoveStage::Switching { retiring_alive, .. },
            ..
        }) = self.moving.as_mut()
        {
            if *retiring_alive {
                *retiring_alive = false;
                self.events.push_back(Event::DropRetiring);
            }
        }
    }

    /// Switches to the spare once the old connection has nothing in flight and nothing
    /// left to write (called after each read, timeout and at the spare's opening).
    pub(super) fn try_switch(&mut self, now: Instant) {
        let Conn::Open { host, .. } = self.conn else {
            return;
        };
        let quiet = self.requests.pending.is_empty()
            && self.auth.pending.is_empty()
            && self.requests.pings.is_empty()
            && self.requests.out.is_empty()
            && self.requests.skip == 0;
        if !self.draining() || !quiet {
            return;
        }
        let to = self.moving.as_ref().map_or(host, |m| m.to);
        if let Some(m) = self.moving.as_mut() {
            m.stage = MoveStage::Switching {
                from: host,
                retiring_alive: true,
                last_recv: self.timers.last_recv,
                last_send: self.timers.last_send,
                auth_sent: self.cfg.auth.len(),
            };
        }
        self.events.push_back(Event::UseSpare);
        self.connections.use_spare();
        self.timers.attempt_timeout = self.connect_timeout();
        self.conn = Conn::Handshaking {
            host: to,
            deadline: now + self.timers.attempt_timeout,
        };
        self.write_connect_request(now);
    }

    /// A move's attempt failed: try again later (or give up, see the module's notes).
    pub(super) fn move_failed(&mut self, reason: ConnectionFailure, give_up: bool, now: Instant) {
        self.last_failure = Some(reason);
        let Some(m) = self.moving.as_mut() else {
            return;
        };
        m.attempts += 1;
        let from_listed = m.from_listed;
        let round_over = m.attempts >= self.hosts.host_count().saturating_sub(1).max(1);
        if (give_up || round_over) && from_listed {
            self.moving = None;
            self.send_waiting(now);
            return;
        }
        let from = match self.conn {
            Conn::Open { host, .. } => Some(host).filter(|_| from_listed),
            _ => None,
        };
        let (mut next, mut delay) = self.hosts.advance(&mut self.rng);
        if Some(next) == from && self.hosts.host_count() > 1 {
            let (again, more) = self.hosts.advance(&mut self.rng);
            next = again;
            delay += more;
        }
        let _ = next;
        if let Some(m) = self.moving.as_mut() {
            m.stage = MoveStage::Waiting {
                retry_at: now + delay,
            };
        }
        // Requests that waited for the switch go out on the old connection meanwhile.
        self.send_waiting(now);
        if delay.is_zero() {
            self.dial_spare(now);
        }
    }

    /// The requests that waited, sent now that the connection is usable.
    pub(super) fn send_waiting(&mut self, now: Instant) {
        if !matches!(self.conn, Conn::Open { .. }) || self.draining() {
            return;
        }
        while let Some(waiting) = self.requests.waiting.pop_front() {
            self.send_waiting_one(waiting, now);
        }
    }

    /// A new host list overtakes the move: the session stays (or, after the switch, goes
    /// back to the old connection, or is suspended if that is gone), and the list decides.
    pub(super) fn abandon_move(&mut self, now: Instant) {
        if self.switching() {
            self.loss_reason = Some(ConnectionFailure::HostsChanged);
            if self.fall_back(now).is_some() {
                self.moving = None;
                self.send_waiting(now);
                return;
            }
            // The old connection is gone: the handshake under way is a plain reconnection.
            self.loss_reason = None;
            self.cancel_move();
            self.timers.disconnected_since = Some(now);
            self.set_state(ConnectionState::Suspended);
            return;
        }
        self.cancel_move();
        self.send_waiting(now);
    }

    /// The switch failed while the old connection is still open: back to it (the caller
    /// says what next, see `move_failed`), with the reason the new connection failed;
    /// `None` (and nothing done) when there is nothing to fall back to.
    pub(super) fn fall_back(&mut self, now: Instant) -> Option<ConnectionFailure> {
        let Some(Move {
            stage:
                MoveStage::Switching {
                    from,
                    retiring_alive: true,
                    last_recv,
                    last_send,
                    auth_sent,
                },
            ..
        }) = self.moving
        else {
            return None;
        };
        if self.closing.under_way.is_some() || now >= last_recv + self.timers.read_timeout {
            // Closing; or the old connection has been silent for the read timeout: it is
            // no healthier than the new one.
            return None;
        }
        // Drop the new connection: only the handshake (and SASL's steps) went out on it.
        self.events.push_back(Event::Disconnect);
        self.events.push_back(Event::RestoreRetiring);
        self.connections.restore_retiring();
        self.requests.out.clear();
        self.auth.sasl = None;
        self.requests.pings.clear();
        let reason = self
            .loss_reason
            .take()
            .unwrap_or(ConnectionFailure::ConnectionLost);
        while let Some(p) = self.requests.pending.pop_front() {
            self.fail(p.token, p.watch, reason.error());
        }
        self.conn = Conn::Open {
            host: from,
            read_only: false,
        };
        self.timers.last_recv = last_recv;
        self.timers.last_send = last_send;
        // Identities added since the switch: the old connection has not seen them.
        self.resend_auth_from(auth_sent, now);
        Some(reason)
    }

    /// Ends a move that a teardown or a close overtakes: the driver drops the spare or the
    /// old connection. Returns whether the session was switching (it was in use: a teardown
    /// then reports `Suspended`).
    pub(super) fn cancel_move(&mut self) -> bool {
        match self.moving.take().map(|m| m.stage) {
            Some(MoveStage::Dialing { .. } | MoveStage::Draining) => {
                self.events.push_back(Event::DropSpare);
                false
            }
            Some(MoveStage::Switching { retiring_alive, .. }) => {
                if retiring_alive {
                    self.events.push_back(Event::DropRetiring);
                }
                // The connection is the new host's now, a host of the list.
                self.off_list = false;
                true
            }
            Some(MoveStage::Waiting { .. }) | None => false,
        }
    }

    /// The new host answered the switch: the old connection goes. Returns whether a move
    /// completed (no state change then); false also when it fell back instead.
    pub(super) fn complete_move(&mut self, host: usize, read_only: bool, now: Instant) -> bool {
        if !self.switching() {
            return false;
        }
        if read_only {
            // Writes would fail there: keep the session where it was.
            self.loss_reason = Some(ConnectionFailure::MoveToReadOnly);
            if let Some(reason) = self.fall_back(now) {
                self.move_failed(reason, true, now);
                return false;
            }
            // The old connection is gone: read-only it is, as after any reconnection to a
            // read-only server (`Suspended`, then `ReadOnly` from `open`).
            self.set_state(ConnectionState::Suspended);
        }
        self.cancel_move();
        self.off_list = false;
        if !read_only {
            self.events.push_back(Event::Moved { host });
        }
        true
    }

    /// The move's timers: the dial's deadline and the next attempt.
    pub(super) fn move_deadline(&self) -> Option<Instant> {
        match self.moving.map(|m| m.stage) {
            Some(MoveStage::Waiting { retry_at }) => Some(retry_at),
            Some(MoveStage::Dialing { deadline }) => Some(deadline),
            _ => None,
        }
    }

    pub(super) fn move_timeout(&mut self, now: Instant) {
        match self.moving.map(|m| m.stage) {
            Some(MoveStage::Waiting { retry_at }) if now >= retry_at => self.dial_spare(now),
            Some(MoveStage::Dialing { deadline }) if now >= deadline => {
                self.events.push_back(Event::DropSpare);
                let timeout = self.connect_timeout();
                self.move_failed(ConnectionFailure::ConnectTimeout(timeout), false, now);
            }
            _ => {}
        }
    }
}
