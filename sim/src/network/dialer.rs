//! How a client of the simulated world dials a member: by host name, onto the network.

use std::io;
use std::time::Duration;

use zkrs_client::__private::{DialFuture, Dialer};

use super::pump::SharedNetwork;
use super::{Owner, PORT};

/// One client's way onto the network: its connections carry its number.
#[derive(Debug, Clone)]
pub(crate) struct ClientDialer {
    pub(crate) net: SharedNetwork,
    pub(crate) client: usize,
    /// The participant incarnation the client belongs to, if any: refused once it crashed.
    pub(crate) owner: Option<Owner>,
}

impl Dialer for ClientDialer {
    fn dial(&self, host: &str, port: u16) -> DialFuture {
        let (net, client, owner) = (self.net.clone(), self.client, self.owner);
        let member = host
            .strip_prefix("zk")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&n| n >= 1 && n <= net.lock().members.len() && port == PORT)
            .map(|n| n - 1);
        Box::pin(async move {
            let Some(member) = member else {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    "failed to resolve: no such simulated member",
                ));
            };
            // The handshake's round trip.
            tokio::time::sleep(Duration::from_micros(300)).await;
            let made = {
                let now = net.now();
                net.lock().connect(member, client, owner, now, &net.notify)
            };
            net.notify.notify_one();
            match made {
                Some(result) => result,
                None => std::future::pending().await,
            }
        })
    }
}
