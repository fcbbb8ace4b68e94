//! Requests bound to one session: sent on it or not at all (`Session::submit_in_session`),
//! for the recipes' deletes of the ephemeral nodes a session holds
//! (`__private::delete_in_session`, `__private::multi_in_session`).

use zkrs_codec::{DeleteRequest, OpCode};

use crate::client::Client;
use crate::error::{Error, ErrorExt, Result};
use crate::multi::{Op, OpResult};
use crate::path::validate_path;

impl Client {
    /// [`Client::delete`], bound to `session` if given (`__private::delete_in_session`).
    pub(crate) async fn delete_in(
        &self,
        path: &str,
        version: Option<i32>,
        session: Option<i64>,
    ) -> Result<()> {
        validate_path(path)?;
        if path == "/" {
            return Err(Error::invalid("the root node cannot be deleted"));
        }
        let frame = self.inner.chroot.with_server_path(path, |p| {
            self.frame(
                OpCode::Delete,
                &DeleteRequest {
                    path: p,
                    version: version.unwrap_or(-1),
                },
                p.len(),
            )
        })?;
        self.submit_in(frame, None, None, session)
            .await
            .map(drop)
            .map_err(|e| e.with_path(path))
    }

    /// [`Client::multi`], bound to `session` if given (`__private::multi_in_session`).
    pub(crate) async fn multi_in(&self, ops: &[Op], session: Option<i64>) -> Result<Vec<OpResult>> {
        if let Some(read) = ops
            .iter()
            .find(|op| matches!(op, Op::GetData { .. } | Op::GetChildren { .. }))
        {
            return Err(Error::invalid(format!(
                "multi takes writes only; use multi_read for reads ({})",
                read.path()
            )));
        }
        self.run_multi(OpCode::Multi, ops, session).await
    }
}
