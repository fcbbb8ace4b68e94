//! Talks the ZooKeeper wire protocol (a minimal hand-written subset: this
//! crate has no dependencies, not even on the workspace's codec) to check
//! that extended types (TTL nodes) are on by default, can be turned off, and
//! that data survives a restart.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use zkrs_testkit::{four_letter_word, ServerOptions, TestingServer};

const OP_CREATE_TTL: i32 = 21;
const PERSISTENT_WITH_TTL: i32 = 5;
const ZOK: i32 = 0;
const ZUNIMPLEMENTED: i32 = -6;

/// Jute encoding helpers (big-endian, length-prefixed strings and buffers).
#[derive(Default)]
struct Jute(Vec<u8>);

impl Jute {
    fn int(mut self, v: i32) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn long(mut self, v: i64) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn bytes(self, v: &[u8]) -> Self {
        let mut s = self.int(v.len() as i32);
        s.0.extend_from_slice(v);
        s
    }
    fn bool(mut self, v: bool) -> Self {
        self.0.push(u8::from(v));
        self
    }
}

struct Session(TcpStream);

impl Session {
    fn connect(addr: SocketAddr) -> Session {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut session = Session(stream);
        // ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId,
        // passwd, readOnly.
        session.send(
            Jute::default()
                .int(0)
                .long(0)
                .int(4000)
                .long(0)
                .bytes(&[0; 16])
                .bool(false),
        );
        let response = session.receive();
        assert!(response.len() >= 16, "short ConnectResponse {response:?}");
        session
    }

    fn send(&mut self, body: Jute) {
        let frame = Jute::default().bytes(&body.0);
        self.0.write_all(&frame.0).unwrap();
    }

    fn receive(&mut self) -> Vec<u8> {
        let mut len = [0u8; 4];
        self.0.read_exact(&mut len).unwrap();
        let mut body = vec![0u8; i32::from_be_bytes(len) as usize];
        self.0.read_exact(&mut body).unwrap();
        body
    }

    /// Creates a persistent TTL node; returns the reply's error code.
    fn create_ttl(&mut self, path: &str, ttl_ms: i64) -> i32 {
        let request = Jute::default()
            .int(1) // xid
            .int(OP_CREATE_TTL)
            .bytes(path.as_bytes())
            .bytes(b"data")
            .int(1) // one ACL: world:anyone, all permissions
            .int(31)
            .bytes(b"world")
            .bytes(b"anyone")
            .int(PERSISTENT_WITH_TTL)
            .long(ttl_ms);
        self.send(request);
        // ReplyHeader: xid (4), zxid (8), err (4).
        let reply = self.receive();
        assert_eq!(&reply[..4], &1i32.to_be_bytes(), "xid");
        i32::from_be_bytes(reply[12..16].try_into().unwrap())
    }
}

fn node_count(server: &TestingServer) -> u64 {
    let answer = four_letter_word(server.address(), "srvr", Duration::from_secs(5)).unwrap();
    answer
        .lines()
        .find_map(|l| l.strip_prefix("Node count:"))
        .unwrap_or_else(|| panic!("no node count in {answer}"))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn ttl_nodes_work_by_default_and_data_survives_restart() {
    let server = TestingServer::start().expect("start");
    let before = node_count(&server);
    {
        let mut session = Session::connect(server.address());
        assert_eq!(session.create_ttl("/zkr-ttl", 60_000), ZOK);
    }
    assert_eq!(node_count(&server), before + 1);

    server.restart().unwrap();
    assert_eq!(
        node_count(&server),
        before + 1,
        "the node survived the restart"
    );
}

#[test]
fn ttl_nodes_can_be_disabled() {
    let server =
        TestingServer::start_with(ServerOptions::new().extended_types(false)).expect("start");
    let mut session = Session::connect(server.address());
    assert_eq!(session.create_ttl("/zkr-ttl", 60_000), ZUNIMPLEMENTED);
}
