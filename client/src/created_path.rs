//! The path of a node just created, left in the reply frame it arrived in: read without a
//! copy, so that a recipe's hot path can put it into a `String` it already has.

use bytes::Bytes;

/// A created node's path (as the client names it: under the chroot), a slice of its reply.
#[derive(Debug, Clone)]
pub struct CreatedPath {
    reply: Bytes,
}

impl CreatedPath {
    /// `path` must lie inside `body` (it was decoded from it); anything else is copied.
    pub(crate) fn new(body: &Bytes, path: &str) -> CreatedPath {
        let reply = if path.is_empty() {
            Bytes::new()
        } else {
            // `slice_ref` shares the frame; a path from elsewhere would panic there, so it
            // is checked first and copied instead.
            let inside = body.as_ptr_range().contains(&path.as_ptr())
                && body.as_ptr_range().end >= path.as_bytes().as_ptr_range().end;
            if inside {
                body.slice_ref(path.as_bytes())
            } else {
                Bytes::copy_from_slice(path.as_bytes())
            }
        };
        CreatedPath { reply }
    }

    /// The path.
    pub fn as_str(&self) -> &str {
        // Checked as UTF-8 when the reply was decoded; an empty path if that ever failed.
        std::str::from_utf8(&self.reply).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_inside_the_reply_is_shared_and_one_outside_copied() {
        let body = Bytes::from_static(b"\x00\x00\x00\x05/a-01rest");
        let inside = std::str::from_utf8(&body[4..9]).unwrap();
        let created = CreatedPath::new(&body, inside);
        assert_eq!(created.as_str(), "/a-01");
        assert_eq!(created.as_str().as_ptr(), inside.as_ptr());
        let elsewhere = CreatedPath::new(&body, "/other");
        assert_eq!(elsewhere.as_str(), "/other");
        assert_eq!(CreatedPath::new(&body, "").as_str(), "");
    }
}
