//! The script's actions that take arguments: requests submitted, server replies, connect
//! responses and notifications, time passing.

use std::time::Duration;

use bytes::BytesMut;
use zkrs_codec::{
    encode_header_only, encode_request, jute, write_frame, Acl, AddWatchMode, AddWatchRequest,
    CreateMode, CreateRequest, Encode, ErrorCode, KeeperState, List, MultiList, MultiRequest,
    OpCode, PathRecord, PathVersionRequest, PathWatchRequest, SetDataRequest, WatcherEvent,
    WatcherType, WatchesRequest,
};

use crate::{Request, WatchKind, WatchOp, WatcherGroup};

use super::harness::Harness;
use super::server::{reply_frame, valid_body, ERRORS, EVENT_TYPES};

const PATHS: [&str; 5] = ["/", "/a", "/a/b", "/c", "/a/b/c"];

impl<'a> Harness<'a> {
    /// Submits a request the input picks (an opcode, a path, maybe a watch), and sweeps the
    /// abandoned watchers after one that registers a watch.
    pub(super) fn submit(&mut self) {
        let b = self.input.byte();
        let path = PATHS[usize::from(self.input.byte()) % PATHS.len()];
        let watch = b & 0x10 != 0;
        let (op, reg) = pick_op(b, watch);
        let watcher_type = [
            WatcherType::Children,
            WatcherType::Data,
            WatcherType::Any,
            WatcherType::Persistent,
            WatcherType::PersistentRecursive,
        ][usize::from(b >> 5) % 5];
        let mut frame = BytesMut::new();
        encode(&mut frame, op, path, watch, reg, watcher_type);
        let watch_op = self.watch_op(b, op, reg, path, watcher_type);
        let handed_in = match &watch_op {
            Some(WatchOp::Register { watcher, group, .. }) => {
                if group.is_some() {
                    self.grouped.insert(*watcher);
                }
                true
            }
            _ => false,
        };
        let token = self.token();
        self.outstanding_submits.insert(token);
        if op == OpCode::CloseSession {
            self.close_session_tokens.push(token);
        }
        self.token_ops.insert(token, op);
        self.s.submit(
            Request {
                frame,
                op,
                token,
                watch: watch_op,
            },
            self.now,
        );
        if handed_in {
            self.sweep();
        }
    }

    /// What `op` does to the watches: registers one (`reg`'s kind, when it asks for one), or
    /// removes the server's.
    fn watch_op(
        &mut self,
        b: u8,
        op: OpCode,
        reg: Option<(bool, WatchKind)>,
        path: &str,
        watcher_type: WatcherType,
    ) -> Option<WatchOp> {
        match (op, reg) {
            (_, Some((true, kind))) => {
                let one_shot =
                    !matches!(kind, WatchKind::Persistent | WatchKind::PersistentRecursive);
                // `& 0x20` on a read: through the one group (the client's `Watcher`).
                let group = (one_shot && b & 0x20 != 0).then_some(WatcherGroup::new(1));
                Some(WatchOp::Register {
                    kind,
                    path: path.to_string(),
                    watcher: self.watcher(one_shot),
                    group,
                })
            }
            (OpCode::RemoveWatches, _) => Some(WatchOp::Remove {
                path: path.to_string(),
                watcher_type,
            }),
            _ => None,
        }
    }

    /// Sweeps the abandoned watchers: every third watcher's receiver is taken as dropped.
    fn sweep(&mut self) {
        let swept = self.s.sweep_abandoned(|w| w.get() % 3 == 0, self.now);
        for w in swept {
            assert!(w.get() % 3 == 0, "swept watcher {w}, not abandoned");
            assert!(
                self.watchers.contains(&(w, true)),
                "swept watcher {w}, not a one-shot one"
            );
            self.forgotten.insert(w);
            // Each may remove a server watch.
            self.internal_sends += 1;
        }
    }

