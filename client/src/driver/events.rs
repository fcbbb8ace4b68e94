//! The driver's reaction to each event of the session core: one `match` naming every event,
//! so an event added to the core is a compile error here, and one small method per event.

use super::*;

impl Driver {
    /// Acts on everything the core said. Returns true when the session is closed.
    pub(super) fn process_events(&mut self) -> bool {
        while let Some(event) = self.session.poll_event() {
            // Every event, by name: one added to the core is a compile error here.
            match event {
                Event::Connect {
                    conn,
                    host,
                    timeout,
                    shuffle,
                } => self.on_connect(conn, host, timeout, shuffle),
                Event::Disconnect => self.on_disconnect(),
                Event::ConnectSpare {
                    conn,
                    host,
                    timeout,
                    shuffle,
                } => self.on_connect_spare(conn, host, timeout, shuffle),
                Event::DropSpare => self.on_drop_spare(),
                Event::UseSpare => self.on_use_spare(),
                Event::DropRetiring => self.on_drop_retiring(),
                Event::RestoreRetiring => self.on_restore_retiring(),
                Event::Moved { host } => self.on_moved(host),
                Event::ProbeReadWrite { host } => self.on_probe_read_write(host),
                Event::Reply { token, result } => self.on_reply(token, result),
                Event::Watch { watcher, event } => self.on_watch(watcher, event),
                Event::WatcherUnused(watcher) => {
                    self.sinks.remove(&watcher);
                }
                Event::State(change) => self.on_state(change),
                Event::Closed => {
                    self.transport = None;
                    return true;
                }
            }
        }
        false
    }

    /// Opens a connection to `host`, after asking the host provider (if any) for the hosts.
    fn on_connect(&mut self, conn: ConnId, host: usize, timeout: Duration, shuffle: u64) {
        self.host = host;
        let fresh = std::mem::take(&mut self.provider.fresh);
        match self.provider.shared.clone() {
            Some(provider) if !fresh => {
                self.provider.pending = Some((conn, timeout, shuffle));
                self.connecting = Some(Box::pin(
                    async move { Attempted::Hosts(provider.ask().await) },
                ));
            }
            _ => self.start_connect(conn, host, timeout, shuffle),
        }
    }

    /// Drops the connection (or the attempt), keeping the core's reason for the handles.
    fn on_disconnect(&mut self) {
        self.transport = None;
        self.connecting = None;
        self.release_burst_capacity();
        let failure = self.session.last_connection_failure().cloned();
        let mut shared = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        shared.diagnosis.connection_ended(failure);
    }

    /// Opens a move's spare connection to `host`.
    fn on_connect_spare(&mut self, conn: ConnId, host: usize, timeout: Duration, shuffle: u64) {
        let (name, port) = self.hosts[host].clone();
        crate::__log!(info, host = %format_args!("{name}:{port}"), "moving the session to another host: connecting there first");
        self.moving.spare_host = host;
        let connector = self.connector.clone();
        self.moving.spare_connecting = Some(Box::pin(async move {
            Attempted::Connected(
                conn,
                crate::resolve::connect_host(&connector, &name, port, timeout, shuffle).await,
            )
        }));
    }

    fn on_drop_spare(&mut self) {
        if let Some(failure) = self.session.last_connection_failure() {
            crate::__log!(info, error = %failure, "the session stays on its host for now");
            let _ = failure;
        }
        self.moving.spare = None;
        self.moving.spare_connecting = None;
    }

    /// Switches to the spare; the old connection is only read from now on.
    fn on_use_spare(&mut self) {
        // The old connection's unread bytes stay with it.
        self.moving.retiring = self.transport.take();
        self.transport = self.moving.spare.take();
        self.moving.retiring_buf =
            std::mem::replace(&mut self.read_buf, BytesMut::with_capacity(READ_RESERVE));
        self.host = self.moving.spare_host;
        if let Some(old) = &self.moving.retiring {
            let now = crate::clock::now();
            self.session
                .handle_read(old.conn, &mut self.moving.retiring_buf, now);
        }
    }

    fn on_drop_retiring(&mut self) {
        self.moving.retiring = None;
        self.moving.retiring_buf = BytesMut::new();
    }

