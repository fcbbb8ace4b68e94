//! Hostile servers: a scripted fake ZooKeeper server (`zkrs_testkit::ScriptedServer`) plays,
//! byte for byte, what no real server sends, against the real client. For every case the
//! client must answer the call with a clear error (or reconnect and carry on), never panic,
//! never wait past the session timeout, and never allocate from a length field before the
//! bytes it announces are there.
//!
//! Every call has a deadline: the session timeout (2 s) plus a margin for a busy machine.
//! Memory is measured by a counting global allocator that only counts the test's own thread:
//! each test runs on tokio's current-thread runtime, so the client's driver task runs there
//! too, while the scripted server runs on threads of its own. No real ZooKeeper is needed.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::Future;
use std::io;
use std::time::{Duration, Instant};

use zkrs_client::{Client, ClientBuilder, Error, ErrorKind};
use zkrs_testkit::scripted::{
    connect_response_frame, reply_frame, Jute, Request, ScriptedConnection, OP_GET_CHILDREN,
    OP_GET_DATA,
};
use zkrs_testkit::ScriptedServer;

// ----- Memory: a counting allocator for the test's own thread -----

/// The system allocator; on a thread that turned [`TRACKING`] on, it also keeps the bytes
/// live since then, their peak, and the largest single request.
struct CountingAllocator;

