//! The expiry step of a script: a short session goes silent and both servers expire it on
//! their own clocks.

use std::time::{Duration, Instant};

use bytes::BytesMut;
use zkrs_codec::{
    jute::{put_bool, put_buffer_opt, put_i32, put_str},
    Acl, CreateMode, Encode, List, OpCode,
};

use super::runner::{Expect, Run, Slot};
use super::script::PathRef;
use super::wire_client::{Frame, WireConnection, DEADLINE};

impl Run {
    /// A session with the shortest timeout makes two ephemerals that slot `s` watches, then
    /// goes silent; waits (pinging every slot, so only it expires) until slot `s` hears that
    /// the first one is gone. Each slot's events of the wait are listed sorted: ZooKeeper
    /// deletes an expired session's ephemerals in hash-set order.
    pub(super) fn expire(&mut self, s: usize, path: &PathRef, lines: &mut Vec<String>) {
        let (conn, connected) = WireConnection::connect(self.addr, 600, None, 0);
        let c = connected.expect("a short session");
        self.sessions.push(c.session_id);
        lines.push(format!(
            "short session S{} timeout={}",
            self.sessions.len() - 1,
            c.timeout_ms
        ));
        let t = self.slots.len();
        self.slots.push(Slot {
            conn: Some(conn),
            session: c.session_id,
            passwd: c.passwd,
        });
        // Beside the script's root, not under it: a script may have taken CREATE away there.
        let marker = format!("{}-expiring", self.root);
        let random = self.path(path);
        for p in [&marker, &random] {
            let mut b = BytesMut::new();
            put_str(&mut b, p);
            put_buffer_opt(&mut b, Some(b""));
            List::from(Acl::OPEN_ACL_UNSAFE).encode(&mut b);
            put_i32(&mut b, CreateMode::Ephemeral.code());
            self.call(t, OpCode::Create, b, None, Expect::Path, lines);
        }
        for p in [&marker, &random] {
            let mut b = BytesMut::new();
            put_str(&mut b, p);
            put_bool(&mut b, true);
            self.call(s, OpCode::Exists, b, None, Expect::Stat, lines);
        }
        // The watches are set: touch the short session once more (a busy machine may have
        // taken a while), then let it go silent.
        if let Some(conn) = self.slots[t].conn.as_mut() {
            conn.send_empty(OpCode::Ping, Some(-2));
            conn.read_until_reply(-2);
        }
        if let Some(conn) = self.slots[t].conn.take() {
            conn.drop_connection();
        }
        self.slots.pop();
        let deadline = Instant::now() + DEADLINE;
        let mut seen: Vec<Vec<String>> = vec![Vec::new(); self.slots.len()];
        let gone = format!("S{s} event 2 3 {marker}");
        let mut expired = false;
        loop {
            for (t, events) in seen.iter_mut().enumerate() {
                let Some(conn) = self.slots[t].conn.as_mut() else {
                    continue;
                };
                conn.send_empty(OpCode::Ping, Some(-2));
                let frames = conn.read_until_reply(-2);
                for frame in frames {
                    if let Frame::Event {
                        event_type,
                        state,
                        path,
                        zxid,
                    } = frame
                    {
                        events.push(format!(
                            "S{t} event {event_type} {state} {path} zxid={}",
                            self.zxid(zxid)
                        ));
                    }
                }
            }
            if expired {
                // One more round after the expiry was seen: a slot pinged before it happened
                // had its events still on the way.
                break;
            }
            if self.slots[s].conn.as_ref().is_none_or(|c| c.closed) {
                // The watching slot's session is gone (expired by a server that stalled past
                // its timeout): the event can no longer come. Recorded, for the comparison.
                lines.push(format!(
                    "S{s} closed by server while waiting for the expiry"
                ));
                break;
            }
            // Events end with their zxid, which the comparison checks, not this wait.
            expired = seen[s]
                .iter()
                .any(|e| e.split(" zxid=").next() == Some(gone.as_str()));
            if !expired {
                assert!(
                    Instant::now() < deadline,
                    "the silent session did not expire within {DEADLINE:?} on {} (events seen: {seen:?})",
                    self.addr
                );
                // Pace the polling: expiry comes with the server's next tick (200 ms).
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        for mut events in seen {
            events.sort();
            lines.extend(events);
        }
    }
}
