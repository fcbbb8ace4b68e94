//! The model served on a port others can reach: a client may only resume its own session, a
//! server started later does not know an earlier one's sessions, and one client cannot make
//! it queue without bound or hold connections it never uses.

mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use support::wire_client::{WireConnection, DEADLINE};
use zkrs_codec::{
    encode_connect_request,
    jute::{put_bool, put_buffer_opt, put_i32, put_str},
    Acl, ConnectRequest, Encode, List, OpCode,
};
use zkrs_model::{ServerConfig, TcpServer};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn serve(rt: &tokio::runtime::Runtime, config: ServerConfig) -> TcpServer {
    rt.block_on(TcpServer::start_with(config)).expect("start")
}

/// splitmix64, the mixing anyone reading the model's source could apply to a session id
/// (one step of the stream from state `z`; the state is a copy, dropped).
fn mix(mut z: u64) -> u64 {
    zkrs_codec::__private::splitmix64(&mut z)
}

fn guessed_password(id: i64) -> [u8; 16] {
    let a = mix(id as u64);
    let b = mix(a);
    let mut p = [0u8; 16];
    p[..8].copy_from_slice(&a.to_be_bytes());
    p[8..].copy_from_slice(&b.to_be_bytes());
    p
}

#[test]
fn a_guessed_password_does_not_resume_another_session() {
    let rt = runtime();
    let server = serve(&rt, ServerConfig::default());
    let (_owner, owner) = WireConnection::connect(server.addr(), 4000, None, 0);
    let owner = owner.expect("the owner's session");
    for guess in [guessed_password(owner.session_id), [0u8; 16]] {
        let (_thief, answer) =
            WireConnection::connect(server.addr(), 4000, Some((owner.session_id, &guess)), 0);
        if let Some(answer) = answer {
            assert_eq!(
                answer.timeout_ms, 0,
                "session {:#x} resumed with a guessed password",
                owner.session_id
            );
        }
    }
    // The owner's own password still resumes it.
    let (_again, again) = WireConnection::connect(
        server.addr(),
        4000,
        Some((owner.session_id, &owner.passwd)),
        0,
    );
    assert!(again.expect("resumed").timeout_ms > 0);
}

#[test]
fn a_stale_client_of_an_earlier_server_is_told_its_session_expired() {
    let rt = runtime();
    let mut config = ServerConfig::default();
    config.epoch_ms = 1_800_000_000_000;
    let mut earlier = serve(&rt, config.clone());
    let addr = earlier.addr();
    let (_stale, stale) = WireConnection::connect(addr, 4000, None, 0);
    let stale = stale.expect("a session of the earlier server");
    rt.block_on(earlier.stop());
    drop(earlier);
    // The same port a second later (the clock the session ids are seeded from).
    config.epoch_ms += 1000;
    let later = rt
        .block_on(TcpServer::start_at(addr, config))
        .expect("the same port again");
    let (_fresh, fresh) = WireConnection::connect(addr, 4000, None, 0);
    let fresh = fresh.expect("a session of the later server");
    assert_ne!(
        fresh.session_id, stale.session_id,
        "the same session id again"
    );
    let (_back, back) =
        WireConnection::connect(addr, 4000, Some((stale.session_id, &stale.passwd)), 0);
    if let Some(back) = back {
        assert_eq!(back.timeout_ms, 0, "a stale client took a later session");
    }
    drop(later);
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut f = (body.len() as i32).to_be_bytes().to_vec();
    f.extend_from_slice(body);
    f
}

fn request(xid: i32, op: OpCode, body: &[u8]) -> Vec<u8> {
    let mut b = xid.to_be_bytes().to_vec();
    b.extend_from_slice(&op.code().to_be_bytes());
    b.extend_from_slice(body);
    frame(&b)
}

/// A raw connection with a session, its handshake's answer read.
fn raw_session(addr: SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect_timeout(&addr, DEADLINE).expect("connect");
    stream.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut out = BytesMut::new();
    encode_connect_request(
        &mut out,
        &ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: 0,
            timeout_ms: 4000,
            session_id: 0,
            passwd: &[0; 16],
        },
        false,
    );
    stream.write_all(&out).unwrap();
    let mut len = [0u8; 4];
    stream.read_exact(&mut len).expect("connect response");
    let mut body = vec![0u8; i32::from_be_bytes(len) as usize];
    stream.read_exact(&mut body).expect("connect response");
    stream
}

