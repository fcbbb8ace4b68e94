//! The opcode table against the protocol: every opcode's facts written out once more, by
//! name, and the records themselves.

use bytes::BytesMut;

use super::*;
use crate::{
    encode_request, Acl, AddWatchMode, AddWatchRequest, Create2Response, CreateMode, CreateRequest,
    CreateTtlRequest, Encode, GetAclResponse, GetChildren2Response, GetChildrenResponse,
    GetDataResponse, List, PathRecord, PathVersionRequest, PathWatchRequest, SetAclRequest,
    SetDataRequest, Stat, StatResponse, WatcherType, WatchesRequest,
};

/// The opcode list of the project's ZooKeeper fact sheet (ZooDefs.OpCode), name and code.
const FACT_SHEET: &[(&str, i32)] = &[
    ("notification", 0),
    ("create", 1),
    ("delete", 2),
    ("exists", 3),
    ("getData", 4),
    ("setData", 5),
    ("getACL", 6),
    ("setACL", 7),
    ("getChildren", 8),
    ("sync", 9),
    ("ping", 11),
    ("getChildren2", 12),
    ("check", 13),
    ("multi", 14),
    ("create2", 15),
    ("reconfig", 16),
    ("checkWatches", 17),
    ("removeWatches", 18),
    ("createContainer", 19),
    ("deleteContainer", 20),
    ("createTTL", 21),
    ("multiRead", 22),
    ("auth", 100),
    ("setWatches", 101),
    ("sasl", 102),
    ("getEphemerals", 103),
    ("getAllChildrenNumber", 104),
    ("setWatches2", 105),
    ("addWatch", 106),
    ("whoAmI", 107),
    ("createSession", -10),
    ("closeSession", -11),
    ("error", -1),
];

/// Each opcode's row, by ZooKeeper's name: (is a write, request starts with a path, reply
/// record, first server line that knows it).
fn expected(name: &str) -> (bool, bool, ReplyRecord, Option<(u32, u32)>) {
    use ReplyRecord as R;
    let v36 = Some((3, 6));
    match name {
        "notification" => (false, false, R::Empty, None),
        "create" => (true, true, R::Create, None),
        "delete" => (true, true, R::Empty, None),
        "exists" => (false, true, R::Stat, None),
        "getData" => (false, true, R::GetData, None),
        "setData" => (true, true, R::Stat, None),
        "getACL" => (false, true, R::GetAcl, None),
        "setACL" => (true, true, R::Stat, None),
        "getChildren" => (false, true, R::GetChildren, None),
        "sync" => (false, true, R::Sync, None),
        "ping" => (false, false, R::Empty, None),
        "getChildren2" => (false, true, R::GetChildren2, None),
        "check" => (true, true, R::Empty, None),
        "multi" => (true, false, R::Multi, None),
        "create2" => (true, true, R::Create2, None),
        "reconfig" => (true, false, R::GetData, None),
        "checkWatches" => (false, true, R::Empty, None),
        "removeWatches" => (false, true, R::Empty, None),
        "createContainer" => (true, true, R::Create2, None),
        "deleteContainer" => (true, false, R::Empty, None),
        "createTTL" => (true, true, R::Create2, None),
        "multiRead" => (false, false, R::Multi, v36),
        "auth" => (false, false, R::Empty, None),
        "setWatches" => (false, false, R::Empty, None),
        "sasl" => (false, false, R::SetSasl, None),
        "getEphemerals" => (false, true, R::GetEphemerals, v36),
        "getAllChildrenNumber" => (false, true, R::GetAllChildrenNumber, v36),
        "setWatches2" => (false, false, R::Empty, v36),
        "addWatch" => (false, true, R::Error, v36),
        "whoAmI" => (false, false, R::WhoAmI, Some((3, 7))),
        "createSession" => (false, false, R::Empty, None),
        "closeSession" => (false, false, R::Empty, None),
        "error" => (false, false, R::Empty, None),
        other => panic!("no expectation for {other}"),
    }
}

#[test]
fn every_opcode_of_the_fact_sheet_and_no_other() {
    for &(name, code) in FACT_SHEET {
        let op = OpCode::from_code(code).unwrap_or_else(|| panic!("{name} ({code}) unknown"));
        assert_eq!(op.name(), name, "code {code}");
    }
    assert_eq!(OpCode::ALL.len(), FACT_SHEET.len());
}

#[test]
fn every_opcode_has_its_facts() {
    for &op in OpCode::ALL {
        let (write, path, reply, since) = expected(op.name());
        assert_eq!(op.is_write(), write, "{op}: is_write");
        assert_eq!(op.request_starts_with_path(), path, "{op}: path first");
        assert_eq!(op.reply_record(), reply, "{op}: reply record");
        assert_eq!(op.server_since(), since, "{op}: server_since");
        assert_eq!(
            op.reply_ends_with_stat(),
            reply.ends_with_stat(),
            "{op}: reply ends with a Stat"
        );
    }
}

#[test]
fn a_multi_holds_writes_and_a_multi_read_reads() {
    // The fact sheet: multi = writes (create/delete/setData/check), multiRead = reads
    // (getData/getChildren).
    assert!(OpCode::Multi.is_write());
    for op in [
        OpCode::Create,
        OpCode::Delete,
        OpCode::SetData,
        OpCode::Check,
    ] {
        assert!(op.is_write(), "{op}");
    }
    assert!(!OpCode::MultiRead.is_write());
    for op in [OpCode::GetData, OpCode::GetChildren] {
        assert!(!op.is_write(), "{op}");
    }
}

