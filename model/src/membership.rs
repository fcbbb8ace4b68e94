//! What a server keeps as a member of an ensemble ([`Membership`]) and what it hands to the
//! ensemble ([`Forward`]); the member's behaviour is in `member.rs`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use bytes::Bytes;
use zkrs_codec::OpCode;

use crate::acl::AuthId;
use crate::connection_id::ConnectionId;

/// What a member hands to the ensemble.
#[derive(Debug, Clone)]
pub(crate) enum Forward {
    /// A write or multi to order.
    Write {
        conn: ConnectionId,
        xid: i32,
        op: OpCode,
        body: Bytes,
        session: i64,
        auth: Vec<AuthId>,
    },
    /// A new session.
    CreateSession { conn: ConnectionId, timeout_ms: i32 },
    /// A session to resume, checked against the leader's session table.
    Resume {
        conn: ConnectionId,
        session: i64,
        passwd: Vec<u8>,
        timeout_ms: i32,
    },
    /// closeSession.
    CloseSession {
        conn: ConnectionId,
        xid: i32,
        session: i64,
    },
    /// sync: answered once the member has applied what the leader had when it got there.
    Sync {
        conn: ConnectionId,
        xid: i32,
        path: String,
    },
    /// Traffic of a session (the leader's expiry clock).
    Touch(i64),
}

/// The member's place in the ensemble, as its four-letter words report it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Role {
    /// `serverId`: the member's index plus one.
    pub id: usize,
    /// Set while it leads: (learners, those of them serving).
    pub leading: Option<(usize, usize)>,
}

/// The member side of a server in an ensemble.
#[derive(Debug, Default)]
pub(crate) struct Membership {
    pub role: Role,
    pub outbox: Vec<Forward>,
    pub waiting: BTreeSet<ConnectionId>,
    pub queued: BTreeMap<ConnectionId, VecDeque<Bytes>>,
}
