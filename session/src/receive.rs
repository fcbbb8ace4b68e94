//! Taking frames off the wire: the handshake answer, replies matched to requests,
//! notifications, and the watch bookkeeping a reply implies.

use super::*;
use zkrs_codec::ReplyHeader;

impl<T> Session<T> {
    /// Bytes arrived on the current connection (see [`Session::handle_read`]).
    pub(super) fn current_read(&mut self, buf: &mut BytesMut, now: Instant) {
        loop {
            if !matches!(self.conn, Conn::Handshaking { .. } | Conn::Open { .. }) {
                buf.clear();
                return;
            }
            if self.requests.skip > 0 && !self.skip_reply(buf, now) {
                return;
            }
            let len = match check_frame(buf, self.cfg.max_reply_len) {
                Ok(Some(len)) => len,
                Ok(None) => return,
                Err(DecodeError::FrameTooLarge { len, .. }) => {
                    match self.oversize_reply(buf, len, now) {
                        Ok(true) => continue,
                        Ok(false) => return,
                        Err(e) => {
                            self.protocol_error(now, e);
                            buf.clear();
                            return;
                        }
                    }
                }
                Err(e) => {
                    self.protocol_error(now, Error::from(e));
                    buf.clear();
                    return;
                }
            };
            let mut frame = buf.split_to(4 + len).freeze();
            let _ = frame.split_to(4);
            // Only a reply (a pong included) proves that the server reads what we send; a
            // notification proves only that it writes to us. Counted, notifications kept a
            // connection whose requests vanished (a one-way black hole) open until the
            // server expired the session, and a lock's holder believed on while the next in
            // line, told by the expiry's deletion, already held it (the simulation found it
            // once hand-offs took one notification). The Java client counts every read.
            if frame.get(..4) != Some(&xid::NOTIFICATION.to_be_bytes()[..]) {
                self.timers.last_recv = now;
            }
            if let Err(e) = self.handle_frame(frame, now) {
                self.protocol_error(now, e);
                buf.clear();
                return;
            }
            // A move waits for the old connection's last reply. What is left in `buf` after
            // the switch is the old connection's (see `Event::UseSpare`).
            let switching = self.switching();
            self.try_switch(now);
            if !switching && self.switching() {
                return;
            }
        }
    }

    /// One whole frame: the handshake's answer, or a reply or notification by its xid.
    pub(super) fn handle_frame(&mut self, frame: Bytes, now: Instant) -> Result<(), Error> {
        if let Conn::Handshaking { host, .. } = self.conn {
            if self.auth.sasl.is_some() {
                return self.handle_sasl_reply(&frame, host, now);
            }
            return self.handle_connect_response(&frame, host, now);
        }
        let (header, body) = parse_reply(&frame)?;
        let body = frame.slice_ref(body);
        match header.xid {
            xid::NOTIFICATION => self.notification(&body),
            xid::PING => {
                self.pong(now);
                Ok(())
            }
            xid::SET_WATCHES => match self.requests.set_watches_in_flight.checked_sub(1) {
                Some(left) => {
                    self.requests.set_watches_in_flight = left;
                    Ok(())
                }
                None => Err(Error::protocol(
                    "a SetWatches reply (xid -8) nothing asked for",
                )),
            },
            xid::AUTH => self.auth_reply(header, body),
            _ => self.request_reply(header, body, now),
        }
    }

    /// A ping's answer: a request sent before it and still pending was lost on the way.
    fn pong(&mut self, now: Instant) {
        let mut before = None;
        if let Some((newest_before, sent)) = self.requests.pings.pop_front() {
            before = newest_before;
            self.heard(sent);
        }
        if let Some(lost) = before.filter(|x| self.requests.pending.iter().any(|p| p.xid == *x)) {
            self.loss_reason = Some(ConnectionFailure::LostRequest { xid: lost });
            self.connection_lost(now);
        }
    }

