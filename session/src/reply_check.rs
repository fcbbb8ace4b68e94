//! Checks a reply body against the record its request expects, before anyone sees it.
//!
//! Replies are decoded lazily by the caller, in the caller's task; this check runs in the
//! session core so that a malformed frame closes the connection (and the caller gets a clear
//! error) instead of surfacing later as a half-read value.

use zkrs_codec::*;

/// Decodes `body` as the reply to `op` (the record [`OpCode::reply_record`] names) and throws
/// the value away.
pub fn check_reply(op: OpCode, body: &[u8]) -> Result<(), DecodeError> {
    match op.reply_record() {
        ReplyRecord::Create => CreateResponse::decode_prefix(body).map(drop),
        ReplyRecord::Create2 => Create2Response::decode_prefix(body).map(drop),
        ReplyRecord::Stat => StatResponse::decode_prefix(body).map(drop),
        ReplyRecord::GetData => GetDataResponse::decode_prefix(body).map(drop),
        ReplyRecord::GetAcl => GetAclResponse::decode_prefix(body).map(drop),
        ReplyRecord::GetChildren => GetChildrenResponse::decode_prefix(body).map(drop),
        ReplyRecord::GetChildren2 => GetChildren2Response::decode_prefix(body).map(drop),
        ReplyRecord::Sync => SyncResponse::decode_prefix(body).map(drop),
        ReplyRecord::Multi => MultiResponse::decode_prefix(body).map(drop),
        ReplyRecord::GetEphemerals => GetEphemeralsResponse::decode_prefix(body).map(drop),
        ReplyRecord::GetAllChildrenNumber => {
            GetAllChildrenNumberResponse::decode_prefix(body).map(drop)
        }
        ReplyRecord::WhoAmI => WhoAmIResponse::decode_prefix(body).map(drop),
        ReplyRecord::SetSasl => SetSaslResponse::decode_prefix(body).map(drop),
        // No body (`Empty`). And addWatch's `ErrorResponse` (`Error`): nothing reads it, the
        // header's error code says all, so a body short of its 4 bytes is let through too.
        _ => Ok(()),
    }
}
