//! Checks a reply body against the record its request expects, before anyone sees it.
//!
//! Replies are decoded lazily by the caller, in the caller's task; this check runs in the
//! session core so that a malformed frame closes the connection (and the caller gets a clear
//! error) instead of surfacing later as a half-read value.

use zkrs_codec::*;

/// Decodes `body` as the reply to `op` and throws the value away.
pub fn check_reply(op: OpCode, body: &[u8]) -> Result<(), DecodeError> {
    match op {
        OpCode::Create => CreateResponse::decode_prefix(body).map(drop),
        OpCode::Create2 | OpCode::CreateContainer | OpCode::CreateTtl => {
            Create2Response::decode_prefix(body).map(drop)
        }
        OpCode::Exists | OpCode::SetData | OpCode::SetAcl => {
            StatResponse::decode_prefix(body).map(drop)
        }
        OpCode::GetData | OpCode::Reconfig => GetDataResponse::decode_prefix(body).map(drop),
        OpCode::GetAcl => GetAclResponse::decode_prefix(body).map(drop),
        OpCode::GetChildren => GetChildrenResponse::decode_prefix(body).map(drop),
        OpCode::GetChildren2 => GetChildren2Response::decode_prefix(body).map(drop),
        OpCode::Sync => SyncResponse::decode_prefix(body).map(drop),
        OpCode::Multi | OpCode::MultiRead => MultiResponse::decode_prefix(body).map(drop),
        OpCode::GetEphemerals => GetEphemeralsResponse::decode_prefix(body).map(drop),
        OpCode::GetAllChildrenNumber => GetAllChildrenNumberResponse::decode_prefix(body).map(drop),
        OpCode::WhoAmI => WhoAmIResponse::decode_prefix(body).map(drop),
        OpCode::Sasl => SetSaslResponse::decode_prefix(body).map(drop),
        // No body: delete, check, removeWatches, checkWatches, addWatch, closeSession, ...
        _ => Ok(()),
    }
}
