//! What a chunk of bytes on a simulated connection says, for the trace: each request's
//! xid, operation and path, each reply's xid, zxid and error (with the names a listing
//! returned), each watch event. Best effort: bytes it cannot read are summed up by size, and
//! nothing here decides anything.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use zkrs_codec::{ErrorCode, OpCode};

/// A connection's frames as the trace reads them: which handshake frame came, and the
/// operation of each request still unanswered (a reply carries only its xid).
#[derive(Debug, Default)]
pub(crate) struct FrameReader {
    requests_started: bool,
    replies_started: bool,
    pending: BTreeMap<i32, i32>,
    /// A frame split across chunks, to finish with the next.
    partial_requests: Vec<u8>,
    partial_replies: Vec<u8>,
}

fn int(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn long(b: &[u8], at: usize) -> Option<i64> {
    Some(i64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn string(b: &[u8], at: usize) -> Option<(String, usize)> {
    string_in(b, at).map(|(text, end)| (text.into_owned(), end))
}

/// A string read in place (a copy only if it is not UTF-8): a listing's hundred names are
/// sorted and written without a string made for each.
fn string_in(b: &[u8], at: usize) -> Option<(Cow<'_, str>, usize)> {
    let len = int(b, at)?;
    if len < 0 {
        return Some((Cow::Borrowed(""), at + 4));
    }
    let end = at + 4 + len as usize;
    Some((String::from_utf8_lossy(b.get(at + 4..end)?), end))
}

fn op_name(op: i32) -> String {
    OpCode::try_from(op).map_or_else(|_| format!("op{op}"), |o| format!("{o:?}"))
}

/// Whether a request of `op` starts with a path.
fn has_path(op: i32) -> bool {
    matches!(op, 1..=9 | 12 | 15 | 17 | 18 | 19 | 21 | 103 | 104 | 106)
}

/// A multi's operations, as ` [Delete /a, Create /a]`: the header of each (type, done, err)
/// then its path; an operation whose body is not read here (check, create with a TTL, ...)
/// ends the list, since its length is unknown.
fn multi_ops(body: &[u8]) -> String {
    let mut ops = Vec::new();
    let mut at = 0;
    while let (Some(op), Some(&done)) = (int(body, at), body.get(at + 4)) {
        if done != 0 || op == -1 {
            break;
        }
        let Some((path, end)) = string(body, at + 9) else {
            break;
        };
        ops.push(format!("{} {path}", op_name(op)));
        at = match op {
            // Delete: path, version.
            2 => end + 4,
            // SetData: path, data, version.
            5 => match int(body, end) {
                Some(len) => end + 4 + len.max(0) as usize + 4,
                None => break,
            },
            // Create: path, data, acl list, flags.
            1 => match create_end(body, end) {
                Some(e) => e,
                None => break,
            },
            _ => {
                ops.push("..".to_owned());
                break;
            }
        };
    }
    format!(" [{}]", ops.join(", "))
}

/// Where a create's body ends, from the end of its path: data, ACL list, flags.
fn create_end(body: &[u8], mut at: usize) -> Option<usize> {
    let len = int(body, at)?;
    at += 4 + len.max(0) as usize;
    let acls = int(body, at)?;
    at += 4;
    for _ in 0..acls.clamp(0, 64) {
        // perms, scheme, id
        at += 4;
        at = string(body, at)?.1;
        at = string(body, at)?.1;
    }
    Some(at + 4)
}

/// Splits `chunk` (after what was left of the last one) into whole frames.
fn frames(partial: &mut Vec<u8>, chunk: &[u8]) -> Vec<Vec<u8>> {
    partial.extend_from_slice(chunk);
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(len) = int(partial, at) {
        let end = at + 4 + len.max(0) as usize;
        if end > partial.len() {
            break;
        }
        out.push(partial[at + 4..end].to_vec());
        at = end;
    }
    partial.drain(..at);
    out
}

impl FrameReader {
    /// The requests in `chunk`, as `xid op path; ...`.
    pub(crate) fn requests(&mut self, chunk: &[u8]) -> String {
        let mut out = String::new();
        for f in frames(&mut self.partial_requests, chunk) {
            if !self.requests_started {
                self.requests_started = true;
                let session = long(&f, 12).unwrap_or(0);
                let _ = write!(out, " connect(session {session:x})");
                continue;
            }
            let (Some(xid), Some(op)) = (int(&f, 0), int(&f, 4)) else {
                continue;
            };
            self.pending.insert(xid, op);
            match xid {
                -2 => out.push_str(" ping"),
                -8 => out.push_str(" setWatches"),
                _ => {
                    let _ = write!(out, " {xid}:{}", op_name(op));
                    if op == 14 {
                        out.push_str(&multi_ops(&f[8.min(f.len())..]));
                    } else if has_path(op) {
                        if let Some((path, end)) = string(&f, 8) {
                            let _ = write!(out, " {path}");
                            // A read that sets a watch says so: which watches a server
                            // holds is what a lost event comes down to.
                            if matches!(op, 3 | 4 | 8 | 12) && f.get(end) == Some(&1) {
                                out.push_str(" +w");
                            }
                        }
                    }
                }
            }
            out.push(';');
        }
        out
    }

    /// The replies and events in `chunk`.
    pub(crate) fn replies(&mut self, chunk: &[u8]) -> String {
        let mut out = String::new();
        for f in frames(&mut self.partial_replies, chunk) {
            if !self.replies_started {
                self.replies_started = true;
                let timeout = int(&f, 4).unwrap_or(0);
                let session = long(&f, 8).unwrap_or(0);
                let _ = write!(out, " session {session:x} timeout {timeout};");
                continue;
            }
            let (Some(xid), Some(zxid), Some(err)) = (int(&f, 0), long(&f, 4), int(&f, 12)) else {
                continue;
            };
            let op = self.pending.remove(&xid);
            if xid == -2 {
                out.push_str(" pong;");
                continue;
            }
            if xid == -1 {
                let kind = int(&f, 16).unwrap_or(0);
                let path = string(&f, 24).map(|(p, _)| p).unwrap_or_default();
                let _ = write!(out, " event {kind} {path};");
                continue;
            }
            let _ = write!(out, " {xid}@{zxid:x}");
            if err != 0 {
                let _ = write!(out, " {:?}", ErrorCode::from(err));
            } else if matches!(op, Some(8 | 12)) {
                // A listing: its names, which is what recipes decide on.
                if let Some(count) = int(&f, 16) {
                    let mut at = 20;
                    let mut names = Vec::new();
                    for _ in 0..count.clamp(0, 64) {
                        match string_in(&f, at) {
                            Some((name, next)) => {
                                names.push(name);
                                at = next;
                            }
                            None => break,
                        }
                    }
                    names.sort();
                    out.push_str(" [");
                    for (i, name) in names.iter().enumerate() {
                        if i > 0 {
                            out.push(' ');
                        }
                        out.push_str(name);
                    }
                    out.push(']');
                }
            } else if matches!(op, Some(1 | 15 | 19 | 21)) {
                if let Some((path, _)) = string(&f, 16) {
                    let _ = write!(out, " {path}");
                }
            }
            out.push(';');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut f = (body.len() as i32).to_be_bytes().to_vec();
        f.extend_from_slice(body);
        f
    }

    #[test]
    fn requests_and_replies_read_as_operations() {
        let mut r = FrameReader::default();
        assert!(r.requests(&frame(&[0; 44])).starts_with(" connect"));
        let mut body = 7i32.to_be_bytes().to_vec();
        body.extend_from_slice(&12i32.to_be_bytes());
        body.extend_from_slice(&2i32.to_be_bytes());
        body.extend_from_slice(b"/a");
        let chunk = frame(&body);
        // Split across two chunks: read once whole.
        assert_eq!(r.requests(&chunk[..5]), "");
        assert_eq!(r.requests(&chunk[5..]), " 7:GetChildren2 /a;");
        assert!(r.replies(&frame(&[0; 36])).contains("session"));
        let mut reply = 7i32.to_be_bytes().to_vec();
        reply.extend_from_slice(&0x20i64.to_be_bytes());
        reply.extend_from_slice(&0i32.to_be_bytes());
        reply.extend_from_slice(&1i32.to_be_bytes());
        reply.extend_from_slice(&1i32.to_be_bytes());
        reply.extend_from_slice(b"x");
        assert_eq!(r.replies(&frame(&reply)), " 7@20 [x];");
    }
}