    /// The answer to an identity this connection sent.
    fn auth_reply(&mut self, header: ReplyHeader, body: Bytes) -> Result<(), Error> {
        // Only an identity this connection sent is answered; a failure nothing asked for
        // would otherwise make the session forget one it was given.
        let Some(token) = self.auth.pending.pop_front() else {
            return Err(Error::protocol(format_args!(
                "an AUTH reply (xid -4, {}) nothing asked for",
                header.err
            )));
        };
        let index = self.auth.replies;
        self.auth.replies += 1;
        if header.err.is_ok() {
            if let Some(token) = token {
                self.events.push_back(Event::Reply {
                    token,
                    result: Ok(Reply {
                        zxid: header.zxid,
                        body,
                    }),
                });
            }
        } else {
            // The server closes the connection after a failed auth. Forget the identity so
            // the next connection does not fail the same way forever.
            if index < self.cfg.auth.len() {
                self.cfg.auth.remove(index);
                self.auth.replies -= 1;
            }
            if let Some(token) = token {
                self.events.push_back(Event::Reply {
                    token,
                    result: Err(Error::server(header.err)),
                });
            }
        }
        Ok(())
    }

    /// The reply to the oldest pending request (any other xid is a protocol error).
    fn request_reply(
        &mut self,
        header: ReplyHeader,
        body: Bytes,
        now: Instant,
    ) -> Result<(), Error> {
        let reply_xid = header.xid;
        let Some(front) = self.requests.pending.front() else {
            return Err(Error::protocol(format_args!(
                "reply with xid {reply_xid} but no request is pending"
            )));
        };
        if front.xid != reply_xid {
            return Err(Error::protocol(format_args!(
                "reply with xid {reply_xid} while xid {} was the oldest pending",
                front.xid
            )));
        }
        if header.zxid > 0 {
            self.last_zxid = header.zxid;
        }
        let result = if header.err.is_ok() {
            if let Err(e) = check_reply(front.op, &body) {
                // This request's own reply is malformed: it gets the reason.
                let p = self.requests.pending.pop_front().expect("front exists");
                self.fail(p.token, p.watch, Error::from(e.clone()));
                return Err(Error::from(e));
            }
            Ok(Reply {
                zxid: header.zxid,
                body,
            })
        } else {
            Err(Error::server(header.err))
        };
        let p = self.requests.pending.pop_front().expect("front exists");
        // Any answer, an error too, means the request reached the server: only one for an
        // expired session (or a closing one) would not have touched it.
        if !matches!(
            header.err,
            ErrorCode::SessionExpired | ErrorCode::SessionMoved
        ) {
            self.heard(p.sent);
        }
        self.after_reply(p.watch, header.err, now);
        if self.closing.xid == Some(reply_xid) {
            self.finish_close();
            return Ok(());
        }
        if let Some(token) = p.token {
            self.events.push_back(Event::Reply { token, result });
        }
        Ok(())
    }

    /// A frame of `len` bytes, over the reply limit, starts `buf`. If it is the reply to the
    /// oldest pending request, that request alone fails with `ReplyTooLarge`, and the frame's
    /// bytes are discarded as they come (`skip_reply`), never kept: the connection and every
    /// other request go on. Anything else that large (a notification, a reply to no pending
    /// request, a handshake answer) is a lying length: an error, and the connection drops.
    /// `Ok(true)` when the frame is gone from `buf`, `Ok(false)` when more bytes are needed.
    pub(super) fn oversize_reply(
        &mut self,
        buf: &mut BytesMut,
        len: usize,
        now: Instant,
    ) -> Result<bool, Error> {
        let too_large = || {
            Error::from(DecodeError::FrameTooLarge {
                len,
                max: self.cfg.max_reply_len,
            })
        };
        if !matches!(self.conn, Conn::Open { .. }) {
            return Err(too_large());
        }
        // The reply header (xid, zxid, error code) says whose reply it is.
        let Some(head) = buf.get(4..4 + 16) else {
            return Ok(false);
        };
        let (header, _) = parse_reply(head)?;
        match self.requests.pending.front() {
            Some(p) if p.xid == header.xid && header.xid > 0 => {}
            _ => return Err(too_large()),
        }
        let p = self.requests.pending.pop_front().expect("front exists");
        if header.zxid > 0 {
            self.last_zxid = header.zxid;
        }
        self.heard(p.sent);
        let error = Error::new(
            ErrorKind::ReplyTooLarge,
            format!(
                "the server's reply of {len} bytes exceeds the client's reply limit of {} bytes \
                 (max_reply_len); it was skipped, and the connection goes on",
                self.cfg.max_reply_len
            ),
        );
        // A watch the server may have set is released here: the caller gets no reply to
        // watch through.
        self.fail(p.token, p.watch, error);
        self.requests.skip = 4 + len;
        Ok(self.skip_reply(buf, now))
    }