#[test]
fn the_replies_that_end_with_a_stat() {
    let with_stat: Vec<&str> = OpCode::ALL
        .iter()
        .filter(|op| op.reply_ends_with_stat())
        .map(|op| op.name())
        .collect();
    assert_eq!(
        with_stat,
        [
            "exists",
            "getData",
            "setData",
            "getACL",
            "setACL",
            "getChildren2",
            "create2",
            "reconfig",
            "createContainer",
            "createTTL"
        ]
    );
}

/// Each reply record, encoded, ends with the Stat given when (and only when) the table says
/// it does.
#[test]
fn a_stat_at_the_end_is_where_the_table_says() {
    let stat = Stat {
        czxid: 0x0102_0304_0506_0708,
        mzxid: 9,
        pzxid: 10,
        ..Stat::default()
    };
    let tail = stat.to_bytes();
    let encoded = [
        (ReplyRecord::Create, PathRecord { path: "/a" }.to_bytes()),
        (
            ReplyRecord::Create2,
            Create2Response { path: "/a", stat }.to_bytes(),
        ),
        (ReplyRecord::Stat, StatResponse { stat }.to_bytes()),
        (
            ReplyRecord::GetData,
            GetDataResponse {
                data: Some(b"x"),
                stat,
            }
            .to_bytes(),
        ),
        (
            ReplyRecord::GetAcl,
            GetAclResponse {
                acl: List::Slice(Acl::OPEN_ACL_UNSAFE),
                stat,
            }
            .to_bytes(),
        ),
        (
            ReplyRecord::GetChildren,
            GetChildrenResponse {
                children: List::Slice(&["x"]),
            }
            .to_bytes(),
        ),
        (
            ReplyRecord::GetChildren2,
            GetChildren2Response {
                children: List::Slice(&["x"]),
                stat,
            }
            .to_bytes(),
        ),
    ];
    for (record, bytes) in encoded {
        assert_eq!(
            bytes.ends_with(&tail),
            record.ends_with_stat(),
            "{record:?}"
        );
    }
}

/// A request frame of `op` with `record`.
fn frame<R: Encode>(op: OpCode, record: &R) -> BytesMut {
    let mut buf = BytesMut::new();
    encode_request(&mut buf, 1, op, record);
    buf
}

/// The request records of the operations the table says start with a path, encoded: the
/// path's length is at bytes 12..16 of the frame and the path follows.
#[test]
fn a_path_first_is_where_the_table_says() {
    let path = "/some/node";
    let acl = List::Slice(Acl::OPEN_ACL_UNSAFE);
    let create = CreateRequest {
        path,
        data: Some(b"d"),
        acl,
        mode: CreateMode::Persistent,
    };
    let mut with_path = vec![
        frame(OpCode::Create, &create),
        frame(OpCode::Create2, &create),
        frame(OpCode::CreateContainer, &create),
        frame(
            OpCode::CreateTtl,
            &CreateTtlRequest {
                path,
                data: None,
                acl,
                mode: CreateMode::PersistentWithTtl,
                ttl_ms: 1000,
            },
        ),
        frame(OpCode::Delete, &PathVersionRequest { path, version: 3 }),
        frame(OpCode::Check, &PathVersionRequest { path, version: 3 }),
        frame(
            OpCode::SetData,
            &SetDataRequest {
                path,
                data: Some(b"d"),
                version: -1,
            },
        ),
        frame(
            OpCode::SetAcl,
            &SetAclRequest {
                path,
                acl,
                version: -1,
            },
        ),
        frame(
            OpCode::AddWatch,
            &AddWatchRequest {
                path,
                mode: AddWatchMode::PersistentRecursive,
            },
        ),
    ];
    for op in [
        OpCode::Exists,
        OpCode::GetData,
        OpCode::GetChildren,
        OpCode::GetChildren2,
    ] {
        with_path.push(frame(op, &PathWatchRequest { path, watch: true }));
    }
    for op in [
        OpCode::GetAcl,
        OpCode::Sync,
        OpCode::GetEphemerals,
        OpCode::GetAllChildrenNumber,
    ] {
        with_path.push(frame(op, &PathRecord { path }));
    }
    for op in [OpCode::CheckWatches, OpCode::RemoveWatches] {
        let record = WatchesRequest {
            path,
            watcher_type: WatcherType::Any,
        };
        with_path.push(frame(op, &record));
    }

    let op_of = |frame: &BytesMut| {
        OpCode::from_code(i32::from_be_bytes(frame[8..12].try_into().unwrap())).unwrap()
    };
    let listed: Vec<OpCode> = with_path.iter().map(op_of).collect();
    for &op in OpCode::ALL {
        assert_eq!(
            op.request_starts_with_path(),
            listed.contains(&op),
            "{op}: the table and the records disagree"
        );
    }
    for frame in &with_path {
        let len = i32::from_be_bytes(frame[12..16].try_into().unwrap());
        assert_eq!(len as usize, path.len(), "{}", op_of(frame));
        assert_eq!(
            &frame[16..16 + path.len()],
            path.as_bytes(),
            "{}",
            op_of(frame)
        );
    }
}