    /// The server answers the oldest request it got (or, with none, some xid).
    pub(super) fn server_reply(&mut self, split: Option<usize>) {
        let mode = self.input.byte();
        let (xid, op) = match self.server.queue.pop_front() {
            Some(front) => front,
            None => (i32::from(self.input.byte() as i8), OpCode::GetData),
        };
        let zxid = match mode >> 6 {
            0 => {
                self.server.zxid += 1;
                self.server.zxid
            }
            1 => 0,
            2 => -1,
            _ => {
                self.server.zxid += 1000;
                self.server.zxid
            }
        };
        let (err, body) = match op {
            OpCode::Ping | OpCode::SetWatches | OpCode::SetWatches2 => {
                (ErrorCode::Ok, BytesMut::new())
            }
            OpCode::Auth if mode & 1 == 0 => (ErrorCode::Ok, BytesMut::new()),
            OpCode::Auth => (ErrorCode::AuthFailed, BytesMut::new()),
            _ => match mode & 0xf {
                0..=7 => (ErrorCode::Ok, valid_body(op)),
                8 | 9 => (ErrorCode::NoNode, BytesMut::new()),
                10 => (
                    ERRORS[usize::from(self.input.byte()) % ERRORS.len()],
                    BytesMut::new(),
                ),
                11 => {
                    let n = usize::from(self.input.byte() % 32);
                    (ErrorCode::Ok, BytesMut::from(self.input.bytes(n)))
                }
                12 => {
                    let mut body = valid_body(op);
                    let keep = usize::from(self.input.byte()) % (body.len() + 1);
                    body.truncate(keep);
                    (ErrorCode::Ok, body)
                }
                _ => {
                    let mut body = valid_body(op);
                    body.extend_from_slice(b"extra");
                    (ErrorCode::Ok, body)
                }
            },
        };
        let frame = reply_frame(xid, zxid, err, &body);
        match split {
            Some(at) => {
                let at = at % (frame.len() + 1);
                self.feed(&frame[..at]);
                self.feed(&frame[at..]);
            }
            None => self.feed(&frame),
        }
    }

    pub(super) fn server_connect_response(&mut self) {
        let f = self.input.byte();
        let timeout_ms: i32 = match f & 7 {
            0 => 0,
            1 => 1,
            2 => 100,
            3 => 2000,
            4 => 6000,
            5 => 30_000,
            6 => -5,
            _ => i32::from(self.input.u16()),
        };
        let (session_id, passwd) = match (&self.server.connect_seen, f & 0x18) {
            // A real server resumes the session asked for.
            (Some((id, passwd)), 0 | 8) if *id != 0 => (*id, passwd.clone()),
            (_, 0x10) => (0, vec![0; 16]),
            _ => {
                self.server.next_session += 1;
                while self.lost.contains(&self.server.next_session) {
                    self.server.next_session += 1;
                }
                (self.server.next_session, vec![0x5a; 16])
            }
        };
        let mut frame = BytesMut::new();
        write_frame(&mut frame, |buf| {
            jute::put_i32(buf, 0);
            jute::put_i32(buf, timeout_ms);
            jute::put_i64(buf, session_id);
            jute::put_buffer(buf, &passwd);
            if f & 0x20 == 0 {
                jute::put_bool(buf, f & 0x40 != 0);
            }
        });
        if f & 0x80 != 0 {
            // Truncated: the length prefix says so too.
            let keep = 4 + usize::from(self.input.byte()) % (frame.len() - 4);
            frame.truncate(keep);
            let len = (keep - 4) as i32;
            frame[..4].copy_from_slice(&len.to_be_bytes());
        }
        // Found by the fuzzer (a "lost" session resumed): after raw bytes the client reads a
        // frame made of them and this response, whose session id the model did not choose.
        self.model_connect_response = !self.server.raw_bytes;
        self.feed(&frame);
        self.after_step();
        self.model_connect_response = false;
    }

    pub(super) fn server_notification(&mut self) {
        let b = self.input.byte();
        let frame = notification_frame(b);
        self.feed(&frame);
    }
}

/// A notification frame: its type, state and path chosen by `b`.
pub(super) fn notification_frame(b: u8) -> BytesMut {
    let event = WatcherEvent {
        event_type: EVENT_TYPES[usize::from(b) % EVENT_TYPES.len()],
        state: if b & 0x80 == 0 {
            KeeperState::SyncConnected
        } else {
            KeeperState::Disconnected
        },
        path: Some(PATHS[usize::from(b >> 3) % PATHS.len()]),
    };
    reply_frame(-1, -1, ErrorCode::Ok, &event.to_bytes())
}

