//! The connection's and the session's lifecycle: starting an attempt, tearing a connection
//! down, losing the session, closing.

use super::*;

/// The shortest time a connection attempt is given, however little is left.
const MIN_ATTEMPT: Duration = Duration::from_millis(100);

impl<T> Session<T> {
    /// When the client itself declares the session lost: disconnected for longer than the
    /// session timeout (only while there is a session to lose; `poll_timeout` and
    /// `handle_timeout` must agree, or the driver would spin on a deadline in the past).
    pub(super) fn expiry_deadline(&self) -> Option<Instant> {
        match self.timers.disconnected_since {
            Some(since) if self.session_id != 0 => Some(since + self.negotiated),
            _ => None,
        }
    }

    /// When the oldest request waiting for a connection has waited the session timeout
    /// (`None` while a connection is open: the queue is then sent, not waiting).
    pub(super) fn waiting_deadline(&self) -> Option<Instant> {
        match (self.conn, self.requests.waiting.front()) {
            (Conn::Open { .. }, _) | (_, None) => None,
            (_, Some(waiting)) => Some(waiting.since + self.negotiated),
        }
    }

    /// Fails the requests that have waited the session timeout for a connection. While the
    /// session lives, expiry comes first (it fails them all); this bounds the wait once the
    /// session is gone and no server answers, where a request would otherwise wait for a new
    /// session however long that takes. The Java client fails its queue at each failed
    /// connection attempt; the session timeout is the bound a caller already reasons with.
    pub(super) fn fail_stale_waiting(&mut self, now: Instant) {
        while let Some(deadline) = self.waiting_deadline() {
            if now < deadline {
                break;
            }
            let Some(Waiting { request, .. }) = self.requests.waiting.pop_front() else {
                break;
            };
            let mut detail = format!(
                "no connection to a server within the session timeout ({} ms)",
                self.negotiated.as_millis()
            );
            if let Some(failure) = &self.last_failure {
                use std::fmt::Write as _;
                let _ = write!(detail, "; last attempt: {failure}");
            }
            let error = Error::connection_loss().with_detail(detail);
            self.fail(Some(request.token), request.watch, error);
        }
    }

    /// How long one attempt (TCP connection and handshake) may take. The Java client's
    /// rule: a host gets its share of the session timeout.
    pub(super) fn connect_timeout(&self) -> Duration {
        (self.negotiated / self.hosts.host_count() as u32).max(MIN_ATTEMPT)
    }

    /// How long the attempt starting `now` may take: the host's share of the session timeout,
    /// and while a session waits to be resumed, at most half of what is left of its life, so
    /// that one attempt cannot use it all up. With one host the share is the whole timeout,
    /// and a server may leave a connection unanswered: ZooKeeper 3.8 accepts connections
    /// before it serves, and one whose ConnectRequest arrives then is neither answered nor
    /// closed (`readLength` refuses it, and the close fails on the database not loaded yet,
    /// before the socket is closed). Waiting the whole share for that answer reported a
    /// session lost that a second attempt would have kept.
    pub(super) fn attempt_timeout(&self, now: Instant) -> Duration {
        let share = self.connect_timeout();
        match self.expiry_deadline() {
            Some(expiry) => share.min((expiry.saturating_duration_since(now) / 2).max(MIN_ATTEMPT)),
            None => share,
        }
    }

    pub(super) fn start_connect(&mut self, now: Instant) {
        let host = self.hosts.current();
        let timeout = self.attempt_timeout(now);
        self.timers.attempt_timeout = timeout;
        self.conn = Conn::Connecting {
            host,
            deadline: now + timeout,
        };
        let shuffle = self.shuffle_rng.next_u64();
        let conn = self.connections.open_current();
        self.events.push_back(Event::Connect {
            conn,
            host,
            timeout,
            shuffle,
        });
    }

    /// The server sent bytes that make no sense: drop the connection. Requests in flight
    /// get ConnectionLoss (their outcome is unknown); only a request whose own reply was
    /// malformed gets the decoding error, where it is answered (`handle_frame`).
    pub(super) fn protocol_error(&mut self, now: Instant, error: Error) {
        self.loss_reason = Some(ConnectionFailure::MalformedFrame(std::sync::Arc::new(
            error,
        )));
        self.connection_lost(now);
    }

    /// The connection is gone (or must go): fail what was in flight, tell the driver, and
    /// plan the next attempt.
    pub(super) fn connection_lost(&mut self, now: Instant) {
        // A move's new connection failed: back to the old one if it is still open.
        if let Some(reason) = self.fall_back(now) {
            self.move_failed(reason, false, now);
            return;
        }
        // A connection counts as working once it has lived as long as the longest wait
        // between attempts: one the server grants and then drops at once is an attempt that
        // failed, or a flapping server would meet a reconnect every 50-100 ms from every
        // client instead of the capped back-off.
        if let Some(opened) = self.opened_at.take() {
            if now.saturating_duration_since(opened) >= self.cfg.backoff_max {
                self.hosts.connected();
            }
        }
        if self.tear_down(now) {
            let (_, delay) = self.hosts.advance(&mut self.rng);
            self.schedule_connect(now, delay);
        }
    }

