//! `Children`: the names from a getChildren reply, borrowed from the reply frame.

use std::fmt;

use bytes::Bytes;
use zkrs_codec::{Decode, GetChildren2Response, GetChildrenResponse, List, ListIter, Stat};

use crate::error::Result;

/// The child names of a node, as the server listed them (names, not paths; no order is
/// promised). They stay in the reply frame: iterating allocates nothing, which is what the
/// lock and election recipes need when they scan thousands of contenders.
#[derive(Clone)]
pub struct Children {
    frame: Bytes,
    start: usize,
    end: usize,
    len: usize,
    stat: Option<Stat>,
}

impl Children {
    pub(crate) fn from_get_children(body: Bytes) -> Result<Children> {
        let reply = GetChildrenResponse::decode_prefix(&body)?;
        Ok(Children::new(&body, reply.children, None))
    }

    pub(crate) fn from_get_children2(body: Bytes) -> Result<Children> {
        let reply = GetChildren2Response::decode_prefix(&body)?;
        Ok(Children::new(&body, reply.children, Some(reply.stat)))
    }

    fn new(body: &Bytes, list: List<'_, &str>, stat: Option<Stat>) -> Children {
        let bytes = list.wire_bytes().unwrap_or_default();
        let start = bytes.as_ptr() as usize - body.as_ptr() as usize;
        Children {
            frame: body.clone(),
            start,
            end: start + bytes.len(),
            len: list.len(),
            stat,
        }
    }

    /// How many children.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The names, borrowed from the reply.
    pub fn iter(&self) -> ListIter<'_, &str> {
        List::from_wire_parts(self.len, &self.frame[self.start..self.end]).iter()
    }

    /// Whether a child has this name.
    pub fn contains(&self, name: &str) -> bool {
        self.iter().any(|c| c == name)
    }

    /// The names as owned strings.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_string).collect()
    }

    /// The parent's Stat, when listed with `get_children2`.
    pub fn stat(&self) -> Option<&Stat> {
        self.stat.as_ref()
    }
}

impl<'a> IntoIterator for &'a Children {
    type Item = &'a str;
    type IntoIter = ListIter<'a, &'a str>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Debug for Children {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}