thread_local! {
    static TRACKING: Cell<bool> = const { Cell::new(false) };
    static LIVE: Cell<i64> = const { Cell::new(0) };
    static PEAK: Cell<i64> = const { Cell::new(0) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn track(grown: i64, requested: usize) {
    let _ = TRACKING.try_with(|on| {
        if on.get() {
            let live = LIVE.with(|l| {
                l.set(l.get() + grown);
                l.get()
            });
            PEAK.with(|p| p.set(p.get().max(live)));
            LARGEST.with(|l| l.set(l.get().max(requested)));
        }
    });
}

// SAFETY: every call is forwarded unchanged to `System`; the bookkeeping touches only
// const-initialized thread-locals without destructors (no allocation, no reentrancy).
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        track(layout.size() as i64, layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        track(layout.size() as i64, layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        track(new_size as i64 - layout.size() as i64, new_size);
        System.realloc(ptr, layout, new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        track(-(layout.size() as i64), 0);
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// What the test thread allocated while a future ran.
#[derive(Debug, Clone, Copy)]
struct Usage {
    /// The most bytes live at once, counted from the start.
    peak: i64,
    /// The largest single allocation.
    largest: usize,
}

/// The most a hostile case may make the client hold: its read buffer may grow to one
/// maximal frame (1 MiB) and no more.
const MEMORY_LIMIT: i64 = 4 * 1024 * 1024;

/// Runs `f`, counting what this thread allocates meanwhile.
async fn measure<F: Future>(f: F) -> (F::Output, Usage) {
    LIVE.with(|l| l.set(0));
    PEAK.with(|p| p.set(0));
    LARGEST.with(|l| l.set(0));
    TRACKING.with(|t| t.set(true));
    let out = f.await;
    TRACKING.with(|t| t.set(false));
    let usage = Usage {
        peak: PEAK.with(Cell::get),
        largest: LARGEST.with(Cell::get),
    };
    (out, usage)
}

fn assert_bounded(usage: Usage, case: &str) {
    println!(
        "{case}: peak {} bytes, largest allocation {} bytes",
        usage.peak, usage.largest
    );
    assert!(
        usage.peak < MEMORY_LIMIT && (usage.largest as i64) < MEMORY_LIMIT,
        "{case}: the client allocated too much ({usage:?}, limit {MEMORY_LIMIT} bytes)"
    );
}

// ----- The client side -----

/// The session timeout asked for (and granted by the scripted server).
const SESSION_TIMEOUT: Duration = Duration::from_millis(2000);
/// The read timeout the client derives from it (2/3, as the Java client).
const READ_TIMEOUT_MS: u64 = 1333;
/// The longest any call may take: the session timeout, plus a margin for a busy machine.
const DEADLINE: Duration = Duration::from_millis(2000 + 750);
/// How long a scripted connection stays open, silent, after its hostile bytes.
const LINGER: Duration = Duration::from_secs(10);

fn builder(server: &ScriptedServer) -> ClientBuilder {
    ClientBuilder::new(server.connect_string()).session_timeout(SESSION_TIMEOUT)
}

/// Runs `f` with the deadline; returns its output and how long it took.
async fn within<F: Future>(what: &str, f: F) -> (F::Output, Duration) {
    let started = Instant::now();
    match tokio::time::timeout(DEADLINE, f).await {
        Ok(out) => (out, started.elapsed()),
        Err(_) => panic!(
            "{what}: no answer within {DEADLINE:?} (the session timeout is {SESSION_TIMEOUT:?})"
        ),
    }
}

/// A client with an established session on `server`.
async fn connect(server: &ScriptedServer) -> Client {
    let (client, _) = within("connect", builder(server).connect()).await;
    client.expect("the scripted handshake is valid")
}

/// The whole message of an error: its Display and every source's.
fn message(e: &Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(" <- ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Checks the kind (a local failure: no server code) and that the message names the cause.
fn assert_error(e: &Error, kind: ErrorKind, needles: &[&str]) {
    assert_eq!(e.kind(), kind, "{}", message(e));
    assert_eq!(e.code(), None, "{}", message(e));
    let text = message(e);
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} not in {text:?}");
    }
}

// ----- The server side -----

/// A healthy server's answers: getData gives `fine`, getChildren gives `x`, anything else
/// Unimplemented.
fn healthy_answer(request: &Request) -> Option<Vec<u8>> {
    let body = match request.op {
        OP_GET_DATA => Jute::new().buffer(b"fine").stat().into_vec(),
        OP_GET_CHILDREN => Jute::new().i32(1).string("x").into_vec(),
        _ => return Some(reply_frame(request.xid, 1, -6, &[])),
    };
    Some(reply_frame(request.xid, 1, 0, &body))
}

/// A server whose first connection accepts the session, reads one call and then plays
/// `hostile` (a silent linger afterwards is up to it); later connections are healthy.
fn first_connection_hostile<F>(hostile: F) -> ScriptedServer
where
    F: Fn(&mut ScriptedConnection, Request) -> io::Result<()> + Send + Sync + 'static,
{
    ScriptedServer::start(move |conn| {
        conn.handshake()?;
        if conn.index() == 0 {
            let call = conn.read_call()?;
            hostile(conn, call)
        } else {
            conn.serve(healthy_answer)
        }
    })
    .expect("start the scripted server")
}

/// Writes `bytes`, then stays silent while the client decides.
fn write_then_linger(conn: &mut ScriptedConnection, bytes: &[u8]) -> io::Result<()> {
    conn.write(bytes)?;
    conn.stay_silent(LINGER).map(drop)
}

/// The client carries on: a new connection, and a call that works.
async fn assert_recovers(client: &Client, server: &ScriptedServer) {
    let (result, _) = within(
        "get_data after the hostile connection",
        client.get_data("/a"),
    )
    .await;
    let (data, _) = result.expect("the next connection is healthy");
    assert_eq!(&data[..], b"fine");
    assert!(server.connections() >= 2, "{server:?}");
    assert!(server.panics().is_empty(), "{:?}", server.panics());
}

/// The call a hostile case answers badly: `/a`'s data or children, the value dropped.
#[derive(Clone, Copy)]
enum Call {
    GetData,
    GetChildren,
}

impl Call {
    fn op(self) -> i32 {
        match self {
            Call::GetData => OP_GET_DATA,
            Call::GetChildren => OP_GET_CHILDREN,
        }
    }

    async fn on(self, client: &Client) -> Result<(), Error> {
        match self {
            Call::GetData => client.get_data("/a").await.map(drop),
            Call::GetChildren => client.get_children("/a").await.map(drop),
        }
    }
}

/// `call` (`what`), answered on the first connection by a reply whose body is `body`, fails
/// alone with an error of kind `Protocol` whose message has `needles`, within the memory
/// bound (`case`); gives back the client and the server for what follows.
async fn refuses_reply_body(
    call: Call,
    body: Vec<u8>,
    what: &str,
    needles: &[&str],
    case: &str,
) -> (Client, ScriptedServer) {
    let server = first_connection_hostile(move |conn, request| {
        assert_eq!(request.op, call.op());
        write_then_linger(conn, &reply_frame(request.xid, 1, 0, &body))
    });
    let client = connect(&server).await;
    let ((result, _), usage) = measure(within(what, call.on(&client))).await;
    let e = result.expect_err("a reply longer than its frame is an error");
    assert_error(&e, ErrorKind::Protocol, needles);
    assert_bounded(usage, case);
    (client, server)
}

/// The call failed after `elapsed` by the read timeout, not before, and says so.
fn assert_read_timeout(e: &Error, elapsed: Duration, needles: &[&str]) {
    assert_error(e, ErrorKind::ConnectionLoss, needles);
    assert!(
        elapsed >= Duration::from_millis(READ_TIMEOUT_MS - 100),
        "gave up before the read timeout: {elapsed:?}"
    );
}

/// The message of a call that met the read timeout.
fn read_timeout_needle() -> String {
    format!("no reply from the server within the read timeout ({READ_TIMEOUT_MS} ms)")
}

/// A frame length the client must refuse at once, without allocating from it.
async fn refuses_frame_length(len: i32, expected: &str) -> Usage {
    // The announced length is followed by 64 KiB of bytes, as if the body were coming.
    let server = first_connection_hostile(move |conn, _call| {
        let bytes = Jute::new().i32(len).raw(&[0xAB; 64 * 1024]).into_vec();
        write_then_linger(conn, &bytes)
    });
    let client = connect(&server).await;
    let ((result, elapsed), usage) = measure(within(
        "get_data answered by a bad frame length",
        client.get_data("/a"),
    ))
    .await;
    let e = result.expect_err("a bad frame length is an error");
    assert_error(
        &e,
        ErrorKind::ConnectionLoss,
        &["the server sent a malformed frame", expected, "/a"],
    );
    assert!(
        elapsed < Duration::from_millis(READ_TIMEOUT_MS),
        "refused at once, not by a timeout: {elapsed:?}"
    );
    assert_recovers(&client, &server).await;
    usage
}

// ----- The cases -----

#[tokio::test]
async fn negative_frame_length() {
    let usage = refuses_frame_length(-2, "invalid length prefix -2").await;
    assert_bounded(usage, "negative frame length");
}

#[tokio::test]
async fn frame_length_of_2_pow_31_minus_1() {
    let usage = refuses_frame_length(
        i32::MAX,
        "frame of 2147483647 bytes exceeds the maximum of 1114111",
    )
    .await;
    assert_bounded(usage, "2^31-1 frame length");
}

#[tokio::test]
async fn frame_length_of_100_mb() {
    let usage = refuses_frame_length(
        100 * 1024 * 1024,
        "frame of 104857600 bytes exceeds the maximum of 1114111",
    )
    .await;
    assert_bounded(usage, "100 MB frame length");
}

#[tokio::test]
async fn reply_to_an_xid_never_sent() {
    let server = first_connection_hostile(|conn, call| {
        let body = Jute::new().buffer(b"not yours").stat().into_vec();
        write_then_linger(conn, &reply_frame(call.xid + 1000, 1, 0, &body))
    });
    let client = connect(&server).await;
    let (result, _) = within("get_data answered with another xid", client.get_data("/a")).await;
    let e = result.expect_err("a reply to another xid is an error");
    assert_error(
        &e,
        ErrorKind::ConnectionLoss,
        &[
            "the server sent a malformed frame",
            "while xid",
            "was the oldest pending",
        ],
    );
    assert_recovers(&client, &server).await;
}

#[tokio::test]
async fn reply_before_any_request() {
    // A reply comes in the same write as the handshake answer, while nothing is pending:
    // the connection is dropped as soon as it is open (the session is kept), and the call
    // made afterwards goes out on the next, healthy, connection.
    let server = ScriptedServer::start(|conn| {
        let request = conn.read_connect_request()?;
        if conn.index() == 0 {
            let body = Jute::new().buffer(b"unsolicited").stat().into_vec();
            let mut bytes = connect_response_frame(request.timeout_ms, 0x77, &[1; 16], false);
            bytes.extend(reply_frame(77, 1, 0, &body));
            return write_then_linger(conn, &bytes);
        }
        assert_eq!(
            request.session_id, 0x77,
            "the client asks for its session back"
        );
        conn.accept_session(&request)?;
        conn.serve(healthy_answer)
    })
    .unwrap();
    let client = connect(&server).await;
    assert_recovers(&client, &server).await;
    assert_eq!(client.session_id(), 0x77);
}

#[tokio::test]
async fn get_children_claiming_2_pow_31_minus_1_children() {
    let body = Jute::new().i32(i32::MAX).string("only-one").into_vec();
    // The request's own reply is malformed: it gets the decoding error itself.
    let needles = ["malformed server frame", "record truncated", "/a"];
    let what = "get_children with a lying count";
    let case = "2^31-1 children";
    let (client, server) = refuses_reply_body(Call::GetChildren, body, what, &needles, case).await;
    let (children, _) = within(
        "get_children on the next connection",
        client.get_children("/a"),
    )
    .await;
    assert_eq!(children.unwrap().to_vec(), ["x"]);
    assert!(server.panics().is_empty(), "{:?}", server.panics());
}

#[tokio::test]
async fn string_longer_than_its_frame() {
    // getData's data announces 1,000 bytes; the frame ends after 10 (and no Stat).
    let body = Jute::new().i32(1000).raw(&[b'z'; 10]).into_vec();
    let needles = ["record truncated: needed 1000 more bytes, 10 left", "/a"];
    let what = "get_data with a lying length";
    let case = "string longer than its frame";
    let (client, server) = refuses_reply_body(Call::GetData, body, what, &needles, case).await;
    assert_recovers(&client, &server).await;
}

#[tokio::test]
async fn child_name_longer_than_its_frame() {
    let body = Jute::new()
        .i32(2)
        .string("a")
        .i32(i32::MAX)
        .raw(b"bc")
        .into_vec();
    let needles = [
        "record truncated: needed 2147483647 more bytes, 2 left",
        "/a",
    ];
    let what = "get_children with a lying name";
    let case = "child name longer than its frame";
    refuses_reply_body(Call::GetChildren, body, what, &needles, case).await;
}

/// xorshift64*: the random bytes are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// How many connections answer with random bytes.
const RANDOM_ROUNDS: usize = 12;

/// The bytes connection `round` answers with: raw noise on even rounds; on odd ones a
/// frame of the right length whose header and body are noise, or (every fourth) a valid
/// reply header for the call followed by noise.
fn random_answer(round: usize, xid: i32) -> Vec<u8> {
    let mut rng = Rng(0x5EED_0000 + round as u64);
    let len = 16 + (rng.next() % 600) as usize;
    match round % 4 {
        0 | 2 => rng.bytes(len),
        1 => Jute::new().raw(&rng.bytes(len)).into_frame(),
        _ => reply_frame(xid, 1, 0, &rng.bytes(len)),
    }
}

#[tokio::test]
async fn random_bytes() {
    let server = ScriptedServer::start(|conn| {
        conn.handshake()?;
        if conn.index() < RANDOM_ROUNDS {
            let call = conn.read_call()?;
            write_then_linger(conn, &random_answer(conn.index(), call.xid))
        } else {
            conn.serve(healthy_answer)
        }
    })
    .unwrap();
    let client = connect(&server).await;
    let mut outcomes = Vec::new();
    let (_, usage) = measure(async {
        for round in 0..RANDOM_ROUNDS {
            let (result, elapsed) = within(
                &format!("get_data answered with random bytes (round {round})"),
                client.get_data("/a"),
            )
            .await;
            match result {
                Ok((data, _)) => panic!("round {round}: noise accepted as {data:?}"),
                Err(e) => {
                    assert!(
                        matches!(e.kind(), ErrorKind::ConnectionLoss | ErrorKind::Protocol),
                        "round {round}: {}",
                        message(&e)
                    );
                    outcomes.push(format!("round {round} ({elapsed:?}): {e}"));
                }
            }
        }
    })
    .await;
    for outcome in &outcomes {
        println!("{outcome}");
    }
    assert_bounded(usage, "random bytes");
    assert_recovers(&client, &server).await;
    assert_eq!(
        server.connections(),
        RANDOM_ROUNDS + 1,
        "one connection per round"
    );
}

#[tokio::test]
async fn close_in_the_middle_of_a_frame() {
    let server = first_connection_hostile(|conn, call| {
        // 200 bytes announced; the header and 10 bytes of the body sent; then closed.
        let partial = Jute::new()
            .i32(200)
            .i32(call.xid)
            .i64(1)
            .i32(0)
            .raw(&[0; 10])
            .into_vec();
        conn.write(&partial)?;
        conn.close()
    });
    let client = connect(&server).await;
    let (result, elapsed) = within("get_data cut mid-frame", client.get_data("/a")).await;
    let e = result.expect_err("a connection closed mid-frame is an error");
    assert_error(
        &e,
        ErrorKind::ConnectionLoss,
        &[
            "the connection failed",
            "the server closed the connection",
            "/a",
        ],
    );
    let io_error = std::iter::successors(std::error::Error::source(&e), |s| s.source())
        .find_map(|s| s.downcast_ref::<io::Error>())
        .expect("the I/O error is among the sources");
    assert_eq!(io_error.kind(), io::ErrorKind::UnexpectedEof);
    assert!(
        elapsed < Duration::from_millis(READ_TIMEOUT_MS),
        "{elapsed:?}"
    );
    assert_recovers(&client, &server).await;
}

#[tokio::test]
async fn silence_after_the_handshake() {
    // No reply, no ping reply: only the read timeout can end the call, and it must say so.
    let server = first_connection_hostile(|conn, _call| conn.stay_silent(LINGER).map(drop));
    let client = connect(&server).await;
    let (result, elapsed) = within("get_data to a silent server", client.get_data("/a")).await;
    let e = result.expect_err("silence is an error");
    assert_read_timeout(&e, elapsed, &[&read_timeout_needle(), "/a"]);
    assert_recovers(&client, &server).await;
}

#[tokio::test]
async fn large_frame_trickled() {
    // A 1 MB frame (allowed) is announced, then 4 bytes come every 100 ms: at that pace it
    // would take 7 hours. The client must give up at its read timeout: bytes that trickle
    // in are not replies, and do not push the read deadline back. Nor does the length
    // earn a 1 MB buffer: room grows with the bytes that came (the Java client allocates
    // the announced length at once; this one did too until this test).
    let server = first_connection_hostile(|conn, call| {
        let head = Jute::new()
            .i32(1_000_000)
            .i32(call.xid)
            .i64(1)
            .i32(0)
            .i32(1_000_000 - 20)
            .into_vec();
        conn.write(&head)?;
        conn.trickle(&[b'x'; 4 * 100], 4, Duration::from_millis(100))?;
        conn.stay_silent(LINGER).map(drop)
    });
    let client = connect(&server).await;
    let ((result, elapsed), usage) = measure(within(
        "get_data answered by a trickle",
        client.get_data("/a"),
    ))
    .await;
    let e = result.expect_err("a trickle that never ends is an error");
    assert_read_timeout(&e, elapsed, &[&read_timeout_needle(), "/a"]);
    assert_bounded(usage, "1 MB frame trickled");
    assert!(usage.largest <= 256 * 1024, "{usage:?}");
    assert_recovers(&client, &server).await;
}

// ----- Malformed handshakes: connect() fails after its timeout and says why -----

/// A server that answers every ConnectRequest with `answer` (bytes, or nothing at all).
/// With one host, an attempt may take the whole session timeout (the Java client's rule:
/// each host gets its share), so a server that answers at once is tried again and again
/// until connect() gives up, and a silent one once.
/// The error is of kind `ConnectionLoss` and its message has `needles`.
async fn connect_to_hostile_handshake(
    answer: Vec<u8>,
    needles: &[&str],
) -> (Error, ScriptedServer) {
    let silent = answer.is_empty();
    let server = ScriptedServer::start(move |conn| {
        conn.read_connect_request()?;
        write_then_linger(conn, &answer)
    })
    .unwrap();
    let (result, elapsed) = within(
        "connect with a hostile handshake",
        builder(&server).connect(),
    )
    .await;
    let e = result.expect_err("no session can be made");
    assert!(
        elapsed >= SESSION_TIMEOUT - Duration::from_millis(100),
        "{elapsed:?}"
    );
    if !silent {
        assert!(server.connections() >= 2, "the client retries: {server:?}");
    }
    assert!(server.panics().is_empty(), "{:?}", server.panics());
    println!("{}", message(&e));
    assert_error(&e, ErrorKind::ConnectionLoss, needles);
    (e, server)
}

#[tokio::test]
async fn handshake_reply_too_short() {
    // Protocol version and timeout, then the frame ends (no session id, no password).
    let answer = Jute::new().i32(0).i32(2000).raw(&[0, 0]).into_frame();
    let needles = ["the server sent a malformed frame", "record truncated"];
    let (e, server) = connect_to_hostile_handshake(answer, &needles).await;
    let reachable = format!(
        "no ZooKeeper server reachable at {}",
        server.connect_string()
    );
    assert_error(&e, ErrorKind::ConnectionLoss, &[&reachable]);
}

#[tokio::test]
async fn handshake_with_negative_password_length() {
    let answer = Jute::new()
        .i32(0)
        .i32(2000)
        .i64(0x1234)
        .i32(-5)
        .raw(&[0; 16])
        .bool(false)
        .into_frame();
    let needles = [
        "the server sent a malformed frame",
        "invalid length prefix -5",
    ];
    connect_to_hostile_handshake(answer, &needles).await;
}

#[tokio::test]
async fn handshake_with_huge_password_length() {
    let answer = Jute::new()
        .i32(0)
        .i32(2000)
        .i64(0x1234)
        .i32(i32::MAX)
        .raw(&[0; 16])
        .into_frame();
    let needles = ["the server sent a malformed frame", "record truncated"];
    let (_, usage) = measure(connect_to_hostile_handshake(answer, &needles)).await;
    assert_bounded(usage, "handshake with a 2^31-1 password length");
}

#[tokio::test]
async fn handshake_with_negative_frame_length() {
    let needles = [
        "the server sent a malformed frame",
        "invalid length prefix -1",
    ];
    connect_to_hostile_handshake((-1i32).to_be_bytes().to_vec(), &needles).await;
}

#[tokio::test]
async fn silence_instead_of_a_handshake_reply() {
    connect_to_hostile_handshake(Vec::new(), &["no handshake reply"]).await;
}

#[tokio::test]
async fn server_says_the_session_expired() {
    // A negotiated timeout of 0 is the server's way of saying the session expired.
    let answer = connect_response_frame(0, 0, &[0; 16], false);
    let needles = ["(last attempt: the server says the session expired)"];
    connect_to_hostile_handshake(answer, &needles).await;
}

#[tokio::test]
async fn nobody_listening() {
    // Not hostile, just absent: the error says the connection was refused.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let connect_string = format!("127.0.0.1:{port}");
    let (result, elapsed) = within(
        "connect with nobody listening",
        ClientBuilder::new(&connect_string)
            .session_timeout(SESSION_TIMEOUT)
            .connect(),
    )
    .await;
    let e = result.expect_err("nobody listens");
    println!("{}", message(&e));
    assert_error(
        &e,
        ErrorKind::ConnectionLoss,
        &[
            &format!("no ZooKeeper server reachable at {connect_string} within 2000 ms"),
            "(last attempt: could not connect: ",
        ],
    );
    assert!(
        elapsed >= SESSION_TIMEOUT - Duration::from_millis(100),
        "{elapsed:?}"
    );
}

#[tokio::test]
async fn a_valid_handshake_still_connects() {
    // The control case: the hostile-handshake harness with a correct answer connects.
    let server = ScriptedServer::start(|conn| {
        let request = conn.read_connect_request()?;
        assert_eq!(request.timeout_ms, 2000);
        conn.write(&connect_response_frame(2000, 0x42, &[7; 16], false))?;
        conn.serve(healthy_answer)
    })
    .unwrap();
    let client = connect(&server).await;
    assert_eq!(client.session_id(), 0x42);
    let (result, _) = within("get_data", client.get_data("/a")).await;
    assert_eq!(&result.unwrap().0[..], b"fine");
    let (closed, _) = within("close", client.close()).await;
    closed.unwrap();
    assert_eq!(server.connections(), 1);
}

#[tokio::test]
async fn notifications_without_end_do_not_starve_the_timers() {
    // A server that answers nothing and streams notifications as fast as it can: the socket
    // is always readable. Notifications do not prove the server reads what we send, so the
    // read timeout must still fire and fail the call; a driver that serves the readable
    // socket before its timers never got to them, and the call waited forever.
    let server = first_connection_hostile(|conn, _call| {
        let event = Jute::new().i32(3).i32(3).string("/noise").into_vec();
        let one = reply_frame(-1, -1, 0, &event);
        let batch: Vec<u8> = one.iter().copied().cycle().take(one.len() * 4096).collect();
        // Bounded, so that a client that never gives up does not keep the test running.
        let end = Instant::now() + LINGER;
        while Instant::now() < end {
            conn.write(&batch)?;
        }
        Ok(())
    });
    let client = connect(&server).await;
    let (result, elapsed) = within("get_data under a flood of notifications", async {
        client.get_data("/a").await
    })
    .await;
    let e = result.expect_err("the server never answers");
    assert_read_timeout(&e, elapsed, &["read timeout"]);
    assert_recovers(&client, &server).await;
}
