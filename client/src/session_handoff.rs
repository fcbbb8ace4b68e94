//! Sessions that outlive a client: what another client needs to resume this one's session
//! ([`Client::session_password`], with [`Client::session_id`]), and stopping without closing
//! it ([`Client::detach`]). Resuming is [`ClientBuilder::resume`](crate::ClientBuilder::resume).

use tokio::sync::oneshot;

use zkrs_codec::Secret;

use crate::client::Client;
use crate::protocol::Command;

impl Client {
    /// The current session's password (16 bytes from ZooKeeper; empty when there is no
    /// session). With [`Client::session_id`], it lets another client resume the session
    /// ([`ClientBuilder::resume`](crate::ClientBuilder::resume)): keep it as secret as
    /// the session's ephemeral nodes and locks are valuable (its `Debug` prints
    /// `Secret(***)`; [`Secret::expose`] gives the bytes).
    pub fn session_password(&self) -> Secret {
        self.shared().password.clone()
    }

    /// Stops this client without closing its session, and returns once its connection is
    /// dropped. No closeSession is sent: the session lives on the server, with its
    /// ephemeral nodes, until its timeout passes, for another client (another process) to
    /// resume within that time with [`Client::session_id`] and [`Client::session_password`]
    /// (read them first: they are gone once detached).
    ///
    /// Every clone of this handle is stopped too: requests fail as after
    /// [`Client::close`], and the state becomes `Closed`.
    pub async fn detach(&self) {
        let (tx, rx) = oneshot::channel();
        if self.send(Command::Detach(tx)).is_ok() {
            // Resolves when the driver drops the sender, after dropping the connection.
            let _ = rx.await;
        }
    }
}
