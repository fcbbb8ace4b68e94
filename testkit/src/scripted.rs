//! [`ScriptedServer`]: a fake ZooKeeper server that plays a script written by the test,
//! byte for byte, against a real client.
//!
//! Where [`crate::TestingServer`] is the real server and [`crate::FaultyProxy`] breaks the
//! network around it, a scripted server is for what a real server never does: a negative
//! or absurd frame length, a reply to a request never sent, a record whose lengths lie, a
//! handshake answer cut short, bytes trickled one by one. Each accepted connection runs the
//! script on a thread of its own, with a [`ScriptedConnection`] to read the client's frames
//! and write whatever the test wants.
//!
//! ```no_run
//! use zkrs_testkit::scripted::{reply_frame, Jute, OP_GET_DATA};
//! use zkrs_testkit::ScriptedServer;
//!
//! // The first connection answers a getData with a data length the frame does not hold;
//! // later ones behave.
//! let server = ScriptedServer::start(|conn| {
//!     conn.handshake()?;
//!     if conn.index() == 0 {
//!         let request = conn.read_call()?;
//!         let lying = Jute::new().i32(1000).raw(b"short").into_vec();
//!         conn.write(&reply_frame(request.xid, 1, 0, &lying))?;
//!         conn.stay_silent(std::time::Duration::from_secs(10))?;
//!         return Ok(());
//!     }
//!     conn.serve(|request| {
//!         (request.op == OP_GET_DATA).then(|| {
//!             let body = Jute::new().buffer(b"fine").stat().into_vec();
//!             reply_frame(request.xid, 1, 0, &body)
//!         })
//!     })
//! })?;
//! // Connect a client to `server.connect_string()`.
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! Only the standard library: the bytes are written by hand ([`Jute`], [`reply_frame`],
//! [`connect_response_frame`]), so a script can get any field wrong on purpose. Frames from
//! the client are read with a bounded length (a client bug cannot make the test allocate
//! gigabytes), and every wait gives up when the server is dropped.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often blocked reads and pauses look at the stop switch.
const POLL: Duration = Duration::from_millis(20);

/// The largest frame read from a client (the client's own limit is 1 MiB by default).
const MAX_CLIENT_FRAME: usize = 16 * 1024 * 1024;

/// How long a read waits for the client by default ([`ScriptedConnection::set_patience`]).
const DEFAULT_PATIENCE: Duration = Duration::from_secs(30);

/// The opcode of `getData`.
pub const OP_GET_DATA: i32 = 4;
/// The opcode of `exists`.
pub const OP_EXISTS: i32 = 3;
/// The opcode of `getChildren`.
pub const OP_GET_CHILDREN: i32 = 8;
/// The opcode of `getChildren2`.
pub const OP_GET_CHILDREN2: i32 = 12;
/// The opcode of `ping`.
pub const OP_PING: i32 = 11;
/// The opcode of `closeSession`.
pub const OP_CLOSE_SESSION: i32 = -11;
/// The xid of pings and their replies.
pub const XID_PING: i32 = -2;
/// The xid of watch notifications.
pub const XID_NOTIFICATION: i32 = -1;

/// The script every accepted connection runs.
type Script = dyn Fn(&mut ScriptedConnection) -> io::Result<()> + Send + Sync;

#[derive(Debug, Default)]
struct State {
    stopped: AtomicBool,
    accepted: AtomicUsize,
    /// A clone of every accepted stream, shut down when the server is dropped.
    streams: Mutex<Vec<TcpStream>>,
    /// Messages of scripts that panicked.
    panics: Mutex<Vec<String>>,
}

impl State {
    fn stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }
}

/// A fake ZooKeeper server on a free `127.0.0.1` port that runs a script for every
/// connection it accepts (see the [module documentation](self)).
///
/// Dropping it stops accepting, and shuts down every connection it accepted: the scripts'
/// reads and writes fail, their pauses end, and the client sees the connections closed.
pub struct ScriptedServer {
    address: SocketAddr,
    state: Arc<State>,
    acceptor: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for ScriptedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedServer")
            .field("address", &self.address)
            .field("connections", &self.connections())
            .finish()
    }
}

