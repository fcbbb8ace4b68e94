//! [`HostProvider`]: where the client's hosts come from, asked again at every connection
//! attempt. The default is the connect string.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::error::Result;

/// What [`HostProvider::hosts`] returns: a boxed future, so the trait stays object-safe.
pub type HostsFuture<'a> = Pin<Box<dyn Future<Output = Result<Vec<String>>> + Send + 'a>>;

/// Supplies the client's hosts (`host:port`, or `[v6]:port`; a missing port is 2181) when
/// the client is about to connect: a service that knows its ensemble better than a fixed
/// connect string (a Kubernetes endpoint list, DNS SRV records, a configuration service).
///
/// Set with [`ClientBuilder::host_provider`](crate::ClientBuilder::host_provider). The
/// client asks at every connection attempt (the first included, and every reconnection);
/// when the list differs from the last one, it takes it as
/// [`Client::update_hosts`](crate::Client::update_hosts) does (same session,
/// ZOOKEEPER-1355's rebalancing; a client whose host left moves at once). Names in the list
/// are resolved again at each attempt too. If the provider fails, or returns nothing, the
/// client goes on with the last list and the reason shows in a connect error. The answer
/// should come quickly: it counts against the attempt's share of the session timeout.
///
/// A plain closure `Fn() -> Vec<String>` is a provider. An async one, for a Kubernetes
/// endpoint list:
///
/// ```no_run
/// use std::sync::Arc;
/// use zkrs_client::{ClientBuilder, HostProvider, HostsFuture};
///
/// /// The ready addresses of a headless service, as some watcher of the endpoints keeps them.
/// struct Endpoints(Arc<tokio::sync::RwLock<Vec<String>>>);
///
/// impl HostProvider for Endpoints {
///     fn hosts(&self) -> HostsFuture<'_> {
///         Box::pin(async move {
///             let ready = self.0.read().await;
///             Ok(ready.iter().map(|ip| format!("{ip}:2181")).collect())
///         })
///     }
/// }
///
/// # async fn demo(endpoints: Arc<tokio::sync::RwLock<Vec<String>>>) -> zkrs_client::Result<()> {
/// // The connect string gives the chroot, and the hosts to use if the provider fails.
/// let client = ClientBuilder::new("zk-0.zk:2181/app")
///     .host_provider(Endpoints(endpoints))
///     .connect()
///     .await?;
/// # Ok(()) }
/// ```
///
/// DNS SRV records work the same way: look up `_client._tcp.zk.example.com` in `hosts` and
/// return `target:port` for each record.
pub trait HostProvider: Send + Sync + 'static {
    /// The hosts to connect to now.
    fn hosts(&self) -> HostsFuture<'_>;
}

impl<F> HostProvider for F
where
    F: Fn() -> Vec<String> + Send + Sync + 'static,
{
    fn hosts(&self) -> HostsFuture<'_> {
        let hosts = self();
        Box::pin(async move { Ok(hosts) })
    }
}

/// A provider as the builder keeps it (cloneable, and `Debug` without showing it).
#[derive(Clone)]
pub(crate) struct SharedProvider(pub(crate) Arc<dyn HostProvider>);

impl std::fmt::Debug for SharedProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostProvider")
    }
}

impl SharedProvider {
    /// Asks the provider and parses its answer; the error is in words.
    pub(crate) async fn ask(&self) -> std::result::Result<Vec<(String, u16)>, String> {
        let hosts = self
            .0
            .hosts()
            .await
            .map_err(|e| format!("the host provider failed: {e}"))?;
        let mut parsed = Vec::with_capacity(hosts.len());
        for host in &hosts {
            let host = host.trim();
            parsed.push(
                crate::connect_string::parse_host(host).map_err(|why| {
                    format!("the host provider returned a bad host {host:?}: {why}")
                })?,
            );
        }
        if parsed.is_empty() {
            return Err("the host provider returned no host".into());
        }
        Ok(parsed)
    }
}