/// Reads until the server closes (or resets) the connection: the bytes read, and whether it
/// closed within the deadline.
fn read_to_close(stream: &mut TcpStream) -> (usize, bool) {
    let deadline = Instant::now() + DEADLINE;
    let mut total = 0;
    let mut buf = vec![0u8; 64 * 1024];
    while Instant::now() < deadline {
        match stream.read(&mut buf) {
            Ok(0) => return (total, true),
            Ok(n) => total += n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return (total, false)
            }
            Err(_) => return (total, true),
        }
    }
    (total, false)
}

#[test]
fn a_client_that_never_reads_is_closed() {
    const DATA: usize = 1024;
    // Far more than the kernel's buffers and the server's queue hold together: the client
    // asks until its writes fail (the server closed) or block past the write timeout (the
    // server stopped reading without closing), and reads only then.
    const GETS: usize = 1_000_000;
    let rt = runtime();
    let server = serve(&rt, ServerConfig::default());
    let mut stream = raw_session(server.addr());
    let mut create = BytesMut::new();
    put_str(&mut create, "/big");
    put_buffer_opt(&mut create, Some(&[7u8; DATA]));
    List::from(Acl::OPEN_ACL_UNSAFE).encode(&mut create);
    put_i32(&mut create, 0);
    stream
        .write_all(&request(1, OpCode::Create, &create))
        .unwrap();
    let mut get = BytesMut::new();
    put_str(&mut get, "/big");
    put_bool(&mut get, false);
    let one = request(2, OpCode::GetData, &get);
    // Up to 1 GB of answers asked for, none read while asking.
    stream.set_write_timeout(Some(DEADLINE)).unwrap();
    let mut batch = Vec::new();
    for _ in 0..100 {
        batch.extend_from_slice(&one);
    }
    let mut written = 0;
    while written < GETS {
        if stream.write_all(&batch).is_err() {
            break;
        }
        written += 100;
    }
    let (read, closed) = read_to_close(&mut stream);
    eprintln!("{written} getData asked, {read} bytes of answers read, closed: {closed}");
    assert!(
        closed && read < GETS * DATA,
        "{written} getData asked, {read} bytes of answers read, closed: {closed}"
    );
    drop(server);
}

#[test]
fn connections_per_address_are_limited() {
    let rt = runtime();
    let mut config = ServerConfig::default();
    config.max_client_cnxns = 3;
    let server = serve(&rt, config);
    let held: Vec<_> = (0..3)
        .map(|_| {
            let (conn, answer) = WireConnection::connect(server.addr(), 4000, None, 0);
            assert!(answer.is_some(), "a connection within the limit");
            conn
        })
        .collect();
    let (_over, answer) = WireConnection::connect(server.addr(), 4000, None, 0);
    assert!(
        answer.is_none(),
        "a fourth connection from 127.0.0.1 served"
    );
    drop(held);
    // Closed ones free their places (the server sees them gone a moment later).
    let deadline = Instant::now() + DEADLINE;
    loop {
        let (_conn, answer) = WireConnection::connect(server.addr(), 4000, None, 0);
        if answer.is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "no place freed");
    }
}

#[test]
fn a_connection_without_a_handshake_is_closed() {
    let rt = runtime();
    let mut config = ServerConfig::default();
    config.handshake_timeout = Duration::from_millis(300);
    let server = serve(&rt, config);
    let mut silent = TcpStream::connect_timeout(&server.addr(), DEADLINE).expect("connect");
    silent.set_read_timeout(Some(DEADLINE)).unwrap();
    let started = Instant::now();
    let (read, closed) = read_to_close(&mut silent);
    assert!(
        closed && read == 0,
        "still open after {:?}",
        started.elapsed()
    );
    // A client that shakes hands in time is served as before.
    let (_conn, answer) = WireConnection::connect(server.addr(), 4000, None, 0);
    assert!(answer.is_some());
}
