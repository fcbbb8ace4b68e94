//! The body of the cargo-fuzz target `model_server` (`fuzz/`), behind the `fuzzing`
//! feature, so that `cargo test` replays its seeds on stable (`model/tests/fuzz_seeds.rs`).
//! Not part of the API.
//!
//! The input is a script that drives one [`Server`] through several connections: accept,
//! a well-formed connect request (new, or resuming a session the server made), a request
//! frame of any opcode with a body of fuzzed bytes, raw bytes, time passing, a disconnect.
//! Well-formed frames get past the handshake and the frame check, so the fuzzer reaches the
//! request decoders and the operations themselves. Nothing may panic; every answer must be
//! whole frames (a length prefix, then that many bytes) until the server closes the
//! connection, but for a four-letter word's: plain text, then the close.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use zkrs_codec::{encode_connect_request, ConnectRequest, OpCode};

use crate::{ConnectionId, Server, ServerConfig};

/// Runs one script; panics only on a broken invariant (or a bug the fuzzer found). Returns
/// a hash of every byte the server sent, in order, and every close: the same script must
/// give the same hash (the model holds no clock, thread or randomness of its own).
pub fn server(data: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    // `DefaultHasher::new` uses fixed keys: the same bytes hash the same in every process.
    let mut trace = std::collections::hash_map::DefaultHasher::new();
    let mut now = Instant::now();
    let config = ServerConfig {
        // The same passwords on every replay of an input.
        randomness: crate::Randomness::Seeded(0),
        ..ServerConfig::default()
    };
    let mut server = Server::new(config, now);
    let mut conns: Vec<ConnectionId> = Vec::new();
    // Bytes sent to each connection not yet split into frames, whether it was closed, and
    // whether anything was sent to it.
    let mut out: HashMap<ConnectionId, (Vec<u8>, bool, bool)> = HashMap::new();
    let mut sessions: Vec<i64> = Vec::new();
    let mut input = Input(data);
    while let Some(op) = input.byte() {
        let pick =
            |conns: &[ConnectionId], n: u8| conns.get(n as usize % conns.len().max(1)).copied();
        match op % 7 {
            0 if conns.len() < 8 => conns.push(server.accept("127.0.0.1", now)),
            1 => {
                let Some(conn) = pick(&conns, input.byte().unwrap_or(0)) else {
                    continue;
                };
                let timeout_ms = i32::from(input.byte().unwrap_or(40)) * 100;
                let session_id = match input.byte() {
                    Some(n) if n % 2 == 1 && !sessions.is_empty() => {
                        sessions[n as usize % sessions.len()]
                    }
                    _ => 0,
                };
                let mut buf = BytesMut::new();
                let request = ConnectRequest {
                    protocol_version: 0,
                    last_zxid_seen: 0,
                    timeout_ms,
                    session_id,
                    passwd: &[0; 16],
                };
                encode_connect_request(&mut buf, &request, false);
                server.handle_input(conn, &buf, now);
            }
            2 => {
                let Some(conn) = pick(&conns, input.byte().unwrap_or(0)) else {
                    continue;
                };
                let op = OpCode::ALL[input.byte().unwrap_or(0) as usize % OpCode::ALL.len()];
                let xid = i32::from(input.byte().unwrap_or(1));
                let len = input.byte().unwrap_or(0) as usize;
                let body = input.take(len);
                let mut frame = Vec::with_capacity(12 + body.len());
                frame.extend_from_slice(&(8 + body.len() as i32).to_be_bytes());
                frame.extend_from_slice(&xid.to_be_bytes());
                frame.extend_from_slice(&op.code().to_be_bytes());
                frame.extend_from_slice(body);
                server.handle_input(conn, &frame, now);
            }
            3 => {
                let Some(conn) = pick(&conns, input.byte().unwrap_or(0)) else {
                    continue;
                };
                let len = input.byte().unwrap_or(0) as usize;
                let bytes = input.take(len);
                server.handle_input(conn, bytes, now);
            }
            4 => {
                now += Duration::from_millis(u64::from(input.byte().unwrap_or(0)) * 50);
                server.handle_timeout(now);
            }
            5 => {
                if let Some(conn) = pick(&conns, input.byte().unwrap_or(0)) {
                    server.handle_disconnect(conn, now);
                    conns.retain(|c| *c != conn);
                }
            }
            _ => {}
        }
        while let Some(t) = server.poll_transmit() {
            (format!("{:?}", t.connection), &t.data[..], t.close).hash(&mut trace);
            let (bytes, closed, sent) = out.entry(t.connection).or_default();
            assert!(!*closed, "bytes for {:?} after it was closed", t.connection);
            // A frame the model sends starts with a length's high byte, 0; text with a letter.
            if !*sent && t.data.first().is_some_and(u8::is_ascii_graphic) {
                check_text_answer(&t.data, t.close);
                *closed = true;
                continue;
            }
            *sent |= !t.data.is_empty();
            bytes.extend_from_slice(&t.data);
            *closed |= t.close;
            check_frames(bytes);
        }
        sessions = server.session_ids();
    }
    trace.finish()
}

/// A four-letter word's answer: printable text, all of it in one transmit that closes.
fn check_text_answer(data: &[u8], close: bool) {
    assert!(close, "a text answer that does not close the connection");
    assert!(
        data.iter()
            .all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace()),
        "a text answer that is not text: {data:?}"
    );
}

/// Takes the whole frames off the front of `bytes`; what is left is a frame's beginning.
fn check_frames(bytes: &mut Vec<u8>) {
    let mut at = 0;
    while bytes.len() - at >= 4 {
        let len = i32::from_be_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        assert!(len >= 0, "a frame with length {len}");
        let end = at + 4 + len as usize;
        if end > bytes.len() {
            break;
        }
        at = end;
    }
    bytes.drain(..at);
}

/// The script's bytes, read from the front.
struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    fn take(&mut self, n: usize) -> &'a [u8] {
        let (taken, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        taken
    }
}
