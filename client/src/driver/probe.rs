//! [`Probe`]: looking for a read-write server while on a read-only one: the `isro` question,
//! asked in the background, and the channel its answers come back on.

use std::io;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::transport::Connector;

/// Where a probe that found a read-write server says so (its host's index).
pub(super) struct Probe {
    pub(super) tx: mpsc::UnboundedSender<usize>,
    pub(super) rx: mpsc::UnboundedReceiver<usize>,
}

impl Probe {
    /// A new channel: after a new host list, a probe under way would answer with an index
    /// into the old list, into a channel nobody reads.
    pub(super) fn new() -> Probe {
        let (tx, rx) = mpsc::unbounded_channel();
        Probe { tx, rx }
    }
}

/// Asks a server with the `isro` four-letter word whether it serves writes (over TLS too,
/// when the client uses it).
pub(super) async fn is_read_write(connector: &Connector, host: &str, port: u16) -> bool {
    let timeout = Duration::from_secs(2);
    let probe = async {
        let seed = crate::random::random_seed();
        let mut transport =
            crate::resolve::connect_host(connector, host, port, timeout, seed).await?;
        transport.write_all(b"isro").await?;
        let answer = transport.read_to_end(16).await?;
        io::Result::Ok(answer.starts_with(b"rw"))
    };
    matches!(tokio::time::timeout(timeout, probe).await, Ok(Ok(true)))
}