    /// Tears the connection down: fails what was in flight and tells the driver. Returns
    /// false when that finished a close (nothing more may happen then).
    pub(super) fn tear_down(&mut self, now: Instant) -> bool {
        // A move it overtakes ends (the session was in use while switching hosts).
        let switching = self.cancel_move();
        self.off_list = false;
        let was_open = matches!(self.conn, Conn::Open { .. }) || switching;
        let active = matches!(
            self.conn,
            Conn::Connecting { .. } | Conn::Handshaking { .. } | Conn::Open { .. }
        );
        if active {
            self.events.push_back(Event::Disconnect);
        }
        self.requests.out.clear();
        self.requests.skip = 0;
        self.auth.sasl = None;
        self.requests.pings.clear();
        self.requests.set_watches_in_flight = 0;
        // In flight: may or may not have been applied. Never re-sent.
        let reason = self.loss_reason.take();
        if active {
            self.last_failure = Some(reason.clone().unwrap_or(ConnectionFailure::ConnectionLost));
        }
        let loss = || match &reason {
            Some(why) => why.error(),
            None => Error::connection_loss(),
        };
        while let Some(p) = self.requests.pending.pop_front() {
            self.fail(p.token, p.watch, loss());
        }
        for token in self.auth.pending.drain(..).flatten() {
            self.events.push_back(Event::Reply {
                token,
                result: Err(loss()),
            });
        }
        self.timers.rw_probe = None;
        self.release_burst_capacity();
        if self.closing.under_way.is_some() {
            self.finish_close();
            return false;
        }
        if was_open {
            self.timers.disconnected_since = Some(now);
            self.set_state(ConnectionState::Suspended);
        }
        self.conn = Conn::Idle { retry_at: now };
        true
    }

    /// Hands back what a burst made the connection's buffers and queues grow to, keeping
    /// [`KEEP_OUT`] bytes and [`KEEP_QUEUED`] entries. Run at each teardown and handshake
    /// (rare, and the queues are then empty or nearly so): without it a long-lived client
    /// holds the largest burst it ever saw for the rest of its life.
    pub(super) fn release_burst_capacity(&mut self) {
        if self.requests.out.capacity() > KEEP_OUT {
            self.requests.out = BytesMut::with_capacity(KEEP_OUT);
        }
        self.requests.pending.shrink_to(KEEP_QUEUED);
        self.requests.pings.shrink_to(KEEP_QUEUED);
        self.auth.pending.shrink_to(KEEP_QUEUED);
        self.requests.waiting.shrink_to(KEEP_QUEUED);
        self.events.shrink_to(KEEP_QUEUED);
        self.watching.triggered.shrink_to(KEEP_QUEUED);
        self.watching.forgotten.shrink_to(KEEP_QUEUED);
        self.watching.registry.shrink_to(KEEP_QUEUED);
        self.watching.watchers.shrink_to(KEEP_QUEUED);
    }

    /// The next attempt, after `delay`.
    pub(super) fn schedule_connect(&mut self, now: Instant, delay: Duration) {
        self.conn = Conn::Idle {
            retry_at: now + delay,
        };
        if delay.is_zero() {
            self.start_connect(now);
        }
    }

    /// The session is gone: everything tied to it fails, and the next connection starts a
    /// new one.
    pub(super) fn lose_session(&mut self) {
        self.session_id = 0;
        self.passwd = Secret::new(vec![0; 16]);
        self.timers.disconnected_since = None;
        self.last_heard = None;
        self.fail_waiting(Error::session_expired);
        let expired = WatchedEvent {
            event_type: EventType::None,
            state: KeeperState::Expired,
            path: String::new(),
        };
        for watcher in self.watching.registry.drain() {
            self.events.push_back(Event::Watch {
                watcher,
                event: expired.clone(),
            });
        }
        self.set_state(ConnectionState::Lost);
    }

    pub(super) fn fail_waiting(&mut self, error: impl Fn() -> Error) {
        while let Some(Waiting { request, .. }) = self.requests.waiting.pop_front() {
            self.fail(Some(request.token), request.watch, error());
        }
    }

    /// Answers a request that will get no reply, and releases its watcher.
    pub(super) fn fail(&mut self, token: Option<T>, watch: Option<WatchOp>, error: Error) {
        if let Some(WatchOp::Register { watcher, .. }) = watch {
            self.watching.forgotten.remove(&watcher);
            self.events.push_back(Event::WatcherUnused(watcher));
        }
        if let Some(token) = token {
            self.events.push_back(Event::Reply {
                token,
                result: Err(error),
            });
        }
    }