impl Harness<'_> {
    pub(super) fn advance_time(&mut self) {
        let b = self.input.byte();
        let ms = u64::from(b & 63);
        let step = match b >> 6 {
            0 => Duration::from_millis(ms),
            1 => Duration::from_millis(ms * 50),
            2 => Duration::from_millis(ms * 1000),
            // Exactly to the next deadline.
            _ => self
                .s
                .poll_timeout()
                .map_or(Duration::ZERO, |t| t.saturating_duration_since(self.now)),
        };
        self.now += step;
        // What the driver does: wake up at poll_timeout, call handle_timeout.
        if self.s.poll_timeout().is_some_and(|t| t <= self.now) {
            self.s.handle_timeout(self.now);
            let spin_ok = self.tolerate.session_id_zero_spin
                && self.s.session_id == 0
                && self.s.timers.disconnected_since.is_some();
            if let Some(next) = self.s.poll_timeout().filter(|_| !spin_ok) {
                assert!(
                    next > self.now,
                    "busy loop: poll_timeout() is {:?} in the past after handle_timeout",
                    self.now - next
                );
            }
        }
    }
}

/// The opcode input byte `b` picks, and for a read, whether it asks for a watch of what kind.
fn pick_op(b: u8, watch: bool) -> (OpCode, Option<(bool, WatchKind)>) {
    let read_watch = |kind| (watch, kind);
    match b % 16 {
        0 => (OpCode::GetData, Some(read_watch(WatchKind::Data))),
        1 => (OpCode::Exists, Some(read_watch(WatchKind::Exist))),
        2 => (OpCode::GetChildren, Some(read_watch(WatchKind::Child))),
        3 => (OpCode::GetChildren2, Some(read_watch(WatchKind::Child))),
        4 => (OpCode::AddWatch, Some((true, WatchKind::Persistent))),
        5 => (
            OpCode::AddWatch,
            Some((true, WatchKind::PersistentRecursive)),
        ),
        6 => (OpCode::Create, None),
        7 => (OpCode::Create2, None),
        8 => (OpCode::Delete, None),
        9 => (OpCode::SetData, None),
        10 => (OpCode::Sync, None),
        11 => (OpCode::RemoveWatches, None),
        12 => (OpCode::Multi, None),
        13 => (OpCode::GetAcl, None),
        14 => (OpCode::WhoAmI, None),
        _ => match b >> 5 {
            0 => (OpCode::GetAllChildrenNumber, None),
            1 => (OpCode::GetEphemerals, None),
            2 => (OpCode::CheckWatches, None),
            _ => (OpCode::CloseSession, None),
        },
    }
}

/// `op`'s request on `path`, encoded into `frame` (xid 0, as callers hand it in).
fn encode(
    frame: &mut BytesMut,
    op: OpCode,
    path: &str,
    watch: bool,
    reg: Option<(bool, WatchKind)>,
    watcher_type: WatcherType,
) {
    match op {
        OpCode::GetData | OpCode::Exists | OpCode::GetChildren | OpCode::GetChildren2 => {
            encode_request(frame, 0, op, &PathWatchRequest { path, watch });
        }
        OpCode::AddWatch => {
            let mode = match reg {
                Some((_, WatchKind::Persistent)) => AddWatchMode::Persistent,
                _ => AddWatchMode::PersistentRecursive,
            };
            encode_request(frame, 0, op, &AddWatchRequest { path, mode });
        }
        OpCode::Create | OpCode::Create2 => encode_request(
            frame,
            0,
            op,
            &CreateRequest {
                path,
                data: Some(b"x"),
                acl: List::Slice(Acl::OPEN_ACL_UNSAFE),
                mode: CreateMode::Persistent,
            },
        ),
        OpCode::Delete => encode_request(frame, 0, op, &PathVersionRequest { path, version: -1 }),
        OpCode::SetData => encode_request(
            frame,
            0,
            op,
            &SetDataRequest {
                path,
                data: Some(b"y"),
                version: -1,
            },
        ),
        OpCode::RemoveWatches | OpCode::CheckWatches => {
            encode_request(frame, 0, op, &WatchesRequest { path, watcher_type })
        }
        OpCode::Multi => encode_request(
            frame,
            0,
            op,
            &MultiRequest {
                ops: MultiList::Slice(&[]),
            },
        ),
        OpCode::WhoAmI | OpCode::CloseSession => encode_header_only(frame, 0, op),
        _ => encode_request(frame, 0, op, &PathRecord { path }),
    }
}
