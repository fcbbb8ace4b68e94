//! Running a script: one action per step, a host-list change, and the end (close, then every
//! timer run out).

use std::collections::HashSet;
use std::time::Duration;

use bytes::BytesMut;

use crate::Conn;

use super::harness::Harness;

const ACTIONS: [&str; 16] = [
    "submit",
    "raw server bytes",
    "server reply",
    "server connect response",
    "server notification",
    "time passes",
    "handle_timeout",
    "handle_connected",
    "handle_closed",
    "handle_closed with an error",
    "close",
    "forget_watcher",
    "add_auth",
    "handle_read_write_found",
    "stall / partial write",
    "server reply in two reads",
];

impl<'a> Harness<'a> {
    pub(super) fn step(&mut self) {
        let action = self.input.byte();
        if let Some(trace) = &mut self.trace {
            trace.push(format!(
                "{:>9.3?} action {action:#04x} ({}), next bytes {:02x?}",
                self.now - self.t0,
                ACTIONS[usize::from(action % 16)],
                &self.input.0[..self.input.0.len().min(4)]
            ));
        }
        match action % 16 {
            0 => self.submit(),
            1 => {
                let n = usize::from(self.input.byte() % 64);
                let bytes = self.input.bytes(n);
                // What the client reads next is no longer the modelled server's reply.
                self.server.raw_bytes = self.server.raw_bytes || n > 0;
                self.feed(bytes);
            }
            2 => self.server_reply(None),
            3 => self.server_connect_response(),
            4 => self.server_notification(),
            5 => self.advance_time(),
            6 => self.s.handle_timeout(self.now),
            7 => {
                let was_connecting = matches!(self.s.conn, Conn::Connecting { .. });
                self.s.handle_connected(self.current_conn, self.now);
                if was_connecting {
                    self.rx.clear();
                    self.server.reset_connection(true);
                }
            }
            8 => self.s.handle_closed(self.current_conn, None, self.now),
            9 => {
                let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
                self.s
                    .handle_closed(self.current_conn, Some(reset), self.now)
            }
            10 => {
                let token = (action & 0x10 != 0).then(|| self.token());
                self.internal_sends += 1;
                self.s.close(token, self.now);
            }
            11 => {
                if !self.watchers.is_empty() {
                    let i = usize::from(self.input.byte()) % self.watchers.len();
                    let watcher = self.watchers[i].0;
                    self.forgotten.insert(watcher);
                    self.internal_sends += 1;
                    self.s.forget_watcher(watcher, self.now);
                }
            }
            12 => {
                let token = (action & 0x10 != 0).then(|| self.token());
                self.s
                    .add_auth("digest".into(), b"other:pw".into(), token, self.now);
            }
            13 if self.host_updates && action & 0x80 != 0 => self.move_step(),
            13 if self.host_updates && action & 0x20 != 0 => self.update_hosts(),
            13 if self.host_updates && action & 0x40 != 0 => self.s.detach(),
            13 => {
                let host = usize::from(self.input.byte()) % self.host_count;
                if !(self.tolerate.read_write_found && self.s.closing.under_way.is_some()) {
                    self.s.handle_read_write_found(host, self.now);
                    // Its events are checked now, while the double Connect is tolerated.
                    self.double_connect_ok = self.tolerate.read_write_found;
                    self.after_step();
                    self.double_connect_ok = false;
                }
            }
            14 => {
                if self.stalled {
                    let n = usize::from(self.input.u16());
                    self.transmit(n);
                }
                self.stalled = !self.stalled;
            }
            _ => {
                let at = usize::from(self.input.byte());
                self.server_reply(Some(at));
            }
        }
        self.after_step();
    }

    /// A new host list of 1 to 4 hosts, each either one of the current hosts (at most once)
    /// or a new one.
    pub(super) fn update_hosts(&mut self) {
        let count = 1 + usize::from(self.input.byte() % 4);
        let mut used = HashSet::new();
        let kept: Vec<Option<usize>> = (0..count)
            .map(|_| {
                let old = usize::from(self.input.byte()) % (self.host_count + 1);
                (old < self.host_count && used.insert(old)).then_some(old)
            })
            .collect();
        let names = (0..count).map(|i| format!("host-{i}")).collect();
        self.s
            .update_hosts(&kept, names, crate::HostChange::Rebalance, self.now);
        // Checked against the new list from now on (events are drained after the step).
        self.host_count = count;
    }

    /// A step of a move's other connections (called whether or not one is under way: the
    /// core must ignore what does not apply).
    pub(super) fn move_step(&mut self) {
        match self.input.byte() % 4 {
            0 => self.s.handle_connected(self.spare_conn, self.now),
            1 => self.s.handle_closed(self.spare_conn, None, self.now),
            2 => {
                // A notification on the old connection during the switch.
                let b = self.input.byte();
                let frame = super::actions::notification_frame(b);
                let mut rx = match &mut self.retiring {
                    Some((_, rx)) => std::mem::take(rx),
                    None => BytesMut::new(),
                };
                rx.extend_from_slice(&frame);
                self.s.handle_read(self.retiring_conn, &mut rx, self.now);
                if let Some((_, kept)) = &mut self.retiring {
                    *kept = rx;
                }
            }
            _ => self.s.handle_closed(self.retiring_conn, None, self.now),
        }
    }

    /// Closes the session and lets every timer run out: every token must be answered.
    pub(super) fn finish(&mut self) {
        if let Some(trace) = &mut self.trace {
            trace.push("end of script: close(), then 30 days pass".into());
        }
        self.stalled = false;
        let token = self.token();
        self.internal_sends += 1;
        self.s.close(Some(token), self.now);
        self.after_step();
        self.now += Duration::from_secs(60 * 60 * 24 * 30);
        self.s.handle_timeout(self.now);
        self.after_step();
        self.s.handle_closed(self.current_conn, None, self.now);
        self.after_step();
        assert!(self.closed, "close() and a month did not close the session");
        assert_eq!(self.s.poll_timeout(), None, "a timer after Closed");
        if self.tolerate.add_auth_token_leak {
            for (_, token) in &self.s.auth.later {
                self.outstanding.remove(token);
            }
        }
        if self.tolerate.submitted_close_session_token_leak {
            for token in &self.close_session_tokens {
                self.outstanding.remove(token);
            }
        }
        let mut left: Vec<_> = self.outstanding.iter().copied().collect();
        left.sort_unstable();
        assert!(left.is_empty(), "tokens never answered: {left:?}");
        // Every watcher ends: unused, or told something (at worst that the session closed).
        for &(w, _) in &self.watchers {
            assert!(
                self.forgotten.contains(&w)
                    || self.unused.contains(&w)
                    || self.notified.contains(&w),
                "watcher {w} was neither used nor released"
            );
        }
    }
}
