//! The transport seam for a simulated network: an in-memory connection whose client end the
//! driver uses as it uses a socket, and whose other end belongs to whatever simulates the
//! network and the servers (`zkrs-sim`). A [`Dialer`] set on the builder makes every
//! connection attempt one of these instead of DNS and TCP.
//!
//! Nothing here touches a clock or a thread: bytes move when the two ends say so, and each
//! end's waker is woken when the other acts, so a run on one thread repeats exactly.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Poll, Waker};

use bytes::{Bytes, BytesMut};
use tokio::sync::Notify;

/// How the network ended its side of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// An orderly close: the client reads what is left, then the end of the stream.
    Closed,
    /// A reset: the client's next read or write fails at once.
    Reset,
}

#[derive(Debug, Default)]
struct State {
    /// Bytes the network delivered that the client has not read.
    to_client: BytesMut,
    /// Bytes the client wrote that the network has not taken.
    to_network: BytesMut,
    /// The client dropped its end (the driver closed the connection).
    client_gone: bool,
    network_ended: Option<Ended>,
    /// The driver's task, waiting for bytes.
    reader: Option<Waker>,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// Told whenever the client writes or goes away; may be shared by many links, so one
    /// task can serve a whole network.
    network: Arc<Notify>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A new in-memory connection: the client's end, for the driver (returned by a [`Dialer`]),
/// and the network's. `network` is notified whenever the client writes or drops its end.
pub fn memory_link(network: Arc<Notify>) -> (LinkEnd, LinkPeer) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State::default()),
        network,
    });
    (
        LinkEnd {
            shared: shared.clone(),
        },
        LinkPeer { shared },
    )
}

/// The client's end of a [`memory_link`].
#[derive(Debug)]
pub struct LinkEnd {
    shared: Arc<Shared>,
}

impl LinkEnd {
    /// Waits until a read would not block (bytes, the end of the stream, or a reset).
    pub(crate) async fn readable(&self) -> io::Result<()> {
        std::future::poll_fn(|cx| {
            let mut s = self.shared.state();
            if !s.to_client.is_empty() || s.network_ended.is_some() {
                Poll::Ready(Ok(()))
            } else {
                s.reader = Some(cx.waker().clone());
                Poll::Pending
            }
        })
        .await
    }

    /// Appends what the network delivered to `buf`, at most its spare capacity.
    pub(crate) fn try_read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        let mut s = self.shared.state();
        if !s.to_client.is_empty() {
            let room = (buf.capacity() - buf.len()).max(1);
            let n = room.min(s.to_client.len());
            buf.extend_from_slice(&s.to_client.split_to(n));
            return Ok(n);
        }
        match s.network_ended {
            Some(Ended::Closed) => Ok(0),
            Some(Ended::Reset) => Err(io::ErrorKind::ConnectionReset.into()),
            None => Err(io::ErrorKind::WouldBlock.into()),
        }
    }

    /// Takes all of `data` (the link's buffer has no bound: the simulated network decides
    /// when it moves).
    pub(crate) fn try_write(&mut self, data: &[u8]) -> io::Result<usize> {
        let mut s = self.shared.state();
        match s.network_ended {
            Some(Ended::Reset) => return Err(io::ErrorKind::ConnectionReset.into()),
            Some(Ended::Closed) => return Err(io::ErrorKind::BrokenPipe.into()),
            None => {}
        }
        s.to_network.extend_from_slice(data);
        drop(s);
        self.shared.network.notify_one();
        Ok(data.len())
    }
}

impl Drop for LinkEnd {
    fn drop(&mut self) {
        self.shared.state().client_gone = true;
        self.shared.network.notify_one();
    }
}

/// The network's end of a [`memory_link`].
#[derive(Debug)]
pub struct LinkPeer {
    shared: Arc<Shared>,
}

impl LinkPeer {
    /// The bytes the client wrote since the last call (empty if none).
    pub fn take_outgoing(&self) -> Bytes {
        self.shared.state().to_network.split().freeze()
    }

    /// Whether the client closed its end (its bytes written before may still be taken).
    pub fn client_gone(&self) -> bool {
        self.shared.state().client_gone
    }

    /// Hands `data` to the client, after what it has not read yet.
    pub fn deliver(&self, data: &[u8]) {
        let mut s = self.shared.state();
        if s.network_ended.is_some() {
            return;
        }
        s.to_client.extend_from_slice(data);
        let reader = s.reader.take();
        drop(s);
        if let Some(w) = reader {
            w.wake();
        }
    }

    /// Closes the stream in order: the client reads what was delivered, then its end.
    pub fn close(&self) {
        self.end(Ended::Closed);
    }

    /// Resets the connection: what the client has not read is lost, its next read or write
    /// fails with `ConnectionReset`.
    pub fn reset(&self) {
        self.shared.state().to_client.clear();
        self.end(Ended::Reset);
    }

    fn end(&self, how: Ended) {
        let mut s = self.shared.state();
        if s.network_ended.is_none() {
            s.network_ended = Some(how);
        }
        let reader = s.reader.take();
        drop(s);
        if let Some(w) = reader {
            w.wake();
        }
    }
}

/// A future a [`Dialer`] returns.
pub type DialFuture = Pin<Box<dyn Future<Output = io::Result<LinkEnd>> + Send>>;

/// Makes connections for a client in place of DNS and TCP: set with
/// `__private::with_dialer`. `dial` is given the host and port of the connect string as
/// written; the client's own connect timeout bounds it.
pub trait Dialer: Send + Sync + 'static {
    /// A connection to `host:port`, or why there is none (refused, unreachable).
    fn dial(&self, host: &str, port: u16) -> DialFuture;
}

impl std::fmt::Debug for dyn Dialer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Dialer")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bytes_cross_in_order_and_the_ends_say_how_they_ended() {
        let notify = Arc::new(Notify::new());
        let (mut end, peer) = memory_link(notify.clone());
        assert_eq!(end.try_write(b"ping").unwrap(), 4);
        notify.notified().await; // the write told the network
        assert_eq!(&peer.take_outgoing()[..], b"ping");
        peer.deliver(b"po");
        peer.deliver(b"ng");
        end.readable().await.unwrap();
        let mut buf = BytesMut::with_capacity(3);
        assert_eq!(end.try_read_buf(&mut buf).unwrap(), 3);
        assert_eq!(&buf[..], b"pon");
        peer.close();
        let mut rest = BytesMut::with_capacity(8);
        assert_eq!(end.try_read_buf(&mut rest).unwrap(), 1);
        assert_eq!(end.try_read_buf(&mut rest).unwrap(), 0);
        assert_eq!(
            end.try_write(b"x").unwrap_err().kind(),
            io::ErrorKind::BrokenPipe
        );

        let (mut end, peer) = memory_link(notify);
        peer.deliver(b"lost");
        peer.reset();
        let err = end
            .try_read_buf(&mut BytesMut::with_capacity(8))
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
        drop(end);
        assert!(peer.client_gone());
    }
}