impl ScriptedServer {
    /// Listens on a free `127.0.0.1` port and runs `script` on its own thread for each
    /// connection, with the connection's number ([`ScriptedConnection::index`]) so it can
    /// play a different part on a reconnect. The connection is closed when the script
    /// returns; an error it returns (often the client hanging up) is ignored, a panic is
    /// recorded ([`ScriptedServer::panics`]).
    ///
    /// # Errors
    ///
    /// When the listening socket cannot be opened.
    pub fn start<F>(script: F) -> io::Result<ScriptedServer>
    where
        F: Fn(&mut ScriptedConnection) -> io::Result<()> + Send + Sync + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let address = listener.local_addr()?;
        let state = Arc::new(State::default());
        let script: Arc<Script> = Arc::new(script);
        let shared = state.clone();
        let acceptor = std::thread::Builder::new()
            .name("zkrs-testkit-scripted".into())
            .spawn(move || accept_loop(listener, script, shared))?;
        Ok(ScriptedServer {
            address,
            state,
            acceptor: Some(acceptor),
        })
    }

    /// The server's address.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// `127.0.0.1:PORT`, for a client's connect string.
    pub fn connect_string(&self) -> String {
        self.address.to_string()
    }

    /// How many connections were accepted so far.
    pub fn connections(&self) -> usize {
        self.state.accepted.load(Ordering::SeqCst)
    }

    /// The messages of the scripts that panicked so far (a script's `assert!` that failed).
    pub fn panics(&self) -> Vec<String> {
        lock(&self.state.panics).clone()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.state.stopped.store(true, Ordering::SeqCst);
        for stream in lock(&self.state.streams).drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
        // Wake the acceptor from its blocking accept.
        let _ = TcpStream::connect_timeout(&self.address, Duration::from_secs(1));
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn accept_loop(listener: TcpListener, script: Arc<Script>, state: Arc<State>) {
    for stream in listener.incoming() {
        if state.stopped() {
            return;
        }
        let Ok(stream) = stream else {
            std::thread::sleep(POLL);
            continue;
        };
        let index = state.accepted.fetch_add(1, Ordering::SeqCst);
        let _ = stream.set_nodelay(true);
        let _ = stream.set_read_timeout(Some(POLL));
        if let Ok(clone) = stream.try_clone() {
            lock(&state.streams).push(clone);
        }
        let (script, shared) = (script.clone(), state.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("zkrs-testkit-scripted-{index}"))
            .spawn(move || {
                let mut conn = ScriptedConnection {
                    stream,
                    index,
                    state: shared.clone(),
                    patience: DEFAULT_PATIENCE,
                };
                let outcome = catch_unwind(AssertUnwindSafe(|| script(&mut conn)));
                if let Err(panic) = outcome {
                    let message = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "a script panicked".into());
                    lock(&shared.panics).push(format!("connection {index}: {message}"));
                }
                let _ = conn.stream.shutdown(Shutdown::Both);
            });
        if spawned.is_err() {
            continue;
        }
    }
}

/// A ConnectRequest as the scripted server read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectRequest {
    /// The protocol version (0).
    pub protocol_version: i32,
    /// The last zxid the client saw.
    pub last_zxid_seen: i64,
    /// The session timeout the client asks for, in milliseconds.
    pub timeout_ms: i32,
    /// 0 for a new session, else the session the client wants back.
    pub session_id: i64,
    /// The session password.
    pub passwd: Vec<u8>,
    /// Whether the client accepts a read-only server (false when the byte is absent).
    pub read_only: bool,
}

/// A request frame as the scripted server read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The call id (the first `int` of the frame body).
    pub xid: i32,
    /// The operation (the second `int`; see the `OP_*` constants).
    pub op: i32,
    /// Everything after the request header.
    pub body: Vec<u8>,
}

impl Request {
    /// The path at the start of the body (`getData`, `exists`, `getChildren`, `create`, ...
    /// start with it), if there is a readable one.
    pub fn path(&self) -> Option<String> {
        let len = i32::from_be_bytes(self.body.get(..4)?.try_into().ok()?);
        let bytes = self.body.get(4..4 + usize::try_from(len).ok()?)?;
        String::from_utf8(bytes.to_vec()).ok()
    }
}

/// One accepted connection, as its script sees it: the client's frames to read, and any
/// bytes to write. Reads give up after the [patience](ScriptedConnection::set_patience)
/// (30 s by default) and when the server is dropped.
#[derive(Debug)]
pub struct ScriptedConnection {
    stream: TcpStream,
    index: usize,
    state: Arc<State>,
    patience: Duration,
}