    /// Discards what `buf` holds of the oversize reply being skipped; true once it is all
    /// gone (the reply then counts as one: the server reads what we send).
    pub(super) fn skip_reply(&mut self, buf: &mut BytesMut, now: Instant) -> bool {
        let n = self.requests.skip.min(buf.len());
        bytes::Buf::advance(buf, n);
        self.requests.skip -= n;
        if self.requests.skip > 0 {
            return false;
        }
        self.timers.last_recv = now;
        true
    }

    /// A notification: the watchers it reaches (a one-shot registration ends with it).
    pub(super) fn notification(&mut self, body: &[u8]) -> Result<(), Error> {
        let event = WatcherEvent::decode_prefix(body)?;
        let path = event.path.unwrap_or_default();
        self.watching.triggered.clear();
        self.watching
            .registry
            .trigger(event.event_type, path, &mut self.watching.triggered);
        for &watcher in &self.watching.triggered {
            self.events.push_back(Event::Watch {
                watcher,
                event: WatchedEvent {
                    event_type: event.event_type,
                    state: event.state,
                    path: path.to_string(),
                },
            });
        }
        Ok(())
    }

    pub(super) fn after_reply(&mut self, watch: Option<WatchOp>, err: ErrorCode, now: Instant) {
        match watch {
            None => {}
            Some(WatchOp::Register {
                kind,
                path,
                watcher,
                group: _,
            }) => {
                let kind = match (kind, err) {
                    (WatchKind::Exist, ErrorCode::Ok) => Some(WatchKind::Data),
                    (WatchKind::Exist, ErrorCode::NoNode) => Some(WatchKind::Exist),
                    (kind, ErrorCode::Ok) => Some(kind),
                    _ => None,
                };
                match kind {
                    Some(kind) if self.watching.forgotten.remove(&watcher) => {
                        // Forgotten while in flight: the server set it, nobody wants it.
                        self.watching.registry.add(kind, &path, watcher);
                        self.forget_registration(watcher, kind, &path, now);
                    }
                    Some(kind) => self.watching.registry.add(kind, &path, watcher),
                    None => {
                        self.watching.forgotten.remove(&watcher);
                        self.events.push_back(Event::WatcherUnused(watcher));
                    }
                }
            }
            Some(WatchOp::Remove { path, watcher_type }) if err.is_ok() => {
                for (watcher, event_type) in self.watching.registry.remove(&path, watcher_type) {
                    self.events.push_back(Event::Watch {
                        watcher,
                        event: WatchedEvent {
                            event_type,
                            state: KeeperState::SyncConnected,
                            path: path.clone(),
                        },
                    });
                }
            }
            Some(WatchOp::Remove { .. }) => {}
        }
    }

