//! How a request travels: encoded in the caller's task (refused there if over the packet
//! limit), given a place in flight (see `in_flight.rs`) and a reply slot, handed to the
//! driver, answered; and the watch it may leave, registered with where its event goes.

use std::sync::atomic::Ordering;

use tokio::sync::oneshot;
use zkrs_codec::{encode_request, Encode, ErrorCode, OpCode, PathRecord, PathWatchRequest};

use crate::client::Client;
use crate::error::{Error, ErrorExt, Result};
use crate::frame::Frame;
use crate::path::validate_path;
use crate::protocol::{Command, ReplyTx, WatchSink};
use crate::session::{Reply, Request, WatchKind, WatchOp, WatcherGroup, WatcherId};
use crate::watch::{OneshotWatch, Watcher};

impl Client {
    /// Encodes a request frame (xid 0), refusing one over the packet limit.
    pub(crate) fn frame<R: Encode + ?Sized>(
        &self,
        op: OpCode,
        record: &R,
        size_hint: usize,
    ) -> Result<Frame> {
        let bytes = crate::frame_arena::encode_frame(size_hint + 32, |frame| {
            encode_request(frame, 0, op, record)
        });
        let len = bytes.len() - 4;
        if len > self.inner.max_frame_len {
            return Err(Error::invalid(format!(
                "request of {len} bytes exceeds the packet limit of {} bytes (jute.maxbuffer)",
                self.inner.max_frame_len
            )));
        }
        Ok(Frame { op, bytes })
    }

    pub(crate) fn server_path(&self, path: &str) -> String {
        self.inner.chroot.to_server(path).into_owned()
    }

    pub(crate) fn client_path(&self, server_path: &str) -> String {
        self.inner.chroot.to_client(server_path).to_string()
    }

    pub(crate) fn send(&self, command: Command) -> Result<()> {
        self.inner
            .commands
            .send(command)
            .map_err(|_| Error::closed())
    }

    /// Hands a request to the driver once a place in flight is free, and waits for its
    /// answer. Cancel-safe: dropped while waiting for a place, nothing was sent.
    pub(crate) async fn submit(
        &self,
        frame: Frame,
        watch: Option<WatchOp>,
        sink: Option<(WatcherId, WatchSink)>,
    ) -> Result<Reply> {
        self.submit_in(frame, watch, sink, None).await
    }

    /// [`Client::submit`], sent on session `session` only, if given (else it fails with
    /// `SessionExpired`: `Session::submit_in_session`).
    pub(crate) async fn submit_in(
        &self,
        frame: Frame,
        watch: Option<WatchOp>,
        sink: Option<(WatcherId, WatchSink)>,
        session: Option<i64>,
    ) -> Result<Reply> {
        let Frame { op, bytes: frame } = frame;
        // Two clock reads per request, for the latency histogram (none when measuring the
        // build without metrics: `--cfg zkrs_no_metrics`).
        let started = (!cfg!(zkrs_no_metrics)).then(crate::clock::now);
        let registers = matches!(watch, Some(WatchOp::Register { .. }));
        let result = async {
            let (token, rx) =
                ReplyTx::new(&self.inner.reply_slots, self.inner.in_flight.place().await);
            self.send(Command::Request {
                request: Request {
                    frame,
                    op,
                    token,
                    watch,
                },
                sink,
                session,
            })?;
            rx.await.unwrap_or_else(|| Err(Error::closed()))
        }
        .await
        .map_err(|e| name_the_missing_feature(op, e));
        let metrics = &self.inner.metrics;
        if let Some(started) = started {
            metrics.request(
                op,
                crate::clock::now().saturating_duration_since(started),
                result.as_ref().err(),
            );
        }
        if registers && result.is_ok() {
            metrics.watch_registered();
        }
        result
    }

    pub(crate) async fn call(&self, frame: Frame) -> Result<Reply> {
        self.submit(frame, None, None).await
    }

    /// Sends a request that leaves a one-shot watch if it succeeds.
    pub(crate) async fn call_watched(
        &self,
        frame: Frame,
        kind: WatchKind,
        path: &str,
    ) -> (Result<Reply>, OneshotWatch) {
        self.call_watched_at(frame, kind, self.server_path(path))
            .await
    }

    /// [`Client::call_watched`] on a server path (one the chroot never applies to, too).
    pub(crate) async fn call_watched_at(
        &self,
        frame: Frame,
        kind: WatchKind,
        at: String,
    ) -> (Result<Reply>, OneshotWatch) {
        let (tx, watch_rx) = oneshot::channel();
        let result = self
            .call_with_sink(frame, kind, at, None, WatchSink::Once(tx))
            .await;
        (result, OneshotWatch::new(watch_rx))
    }

    /// Sends a request that leaves a one-shot watch firing into `watcher`'s stream.
    pub(crate) async fn call_into(
        &self,
        frame: Frame,
        kind: WatchKind,
        path: &str,
        watcher: &Watcher,
    ) -> Result<Reply> {
        let at = self.server_path(path);
        let sink = WatchSink::Group(watcher.tx.clone());
        self.call_with_sink(frame, kind, at, Some(watcher.group), sink)
            .await
    }

    pub(crate) async fn call_with_sink(
        &self,
        frame: Frame,
        kind: WatchKind,
        server_path: String,
        group: Option<WatcherGroup>,
        sink: WatchSink,
    ) -> Result<Reply> {
        let id = WatcherId::new(self.inner.next_watcher.fetch_add(1, Ordering::Relaxed));
        let watch = WatchOp::Register {
            kind,
            path: server_path,
            watcher: id,
            group,
        };
        self.submit(frame, Some(watch), Some((id, sink))).await
    }

    /// A request that is a path and a watch flag (exists, getData, getChildren).
    pub(crate) fn path_watch(&self, op: OpCode, path: &str, watch: bool) -> Result<Frame> {
        validate_path(path)?;
        self.inner.chroot.with_server_path(path, |p| {
            self.frame(op, &PathWatchRequest { path: p, watch }, p.len())
        })
    }

    /// A request that is a path alone.
    pub(crate) fn path_only(&self, op: OpCode, path: &str) -> Result<Frame> {
        validate_path(path)?;
        self.inner
            .chroot
            .with_server_path(path, |p| self.frame(op, &PathRecord { path: p }, p.len()))
    }
}

/// An `UNIMPLEMENTED` answer to an operation older servers lack says which server it needs
/// (`addWatch needs ZooKeeper 3.6 or later`): the code alone reads as a client bug.
fn name_the_missing_feature(op: OpCode, error: Error) -> Error {
    match op.server_since() {
        Some((major, minor)) if error.code() == Some(ErrorCode::Unimplemented) => error
            .with_detail(format!(
                "{op} needs ZooKeeper {major}.{minor} or later; this server does not know it"
            )),
        _ => error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unimplemented_names_the_server_an_operation_needs() {
        let e = name_the_missing_feature(OpCode::AddWatch, Error::from(ErrorCode::Unimplemented));
        assert_eq!(e.code(), Some(ErrorCode::Unimplemented));
        assert_eq!(
            e.detail(),
            Some("addWatch needs ZooKeeper 3.6 or later; this server does not know it")
        );
        let other =
            name_the_missing_feature(OpCode::GetData, Error::from(ErrorCode::Unimplemented));
        assert_eq!(other.detail(), None);
        let not_found = name_the_missing_feature(OpCode::WhoAmI, Error::from(ErrorCode::NoNode));
        assert_eq!(not_found.detail(), None);
    }
}
