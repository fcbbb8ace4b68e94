//! Sessions in the sans-I/O ensemble, on virtual time: what keeps a session alive at the
//! leader.

use std::time::{Duration, Instant};

use bytes::BytesMut;
use zkrs_codec::{
    encode_connect_request, encode_request, Acl, ConnectRequest, CreateMode, CreateRequest, List,
    OpCode,
};
use zkrs_model::{ServerConfig, WireEnsemble};

/// No body (pings).
struct Empty;

impl zkrs_codec::Encode for Empty {
    fn encode(&self, _: &mut BytesMut) {}
}

#[test]
fn pings_waiting_behind_a_write_on_a_held_member_keep_the_session_alive() {
    // Found by the simulation (zkrs-sim, mutex suite, seed 1007486): the model touched a
    // session only when a request's turn came, so pings queued behind a write on a lagging
    // member never reached the leader, which expired the session while the member still
    // served it, and two lock holders followed. ZooKeeper touches a session when a request
    // arrives.
    let start = Instant::now();
    let mut e = WireEnsemble::new(3, ServerConfig::default(), start);
    let t = |ms| start + Duration::from_millis(ms);
    let conn = e.accept(1, "127.0.0.1", t(0));
    let mut buf = BytesMut::new();
    encode_connect_request(
        &mut buf,
        &ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: 0,
            timeout_ms: 2000,
            session_id: 0,
            passwd: &[0; 16],
        },
        false,
    );
    e.handle_input(1, conn, &buf, t(0));
    while e.poll_transmit().is_some() {}
    let sessions = e.session_ids();
    assert_eq!(sessions.len(), 1);
    let session = sessions[0];

    e.hold(1);
    let mut create = BytesMut::new();
    let req = CreateRequest {
        path: "/held",
        data: Some(b"x"),
        acl: List::from(Acl::OPEN_ACL_UNSAFE),
        mode: CreateMode::Ephemeral,
    };
    encode_request(&mut create, 1, OpCode::Create, &req);
    e.handle_input(1, conn, &create, t(10));
    // A ping every 500 ms for 4 s, twice the session timeout, each waiting behind the create.
    for k in 1..=8 {
        let now = t(10 + 500 * k);
        let mut ping = BytesMut::new();
        encode_request(&mut ping, -2, OpCode::Ping, &Empty);
        e.handle_input(1, conn, &ping, now);
        e.handle_timeout(now);
        while e.poll_transmit().is_some() {}
        assert!(
            e.session_ids().contains(&session),
            "at {} ms the leader expired session {session:x} while its pings waited on the member",
            10 + 500 * k
        );
    }
}