    /// Goes back to the old connection, the move abandoned.
    fn on_restore_retiring(&mut self) {
        self.transport = self.moving.retiring.take();
        self.read_buf = std::mem::take(&mut self.moving.retiring_buf);
        if let Some(host) = self.session.current_host() {
            self.host = host;
        }
        if let Some(failure) = self.session.last_connection_failure() {
            crate::__log!(info, error = %failure, "could not move the session: it stays on its host for now");
            let _ = failure;
        }
    }

    fn on_moved(&mut self, host: usize) {
        self.host = host;
        self.metrics.session_moved();
        let (name, port) = &self.hosts[host];
        crate::__log!(info, host = %format_args!("{name}:{port}"), session = %format_args!("{:#x}", self.last_session), "session moved to another host, never suspended");
        let _ = (name, port);
    }

    /// Asks `host` in the background whether it serves writes.
    fn on_probe_read_write(&mut self, host: usize) {
        let (name, port) = self.hosts[host].clone();
        let found = self.probe.tx.clone();
        let connector = self.connector.clone();
        tokio::spawn(async move {
            if is_read_write(&connector, &name, port).await {
                let _ = found.send(host);
            }
        });
    }

    /// Hands a reply to its caller (recorded first, in a simulation).
    fn on_reply(&mut self, token: ReplyTx, result: Result<Reply, crate::Error>) {
        if let (Some((recorder, _)), Some(id)) = (&self.recorder, token.recorded) {
            let answer = match &result {
                Ok(reply) => Answer::Ok {
                    zxid: reply.zxid,
                    body: &reply.body,
                },
                Err(e) => Answer::Err(e),
            };
            let session = self.session.session_id();
            recorder.record(Recorded::Answered {
                id,
                session,
                answer,
            });
        }
        // The caller may have stopped waiting (dropped its future): fine.
        token.send(result);
    }

    /// Sends a notification to the receiver of `watcher`; forgets a watcher nobody hears.
    fn on_watch(&mut self, watcher: WatcherId, raw: WatchedEvent) {
        self.metrics.watch_event();
        let event = WatchedEvent::new(raw.event_type, raw.state, self.chroot.to_client(&raw.path));
        // The core says who hears what (a group hears a notification once).
        let (delivered, reached) = match self.sinks.get(&watcher) {
            Some(WatchSink::Stream(tx)) => {
                let sent = tx.send(Ok(event));
                (sent, sent)
            }
            Some(WatchSink::Once(_) | WatchSink::Group(_)) => {
                let reached = match self.sinks.remove(&watcher) {
                    Some(WatchSink::Once(tx)) => tx.send(event).is_ok(),
                    Some(WatchSink::Group(tx)) => tx.send(event).is_ok(),
                    Some(WatchSink::Stream(_)) | None => false,
                };
                (true, reached)
            }
            None => (true, false),
        };
        if let (Some((recorder, _)), true) = (&self.recorder, reached) {
            recorder.record(Recorded::Delivered {
                watcher: watcher.get(),
                session: self.session.session_id(),
                event_type: raw.event_type,
                state: raw.state,
                path: &raw.path,
            });
        }
        if !delivered {
            self.sinks.remove(&watcher);
            self.session.forget_watcher(watcher, crate::clock::now());
        }
    }

    /// Tells the handles of a state change, with what they report about it.
    fn on_state(&mut self, change: StateChange) {
        self.log_state(change);
        if change.state.is_connected() {
            self.metrics.connected();
        } else if change.state == ConnectionState::Lost {
            self.metrics.session_expired();
        }
        let mut shared = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        if change.state.is_connected() {
            shared.diagnosis.session_established();
        }
        shared.password = if change.session_id != 0 {
            self.session.session_password().clone()
        } else {
            zkrs_codec::Secret::default()
        };
        if matches!(
            change.state,
            ConnectionState::AuthFailed | ConnectionState::Lost
        ) {
            // Before anyone hears of it: connect() reports this reason.
            shared.diagnosis.session_refused(
                self.session.last_connection_failure().cloned(),
                self.session.auth_failure().cloned(),
            );
        }
        shared.current = change;
        shared.negotiated_timeout = self.session.negotiated_timeout();
        self.heard = self.session.last_heard();
        shared.last_heard = self.heard;
        shared.subscribers.send(change);
    }
}