    pub(super) fn finish_close(&mut self) {
        if self.conn == Conn::Closed {
            return;
        }
        self.cancel_move();
        if matches!(
            self.conn,
            Conn::Connecting { .. } | Conn::Handshaking { .. } | Conn::Open { .. }
        ) {
            self.events.push_back(Event::Disconnect);
        }
        self.conn = Conn::Closed;
        self.requests.out.clear();
        self.auth.sasl = None;
        while let Some(p) = self.requests.pending.pop_front() {
            self.fail(p.token, p.watch, Error::closed());
        }
        self.fail_waiting(Error::closed);
        let later = self.auth.later.drain(..).map(|(_, token)| token);
        for token in self.auth.pending.drain(..).flatten().chain(later) {
            self.events.push_back(Event::Reply {
                token,
                result: Err(Error::closed()),
            });
        }
        let closed = WatchedEvent {
            event_type: EventType::None,
            state: KeeperState::Closed,
            path: String::new(),
        };
        for watcher in self.watching.registry.drain() {
            self.events.push_back(Event::Watch {
                watcher,
                event: closed.clone(),
            });
        }
        self.session_id = 0;
        self.timers.disconnected_since = None;
        self.set_state(ConnectionState::Closed);
        let done = Reply {
            zxid: self.last_zxid,
            body: Bytes::new(),
        };
        if let Some((Some(token), _)) = self.closing.under_way.take() {
            self.events.push_back(Event::Reply {
                token,
                result: Ok(done.clone()),
            });
        }
        for token in self.closing.extra_tokens.drain(..) {
            self.events.push_back(Event::Reply {
                token,
                result: Ok(done.clone()),
            });
        }
        self.events.push_back(Event::Closed);
    }

    pub(super) fn set_state(&mut self, state: ConnectionState) {
        if self.state != state {
            self.state = state;
            self.events.push_back(Event::State(StateChange {
                state,
                session_id: self.session_id,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zkrs_codec::{jute, write_frame, PathWatchRequest};

    /// A session whose handshake is done, on one host.
    fn open_session(now: Instant) -> Session<u32> {
        let mut s = Session::new(SessionConfig::new(1, Duration::from_secs(10)), now);
        let conn = s.connections.by_role().0.expect("a connection asked for");
        s.handle_connected(conn, now);
        let sent = s.poll_transmit().len();
        s.advance_transmit(sent);
        let mut reply = BytesMut::new();
        write_frame(&mut reply, |buf| {
            jute::put_i32(buf, 0);
            jute::put_i32(buf, 10_000);
            jute::put_i64(buf, 0x1234);
            jute::put_buffer(buf, &[0xAB; 16]);
            jute::put_bool(buf, false);
        });
        s.handle_read(conn, &mut reply, now);
        while s.poll_event().is_some() {}
        assert!(matches!(s.conn, Conn::Open { .. }));
        s
    }

    #[test]
    fn a_teardown_hands_back_what_a_burst_grew() {
        let now = Instant::now();
        let mut s = open_session(now);
        let path = "/a-path-long-enough-to-fill-the-output-buffer-quickly";
        for token in 0..5_000 {
            let mut frame = BytesMut::new();
            encode_request(
                &mut frame,
                0,
                OpCode::GetData,
                &PathWatchRequest { path, watch: false },
            );
            s.submit(
                Request {
                    frame,
                    op: OpCode::GetData,
                    token,
                    watch: None,
                },
                now,
            );
        }
        assert!(
            s.requests.out.capacity() > KEEP_OUT && s.requests.pending.capacity() > KEEP_QUEUED
        );

        let conn = s.connections.by_role().0.expect("a connection");
        s.handle_closed(conn, None, now);
        let failed = std::iter::from_fn(|| s.poll_event())
            .filter(|e| matches!(e, Event::Reply { result: Err(_), .. }))
            .count();
        assert_eq!(failed, 5_000, "every request in flight is answered");
        assert!(
            s.requests.out.capacity() <= KEEP_OUT,
            "{}",
            s.requests.out.capacity()
        );
        assert!(
            s.requests.pending.capacity() <= 2 * KEEP_QUEUED,
            "{}",
            s.requests.pending.capacity()
        );
        // The failed replies were still queued at the teardown; the next handshake finds
        // the queue drained.
        let next = s.poll_timeout().expect("a reconnection is planned");
        s.handle_timeout(next);
        while s.poll_event().is_some() {}
        let conn = s.connections.by_role().0.expect("a connection asked for");
        s.handle_connected(conn, next);
        assert!(
            s.events.capacity() <= 2 * KEEP_QUEUED,
            "{}",
            s.events.capacity()
        );
    }
}
