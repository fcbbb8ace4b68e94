//! Namespaces (Curator's `CuratorFrameworkFactory.builder().namespace(..)`): every path of a
//! client lives under one node, created if it is missing.

use crate::error::ErrorExt;
use zkrs_client::{Client, ClientBuilder, ConnectString, Error, Result};

use super::paths::{create_parents, ParentMode};

/// Connects to `hosts` (a connect string without a chroot) with every path under
/// `namespace` (e.g. `/apps/billing`), creating the namespace node and its parents
/// (persistent) if missing. `configure` sets the builder's other options.
///
/// This is a chroot (`hosts/apps/billing`) plus the create Curator does on first use: a
/// chroot whose node is missing fails every operation with `NoNode`.
///
/// ```no_run
/// # async fn demo() -> zkrs_client::Result<()> {
/// use std::time::Duration;
/// let client = zkrs_recipes::framework::connect_with_namespace(
///     "127.0.0.1:2181",
///     "/apps/billing",
///     |b| b.session_timeout(Duration::from_secs(15)),
/// )
/// .await?;
/// client.create("/invoices", b"", zkrs_client::CreateMode::Persistent).await?; // /apps/billing/invoices
/// # Ok(()) }
/// ```
pub async fn connect_with_namespace(
    hosts: &str,
    namespace: &str,
    configure: impl Fn(ClientBuilder) -> ClientBuilder,
) -> Result<Client> {
    zkrs_client::validate_path(namespace)?;
    if ConnectString::parse(hosts)?.chroot.as_str().is_some() {
        return Err(Error::invalid(format!(
            "the connect string {hosts:?} has a chroot already; give the namespace alone"
        )));
    }
    if namespace != "/" {
        let root = configure(ClientBuilder::new(hosts)).connect().await?;
        let made = create_parents(&root, namespace, ParentMode::Persistent).await;
        root.close().await?;
        made?;
    }
    configure(ClientBuilder::new(format!("{hosts}{namespace}")))
        .connect()
        .await
}
