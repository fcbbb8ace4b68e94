//! A blocking, raw-protocol ZooKeeper client for the differential test: it sends exactly the
//! frames a script says and reports every frame that comes back, so the model and the real
//! server are compared byte for byte (after normalising), with nothing in between that could
//! hide a difference.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use zkrs_codec::{
    check_frame, decode_connect_response, encode_connect_request, encode_header_only,
    encode_request, jute::Reader, parse_reply, ConnectRequest, Decode, Encode, OpCode, ReplyHeader,
    WatcherEvent,
};

/// How long any single wait may take before the test fails.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// A frame from the server after the handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A notification.
    Event {
        event_type: i32,
        state: i32,
        path: String,
        /// The header's zxid: -1 on 3.8, the firing transaction's on 3.9.
        zxid: i64,
    },
    /// A reply.
    Reply { header: ReplyHeader, body: Vec<u8> },
}

/// The handshake's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connected {
    pub timeout_ms: i32,
    pub session_id: i64,
    pub passwd: Vec<u8>,
}

/// One connection.
pub struct WireConnection {
    stream: TcpStream,
    buf: Vec<u8>,
    next_xid: i32,
    pub closed: bool,
}

impl WireConnection {
    /// Connects and shakes hands; `None` when the server closed without answering.
    pub fn connect(
        addr: SocketAddr,
        timeout_ms: i32,
        resume: Option<(i64, &[u8])>,
        last_zxid: i64,
    ) -> (WireConnection, Option<Connected>) {
        let stream = TcpStream::connect_timeout(&addr, DEADLINE).expect("tcp connect");
        stream.set_nodelay(true).unwrap();
        let mut conn = WireConnection {
            stream,
            buf: Vec::new(),
            next_xid: 1,
            closed: false,
        };
        let (session_id, passwd) = resume.unwrap_or((0, &[0u8; 16]));
        let mut out = BytesMut::new();
        encode_connect_request(
            &mut out,
            &ConnectRequest {
                protocol_version: 0,
                last_zxid_seen: last_zxid,
                timeout_ms,
                session_id,
                passwd,
            },
            false,
        );
        conn.write(&out);
        let connected = conn.read_raw_frame().map(|body| {
            let (resp, _) = decode_connect_response(&body).expect("connect response");
            Connected {
                timeout_ms: resp.timeout_ms,
                session_id: resp.session_id,
                passwd: resp.passwd.to_vec(),
            }
        });
        (conn, connected)
    }

    /// Writes raw bytes (malformed frames).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.write(bytes);
    }

    /// Connects without a handshake (to send a malformed one).
    pub fn open(addr: SocketAddr) -> WireConnection {
        let stream = TcpStream::connect_timeout(&addr, DEADLINE).expect("tcp connect");
        stream.set_nodelay(true).unwrap();
        WireConnection {
            stream,
            buf: Vec::new(),
            next_xid: 1,
            closed: false,
        }
    }

    /// Every frame until the server closes the connection, or `None` if it stays open
    /// (answered a ping after them).
    pub fn frames_until_close(&mut self) -> Vec<Frame> {
        let mut frames = Vec::new();
        while let Some(frame) = self.read_frame() {
            frames.push(frame);
        }
        frames
    }

    fn write(&mut self, bytes: &[u8]) {
        if self.stream.write_all(bytes).is_err() {
            self.closed = true;
        }
    }

    /// Sends a request with the next xid (or `fixed_xid` for pings, auth and setWatches).
    pub fn send(&mut self, op: OpCode, body: &dyn Encode, fixed_xid: Option<i32>) -> i32 {
        let xid = fixed_xid.unwrap_or_else(|| {
            let x = self.next_xid;
            self.next_xid += 1;
            x
        });
        let mut out = BytesMut::new();
        encode_request(&mut out, xid, op, body);
        self.write(&out);
        xid
    }

    /// Sends a request without a body.
    pub fn send_empty(&mut self, op: OpCode, fixed_xid: Option<i32>) -> i32 {
        let xid = fixed_xid.unwrap_or_else(|| {
            let x = self.next_xid;
            self.next_xid += 1;
            x
        });
        let mut out = BytesMut::new();
        encode_header_only(&mut out, xid, op);
        self.write(&out);
        xid
    }

    fn read_raw_frame(&mut self) -> Option<Vec<u8>> {
        let deadline = Instant::now() + DEADLINE;
        loop {
            if let Some(len) = check_frame(&self.buf, usize::MAX >> 1).expect("frame length") {
                let frame = self.buf[4..4 + len].to_vec();
                self.buf.drain(..4 + len);
                return Some(frame);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "no frame from the server within {DEADLINE:?}"
            );
            self.stream.set_read_timeout(Some(left)).unwrap();
            let mut chunk = [0u8; 65536];
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    self.closed = true;
                    return None;
                }
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e)
                    if e.kind() == std::io::ErrorKind::WouldBlock
                        || e.kind() == std::io::ErrorKind::TimedOut =>
                {
                    panic!("no frame from the server within {DEADLINE:?}")
                }
                Err(_) => {
                    self.closed = true;
                    return None;
                }
            }
        }
    }

    /// The next frame, `None` once the server closed the connection.
    pub fn read_frame(&mut self) -> Option<Frame> {
        let body = self.read_raw_frame()?;
        let (header, rest) = parse_reply(&body).expect("reply header");
        if header.xid == -1 {
            let event = WatcherEvent::decode(&mut Reader::new(rest)).expect("event");
            return Some(Frame::Event {
                event_type: event.event_type.code(),
                state: event.state.code(),
                path: event.path.unwrap_or("").to_owned(),
                zxid: header.zxid,
            });
        }
        Some(Frame::Reply {
            header,
            body: rest.to_vec(),
        })
    }

    /// Frames up to and including the reply with `xid` (or up to the close).
    pub fn read_until_reply(&mut self, xid: i32) -> Vec<Frame> {
        let mut frames = Vec::new();
        while let Some(frame) = self.read_frame() {
            let done = matches!(&frame, Frame::Reply { header, .. } if header.xid == xid);
            frames.push(frame);
            if done {
                break;
            }
        }
        frames
    }

    /// Closes the socket (the session stays on the server).
    pub fn drop_connection(self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}