    pub(super) fn handle_connect_response(
        &mut self,
        frame: &[u8],
        host: usize,
        now: Instant,
    ) -> Result<(), Error> {
        let (response, read_only) = decode_connect_response(frame)?;
        if response.timeout_ms <= 0 {
            // The server says the session expired (ZooKeeper answers a wrong password the
            // same way: a timeout of 0).
            if self.switching() {
                // Moving: the session is gone for the old connection too.
                self.cancel_move();
                self.timers.disconnected_since = Some(now);
                self.set_state(ConnectionState::Suspended);
            }
            self.loss_reason = Some(if self.ever_connected || self.session_id == 0 {
                ConnectionFailure::SessionExpired
            } else {
                ConnectionFailure::ResumeRefused {
                    session_id: self.session_id,
                }
            });
            self.lose_session();
            self.connection_lost(now);
            return Ok(());
        }
        if response.session_id != self.session_id {
            self.last_heard = None;
        }
        if !read_only {
            // The server touched the session when the ConnectRequest arrived (at creation,
            // or at revalidation of ours); that request left when the handshake began.
            self.last_heard = Some(self.timers.last_send);
        }
        self.session_id = response.session_id;
        self.passwd = Secret::from(response.passwd);
        self.negotiated = sane_timeout(
            self.cfg.session_timeout,
            Duration::from_millis(response.timeout_ms as u64),
        );
        // The Java client's timers: give up reading after 2/3 of the timeout; ping after half
        // of that without sending (and at least every 10 s).
        self.timers.read_timeout = self.negotiated * 2 / 3;
        self.timers.ping_interval = (self.timers.read_timeout / 2).min(Duration::from_secs(10));
        if let Some(mechanism) = &self.cfg.sasl {
            // SASL first: nothing else of the session goes out until it is done.
            let server = self.cfg.host_names.get(host).map_or("", String::as_str);
            let exchange = mechanism.exchange(server);
            self.auth.sasl = Some(sasl::SaslInProgress {
                exchange,
                read_only,
            });
            return self.sasl_step(None, host, now);
        }
        self.open(host, read_only, now);
        Ok(())
    }

    /// A reply during the SASL exchange: the server's next token, or its refusal.
    fn handle_sasl_reply(&mut self, frame: &[u8], host: usize, now: Instant) -> Result<(), Error> {
        let (header, body) = parse_reply(frame)?;
        if header.xid == xid::PING {
            return Ok(());
        }
        match self.requests.pending.front() {
            Some(p) if p.xid == header.xid && p.op == OpCode::Sasl => {}
            _ => {
                return Err(Error::protocol(format_args!(
                    "reply with xid {} during SASL authentication",
                    header.xid
                )))
            }
        }
        self.requests.pending.pop_front();
        if !header.err.is_ok() {
            self.auth_failed(
                SaslError::new(format!(
                    "the server refused SASL authentication ({})",
                    header.err
                )),
                now,
            );
            return Ok(());
        }
        let token = SetSaslResponse::decode_prefix(body)?.token;
        self.sasl_step(Some(token), host, now)
    }

    /// Feeds the mechanism and sends what it answers; opens the session when it is done.
    fn sasl_step(
        &mut self,
        server_token: Option<&[u8]>,
        host: usize,
        now: Instant,
    ) -> Result<(), Error> {
        let Some(in_progress) = self.auth.sasl.as_mut() else {
            return Ok(());
        };
        match in_progress.exchange.step(server_token) {
            Ok(SaslStep::Send(token)) => {
                let mut frame = BytesMut::new();
                encode_request(
                    &mut frame,
                    0,
                    OpCode::Sasl,
                    &GetSaslRequest { token: &token },
                );
                self.send_frame(&frame, OpCode::Sasl, None, None, now);
                // Each step gets the read timeout to be answered.
                if let Conn::Handshaking { deadline, .. } = &mut self.conn {
                    *deadline = now + self.timers.read_timeout;
                }
                Ok(())
            }
            Ok(SaslStep::Done) => {
                let read_only = in_progress.read_only;
                self.auth.sasl = None;
                self.open(host, read_only, now);
                Ok(())
            }
            Err(why) => {
                self.auth_failed(why, now);
                Ok(())
            }
        }
    }

