//! [`Client::update_hosts`]: the client's host list changes under a live session, with
//! ZOOKEEPER-1355's probabilistic rebalancing (`zkrs_session::rebalance`).

use crate::error::ErrorExt;
use tokio::sync::oneshot;

use crate::client::Client;
use crate::connect_string::ConnectString;
use crate::error::{Error, Result};
use crate::protocol::Command;
use crate::session::HostChange;

impl Client {
    /// The hosts this client connects to now (`host:port`, IPv6 in brackets), in the order
    /// of its connect string or of the last change ([`Client::update_hosts`], a
    /// [`HostProvider`](crate::HostProvider), [`ClientBuilder::follow_ensemble`]).
    ///
    /// [`ClientBuilder::follow_ensemble`]: crate::ClientBuilder::follow_ensemble
    pub fn hosts(&self) -> Vec<String> {
        self.inner
            .shared
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .hosts
            .clone()
    }

    /// Replaces the hosts this client connects to (the Java client's `updateServerList`),
    /// keeping the session: after a membership change, give it the new members' client
    /// addresses (for instance [`EnsembleConfig::client_addresses`](crate::EnsembleConfig)
    /// from [`Client::get_config`]). Returns whether the client leaves its current host.
    ///
    /// ZOOKEEPER-1355's rebalancing decides, so that many clients spread evenly over the new
    /// list without all reconnecting: a client whose host left moves; when hosts were added,
    /// a client whose host stays moves with probability `1 - old/new`, to an added host;
    /// otherwise it stays. A client that moves from a healthy connection connects to its new
    /// host first and moves its session there without suspending it (make before break: no
    /// state change; requests made meanwhile wait and go out in order;
    /// [`ClientMetrics::session_moves`](crate::ClientMetrics) counts it); a move that fails
    /// falls back to the old connection and is tried again. A client with no usable
    /// connection, on a read-only server, or holding a persistent watch reconnects the old
    /// way (`Suspended`, then `Reconnected`, same session). Hosts are compared by name and port
    /// as written (the Java client also compares resolved addresses).
    ///
    /// The connect string's chroot, if any, must be the client's own: it cannot change.
    ///
    /// ```no_run
    /// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
    /// let (config, _) = client.get_config().await?;
    /// client.update_hosts(&config.client_addresses().join(",")).await?;
    /// # Ok(()) }
    /// ```
    pub async fn update_hosts(&self, connect_string: &str) -> Result<bool> {
        self.change_hosts(connect_string, HostChange::Rebalance)
            .await
    }

    /// [`Client::update_hosts`], with or without ZOOKEEPER-1355's draw (without it, a
    /// client whose host is kept stays on it).
    pub(crate) async fn change_hosts(
        &self,
        connect_string: &str,
        change: HostChange,
    ) -> Result<bool> {
        let parsed = ConnectString::parse(connect_string)?;
        if parsed.chroot.as_str().is_some() && &parsed.chroot != self.chroot() {
            return Err(Error::invalid(format!(
                "the chroot cannot change: {connect_string:?} has {}, the client {}",
                parsed.chroot.as_str().unwrap_or("/"),
                self.chroot().as_str().unwrap_or("none")
            )));
        }
        let (reply, moved) = oneshot::channel();
        self.send(Command::UpdateHosts {
            hosts: parsed.hosts,
            change,
            reply,
        })?;
        moved.await.map_err(|_| Error::closed())
    }
}

/// `host:port` for each host, IPv6 addresses in brackets.
pub(crate) fn host_strings(hosts: &[(String, u16)]) -> Vec<String> {
    hosts
        .iter()
        .map(|(name, port)| {
            if name.contains(':') {
                format!("[{name}]:{port}")
            } else {
                format!("{name}:{port}")
            }
        })
        .collect()
}
