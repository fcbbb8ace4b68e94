//! For a simulation's check of ZooKeeper's guarantees: the driver tells a recorder what the
//! application saw, in the order it saw it: each request it took (in the order the session
//! sends them), each answer as it goes to the caller, each watch event as it goes to the
//! application. Set only through `__private::with_recorder`; without one, a request costs one
//! branch.

use zkrs_codec::{EventType, KeeperState, OpCode};

use crate::error::Error;

/// Receives what the driver did, as it does it. Called on the driver's task: cheap, no I/O.
pub trait Recorder: Send + Sync + 'static {
    /// One step of the history.
    fn record(&self, step: Recorded<'_>);
}

impl std::fmt::Debug for dyn Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Recorder")
    }
}

/// One step of a client's history.
#[derive(Debug)]
#[non_exhaustive]
pub enum Recorded<'a> {
    /// The driver took request `id` (numbered in the order taken, from 1).
    Submitted {
        /// The request's number.
        id: u64,
        /// Its operation.
        op: OpCode,
        /// Its server path, for an operation whose request starts with one.
        path: Option<&'a str>,
        /// The one-shot or persistent watcher it registers on success, if any.
        watcher: Option<u64>,
    },
    /// Request `id`'s answer went to its caller.
    Answered {
        /// The request's number.
        id: u64,
        /// The session now (the one the answer came on, for an answer from a server).
        session: i64,
        /// The answer.
        answer: Answer<'a>,
    },
    /// A watch event went to the application.
    Delivered {
        /// The watcher it went to.
        watcher: u64,
        /// The session now.
        session: i64,
        /// What happened.
        event_type: EventType,
        /// The connection state it carries.
        state: KeeperState,
        /// Its server path (empty for a session event).
        path: &'a str,
    },
}

/// A request's answer.
#[derive(Debug)]
pub enum Answer<'a> {
    /// A reply without error: the zxid of its header and its body.
    Ok {
        /// The reply header's zxid.
        zxid: i64,
        /// The reply body.
        body: &'a [u8],
    },
    /// An error, from the server or local.
    Err(&'a Error),
}

/// The server path a request frame (length prefix, xid, type, then the record) starts
/// with, for the operations whose record starts with one
/// ([`OpCode::request_starts_with_path`]).
pub(crate) fn request_path(op: OpCode, frame: &[u8]) -> Option<&str> {
    if !op.request_starts_with_path() {
        return None;
    }
    let len = i32::from_be_bytes(frame.get(12..16)?.try_into().ok()?);
    let end = 16usize.checked_add(usize::try_from(len).ok()?)?;
    std::str::from_utf8(frame.get(16..end)?).ok()
}

#[cfg(test)]
mod tests {
    use bytes::BytesMut;
    use zkrs_codec::{
        encode_header_only, encode_request, CreateMode, CreateRequest, List, MultiList,
        MultiRequest, PathRecord, PathWatchRequest, WatcherType, WatchesRequest,
    };

    use super::*;

    fn frame(op: OpCode, record: &impl zkrs_codec::Encode) -> BytesMut {
        let mut buf = BytesMut::new();
        encode_request(&mut buf, 7, op, record);
        buf
    }

    #[test]
    fn the_path_a_request_starts_with() {
        let read = PathWatchRequest {
            path: "/app/node",
            watch: true,
        };
        assert_eq!(
            request_path(OpCode::GetData, &frame(OpCode::GetData, &read)),
            Some("/app/node")
        );
        let create = CreateRequest {
            path: "/app/new",
            data: Some(b"x"),
            acl: List::Slice(zkrs_codec::Acl::OPEN_ACL_UNSAFE),
            mode: CreateMode::Persistent,
        };
        assert_eq!(
            request_path(OpCode::Create2, &frame(OpCode::Create2, &create)),
            Some("/app/new")
        );
        let sync = frame(OpCode::Sync, &PathRecord { path: "/" });
        assert_eq!(request_path(OpCode::Sync, &sync), Some("/"));
    }

    #[test]
    fn no_path_where_the_request_has_none_first() {
        let multi = frame(
            OpCode::Multi,
            &MultiRequest {
                ops: MultiList::Slice(&[]),
            },
        );
        assert_eq!(request_path(OpCode::Multi, &multi), None);
        let mut who = BytesMut::new();
        encode_header_only(&mut who, 7, OpCode::WhoAmI);
        assert_eq!(request_path(OpCode::WhoAmI, &who), None);
    }

    #[test]
    fn the_path_of_watch_checks_and_listings() {
        let remove = WatchesRequest {
            path: "/app",
            watcher_type: WatcherType::Any,
        };
        for op in [OpCode::RemoveWatches, OpCode::CheckWatches] {
            assert_eq!(request_path(op, &frame(op, &remove)), Some("/app"), "{op}");
        }
        for op in [OpCode::GetEphemerals, OpCode::GetAllChildrenNumber] {
            let listing = frame(op, &PathRecord { path: "/app" });
            assert_eq!(request_path(op, &listing), Some("/app"), "{op}");
        }
    }

    #[test]
    fn a_cut_frame_has_no_path() {
        let read = frame(
            OpCode::Exists,
            &PathWatchRequest {
                path: "/app/node",
                watch: false,
            },
        );
        assert_eq!(request_path(OpCode::Exists, &read[..14]), None);
        assert_eq!(request_path(OpCode::Exists, &read[..20]), None);
    }
}