    /// SASL failed: nothing will fix it by retrying, so the client stops (the Java client's
    /// `AUTH_FAILED`): every request fails with `AuthFailed`, then the client closes.
    pub(super) fn auth_failed(&mut self, why: SaslError, now: Instant) {
        let mechanism = self
            .cfg
            .sasl
            .as_ref()
            .map_or("SASL", |m| m.name())
            .to_string();
        let detail = format!("{mechanism} authentication failed");
        if self.switching() {
            // A move's new host refused: the old connection is authenticated; stay there.
            self.loss_reason = Some(ConnectionFailure::AuthFailed {
                mechanism: mechanism.clone(),
                cause: why.clone(),
            });
            if let Some(reason) = self.fall_back(now) {
                self.move_failed(reason, true, now);
                return;
            }
        }
        self.auth.sasl = None;
        self.last_failure = Some(ConnectionFailure::AuthFailed {
            mechanism,
            cause: why.clone(),
        });
        self.auth.failure = Some(why.clone());
        let error = || {
            Error::auth_failed()
                .with_detail(detail.clone())
                .with_source(why.clone())
        };
        while let Some(p) = self.requests.pending.pop_front() {
            self.fail(p.token, p.watch, error());
        }
        self.fail_waiting(error);
        self.set_state(ConnectionState::AuthFailed);
        self.finish_close();
    }

    /// The session is usable on this connection: identities, watches, then the requests
    /// that waited, in the Java client's order.
    fn open(&mut self, host: usize, read_only: bool, now: Instant) {
        // A move ends here: the old connection is closed before anything else is written
        // to this one (`moving.rs`), and nothing is reported (the session was never
        // suspended), unless it fell back to the old connection instead.
        let moving = self.switching();
        let moved = moving && self.complete_move(host, read_only, now);
        if moving && !moved && matches!(self.conn, Conn::Open { .. }) {
            return;
        }
        self.off_list = false;
        self.conn = Conn::Open { host, read_only };
        self.seen_read_write |= !read_only;
        self.timers.disconnected_since = None;
        self.opened_at = Some(now);
        self.timers.rw_probe =
            read_only.then(|| (now + Duration::from_millis(100), Duration::from_millis(100)));

        // In the Java client's order: identities, then watches, then the queued requests.
        self.auth.replies = 0;
        self.requests.set_watches_in_flight = 0;
        self.resend_auth_from(0, now);
        self.reregister_watches(now);
        while let Some(waiting) = self.requests.waiting.pop_front() {
            self.send_waiting_one(waiting, now);
        }

        let state = if read_only {
            ConnectionState::ReadOnly
        } else if !self.ever_connected {
            ConnectionState::Connected
        } else {
            ConnectionState::Reconnected
        };
        self.ever_connected = true;
        if !moved || read_only {
            self.set_state(state);
        }
    }
}

/// The least negotiated timeout taken as it comes. A ZooKeeper server grants at least two
/// ticks, and no tick is this short in practice; below it the read timeout and the ping
/// interval (two thirds and a third of it) would turn into a reconnect loop.
const MIN_NEGOTIATED: Duration = Duration::from_millis(100);

/// The most a server may grant beyond what was asked. A server grants more than asked only
/// up to its minimum (two ticks: 4 s with the default tick, 2 min with a one-minute tick);
/// a timeout of days would leave a dead server unnoticed for days. Taking less than granted
/// is the safe side: the client pings more often and declares the session lost sooner.
const MAX_GRANTED_BEYOND_ASKED: Duration = Duration::from_secs(120);

/// The timeout the session runs on, from what it asked for and what the server granted.
fn sane_timeout(asked: Duration, granted: Duration) -> Duration {
    granted
        .min(asked.max(MAX_GRANTED_BEYOND_ASKED))
        .max(MIN_NEGOTIATED)
}