impl ScriptedConnection {
    /// The connection's number: 0 for the first one the server accepted, 1 for the next...
    pub fn index(&self) -> usize {
        self.index
    }

    /// How long a read waits for the client's bytes before failing with `TimedOut`.
    pub fn set_patience(&mut self, patience: Duration) {
        self.patience = patience;
    }

    /// Fills `buf` from the client, or fails: `UnexpectedEof` when the client closed the
    /// connection, `TimedOut` after the patience, `Interrupted` when the server is dropped.
    pub fn read_exact(&mut self, buf: &mut [u8]) -> io::Result<()> {
        let deadline = Instant::now() + self.patience;
        let mut filled = 0;
        while filled < buf.len() {
            if self.state.stopped() {
                return Err(io::Error::new(
                    io::ErrorKind::Interrupted,
                    "the scripted server was dropped",
                ));
            }
            match self.stream.read(&mut buf[filled..]) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the client closed the connection",
                    ))
                }
                Ok(n) => filled += n,
                Err(e) if is_timeout(&e) => {
                    if Instant::now() >= deadline {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            "the client sent nothing within the patience",
                        ));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Reads one frame (4-byte big-endian length, then the body) and returns its body.
    /// A negative length, or one over 16 MiB, is an `InvalidData` error: nothing is
    /// allocated from it.
    pub fn read_frame(&mut self) -> io::Result<Vec<u8>> {
        let mut prefix = [0u8; 4];
        self.read_exact(&mut prefix)?;
        let len = i32::from_be_bytes(prefix);
        let len = usize::try_from(len)
            .ok()
            .filter(|&len| len <= MAX_CLIENT_FRAME)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("the client sent a frame length of {len}"),
                )
            })?;
        let mut body = vec![0u8; len];
        self.read_exact(&mut body)?;
        Ok(body)
    }

    /// Reads the client's first frame, its ConnectRequest.
    pub fn read_connect_request(&mut self) -> io::Result<ConnectRequest> {
        let body = self.read_frame()?;
        let mut r = Cursor(&body);
        let request = ConnectRequest {
            protocol_version: r.i32()?,
            last_zxid_seen: r.i64()?,
            timeout_ms: r.i32()?,
            session_id: r.i64()?,
            passwd: r.buffer()?,
            read_only: r.0.first().is_some_and(|&b| b != 0),
        };
        Ok(request)
    }

    /// Answers a ConnectRequest the way a healthy server does: the timeout asked for, the
    /// session asked for (or session `0x5C1A_0000_0000_0001` for a new one), a 16-byte
    /// password, read-write.
    pub fn accept_session(&mut self, request: &ConnectRequest) -> io::Result<()> {
        let session_id = match request.session_id {
            0 => 0x5C1A_0000_0000_0001,
            id => id,
        };
        let frame = connect_response_frame(request.timeout_ms, session_id, &[0x5A; 16], false);
        self.write(&frame)
    }

    /// Reads the ConnectRequest and accepts it ([`ScriptedConnection::accept_session`]).
    pub fn handshake(&mut self) -> io::Result<ConnectRequest> {
        let request = self.read_connect_request()?;
        self.accept_session(&request)?;
        Ok(request)
    }

    /// Reads one request frame (pings included).
    pub fn read_request(&mut self) -> io::Result<Request> {
        let body = self.read_frame()?;
        let mut r = Cursor(&body);
        let (xid, op) = (r.i32()?, r.i32()?);
        Ok(Request {
            xid,
            op,
            body: r.0.to_vec(),
        })
    }

    /// Reads request frames until one that is not a ping, and returns it. The pings are
    /// not answered.
    pub fn read_call(&mut self) -> io::Result<Request> {
        loop {
            let request = self.read_request()?;
            if request.op != OP_PING {
                return Ok(request);
            }
        }
    }

    /// Writes `bytes` as they are.
    pub fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes)?;
        self.stream.flush()
    }

    /// Writes `bytes` a `chunk` at a time, pausing `every` after each: a slow or stuck
    /// server. Fails as soon as the client has gone.
    pub fn trickle(&mut self, bytes: &[u8], chunk: usize, every: Duration) -> io::Result<()> {
        for piece in bytes.chunks(chunk.max(1)) {
            self.write(piece)?;
            self.pause(every)?;
        }
        Ok(())
    }

    /// Does nothing for `duration` (reads nothing, writes nothing). Fails with
    /// `Interrupted` if the server is dropped meanwhile.
    pub fn pause(&mut self, duration: Duration) -> io::Result<()> {
        let end = Instant::now() + duration;
        loop {
            if self.state.stopped() {
                return Err(io::Error::new(
                    io::ErrorKind::Interrupted,
                    "the scripted server was dropped",
                ));
            }
            let now = Instant::now();
            if now >= end {
                return Ok(());
            }
            std::thread::sleep((end - now).min(POLL));
        }
    }

    /// Says nothing for up to `duration`, reading and throwing away whatever the client
    /// sends (pings are not answered). Returns `true` as soon as the client closes the
    /// connection, `false` if it was still open at the end.
    pub fn stay_silent(&mut self, duration: Duration) -> io::Result<bool> {
        let end = Instant::now() + duration;
        let mut sink = [0u8; 4096];
        while Instant::now() < end {
            if self.state.stopped() {
                return Err(io::Error::new(
                    io::ErrorKind::Interrupted,
                    "the scripted server was dropped",
                ));
            }
            match self.stream.read(&mut sink) {
                Ok(0) => return Ok(true),
                Ok(_) => {}
                Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => return Ok(true),
                Err(e) => return Err(e),
            }
        }
        Ok(false)
    }

    /// Serves requests like a healthy server until the client closes the connection:
    /// pings and closeSession are answered here, every other request by `answer`, which
    /// returns the whole reply frame to write (see [`reply_frame`]) or `None` to leave the
    /// request unanswered.
    pub fn serve(&mut self, mut answer: impl FnMut(&Request) -> Option<Vec<u8>>) -> io::Result<()> {
        loop {
            let request = match self.read_request() {
                Ok(request) => request,
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
                Err(e) => return Err(e),
            };
            match request.op {
                OP_PING => self.write(&reply_frame(XID_PING, 1, 0, &[]))?,
                OP_CLOSE_SESSION => {
                    self.write(&reply_frame(request.xid, 1, 0, &[]))?;
                    return Ok(());
                }
                _ => {
                    if let Some(reply) = answer(&request) {
                        self.write(&reply)?;
                    }
                }
            }
        }
    }

    /// Closes the connection both ways (the client reads end of file).
    pub fn close(&mut self) -> io::Result<()> {
        self.stream.shutdown(Shutdown::Both)
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Reads big-endian Jute fields from a frame body.
struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> io::Result<&[u8]> {
        if self.0.len() < n {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the client's frame is shorter than its record",
            ));
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }

    fn i32(&mut self) -> io::Result<i32> {
        Ok(i32::from_be_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    fn i64(&mut self) -> io::Result<i64> {
        Ok(i64::from_be_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    fn buffer(&mut self) -> io::Result<Vec<u8>> {
        match self.i32()? {
            -1 => Ok(Vec::new()),
            n => {
                let n = usize::try_from(n).map_err(|_| {
                    io::Error::new(io::ErrorKind::InvalidData, "negative buffer length")
                })?;
                Ok(self.take(n)?.to_vec())
            }
        }
    }
}

/// Jute bytes written by hand, field by field, with nothing checked: a length may lie, a
/// record may stop halfway.
///
/// ```
/// use zkrs_testkit::scripted::Jute;
/// // A getData reply body: the data, then a Stat.
/// let body = Jute::new().buffer(b"hello").stat().into_vec();
/// assert_eq!(body.len(), 4 + 5 + 68);
/// // A getChildren reply body claiming 2^31-1 children and holding one.
/// let lying = Jute::new().i32(i32::MAX).string("a").into_vec();
/// assert_eq!(lying.len(), 4 + 4 + 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Jute(Vec<u8>);

impl Jute {
    /// No bytes yet.
    pub fn new() -> Jute {
        Jute(Vec::new())
    }

    /// A Jute `int` (4 bytes, big-endian); also any length prefix, true or not.
    pub fn i32(mut self, v: i32) -> Jute {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }

    /// A Jute `long` (8 bytes, big-endian).
    pub fn i64(mut self, v: i64) -> Jute {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }

    /// A Jute `boolean` (one byte, 0 or 1).
    pub fn bool(mut self, v: bool) -> Jute {
        self.0.push(u8::from(v));
        self
    }

    /// A Jute `buffer`: its true length, then its bytes.
    pub fn buffer(self, v: &[u8]) -> Jute {
        self.i32(v.len() as i32).raw(v)
    }

    /// A Jute `ustring`: its true length, then its UTF-8 bytes.
    pub fn string(self, v: &str) -> Jute {
        self.buffer(v.as_bytes())
    }

    /// A Stat (68 bytes) with every field 0.
    pub fn stat(mut self) -> Jute {
        self.0.extend_from_slice(&[0u8; 68]);
        self
    }

    /// Bytes as they are.
    pub fn raw(mut self, bytes: &[u8]) -> Jute {
        self.0.extend_from_slice(bytes);
        self
    }

    /// The bytes written so far.
    pub fn into_vec(self) -> Vec<u8> {
        self.0
    }

    /// The bytes as a frame: their true length (4 bytes, big-endian), then the bytes.
    pub fn into_frame(self) -> Vec<u8> {
        frame(&self.0)
    }
}

/// A frame around `body`: its length (4 bytes, big-endian), then the body.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as i32).to_be_bytes());
    out.extend_from_slice(body);
    out
}

/// A reply frame: length, reply header (`xid`, `zxid`, error code `err`, 0 for Ok), `body`.
pub fn reply_frame(xid: i32, zxid: i64, err: i32, body: &[u8]) -> Vec<u8> {
    Jute::new()
        .i32(xid)
        .i64(zxid)
        .i32(err)
        .raw(body)
        .into_frame()
}

/// A well-formed ConnectResponse frame: protocol version 0, the negotiated timeout, the
/// session id, the password (a Jute buffer; servers send 16 bytes) and the read-only byte.
pub fn connect_response_frame(
    timeout_ms: i32,
    session_id: i64,
    passwd: &[u8],
    read_only: bool,
) -> Vec<u8> {
    Jute::new()
        .i32(0)
        .i32(timeout_ms)
        .i64(session_id)
        .buffer(passwd)
        .bool(read_only)
        .into_frame()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plays_a_handshake_and_a_reply() {
        let server = ScriptedServer::start(|conn| {
            let request = conn.handshake()?;
            assert_eq!(request.timeout_ms, 1234);
            let call = conn.read_call()?;
            assert_eq!(call.op, OP_GET_DATA);
            assert_eq!(call.path().as_deref(), Some("/a"));
            let body = Jute::new().buffer(b"hi").stat().into_vec();
            conn.write(&reply_frame(call.xid, 1, 0, &body))
        })
        .unwrap();
        let mut client = TcpStream::connect(server.address()).unwrap();
        let connect = Jute::new()
            .i32(0)
            .i64(0)
            .i32(1234)
            .i64(0)
            .buffer(&[0; 16])
            .bool(false)
            .into_frame();
        client.write_all(&connect).unwrap();
        let get_data = Jute::new()
            .i32(7)
            .i32(OP_GET_DATA)
            .string("/a")
            .bool(false)
            .into_frame();
        client.write_all(&get_data).unwrap();
        let mut answer = Vec::new();
        client.read_to_end(&mut answer).unwrap();
        let expected_connect =
            connect_response_frame(1234, 0x5C1A_0000_0000_0001, &[0x5A; 16], false);
        assert_eq!(&answer[..expected_connect.len()], &expected_connect[..]);
        let reply = &answer[expected_connect.len()..];
        assert_eq!(&reply[..4], &(16 + 4 + 2 + 68i32).to_be_bytes());
        assert_eq!(&reply[4..8], &7i32.to_be_bytes());
        assert_eq!(server.connections(), 1);
        assert!(server.panics().is_empty());
    }

    #[test]
    fn records_a_panicking_script_and_drops_promptly() {
        let server = ScriptedServer::start(|conn| {
            if conn.index() == 0 {
                panic!("on purpose");
            }
            conn.stay_silent(Duration::from_secs(60)).map(drop)
        })
        .unwrap();
        let mut first = TcpStream::connect(server.address()).unwrap();
        let mut buf = [0u8; 1];
        assert_eq!(
            first.read(&mut buf).unwrap_or(0),
            0,
            "closed after the panic"
        );
        let _second = TcpStream::connect(server.address()).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while server.connections() < 2 && Instant::now() < deadline {
            std::thread::sleep(POLL);
        }
        assert_eq!(server.panics(), ["connection 0: on purpose"]);
        let started = Instant::now();
        drop(server);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "a silent script ends on drop"
        );
    }
}
