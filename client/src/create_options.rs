//! [`CreateOptions`]: how `create_with` makes a node.

use std::time::Duration;

use zkrs_codec::{AclEntry, CreateMode};

/// How to create a node: mode, ACL, TTL, whether to return its Stat, and (feature
/// `compression`) whether to gzip its data as Curator does.
#[derive(Debug, Clone, Copy)]
#[must_use = "options do nothing until passed to `create_with`"]
#[non_exhaustive]
pub struct CreateOptions<'a> {
    /// The mode.
    pub mode: CreateMode,
    /// The ACL; empty (the default): open to all ([`AclEntry::open`]), as for
    /// [`Op::create`](crate::Op::create).
    pub acl: &'a [AclEntry],
    /// Time to live, for the TTL modes (needs `zookeeper.extendedTypesEnabled=true` on the
    /// server).
    pub ttl: Option<Duration>,
    /// Whether to return the new node's Stat (the create2 form).
    pub with_stat: bool,
    /// Whether the data is stored gzipped as Curator's `create().compressed()` stores it
    /// (see [`compression`](crate::compression)).
    #[cfg(feature = "compression")]
    pub compressed: bool,
}

impl CreateOptions<'static> {
    /// Options with the open ACL, no TTL, no Stat.
    pub fn new(mode: CreateMode) -> CreateOptions<'static> {
        CreateOptions {
            mode,
            acl: &[],
            ttl: None,
            with_stat: false,
            #[cfg(feature = "compression")]
            compressed: false,
        }
    }
}

impl<'a> CreateOptions<'a> {
    /// With this ACL (empty: open to all).
    pub fn acl<'b>(self, acl: &'b [AclEntry]) -> CreateOptions<'b>
    where
        'a: 'b,
    {
        CreateOptions {
            mode: self.mode,
            acl,
            ttl: self.ttl,
            with_stat: self.with_stat,
            #[cfg(feature = "compression")]
            compressed: self.compressed,
        }
    }

    /// With a TTL (TTL modes only).
    pub fn ttl(mut self, ttl: Duration) -> CreateOptions<'a> {
        self.ttl = Some(ttl);
        self
    }

    /// Returning the Stat.
    pub fn with_stat(mut self) -> CreateOptions<'a> {
        self.with_stat = true;
        self
    }

    /// Storing the data gzipped, as Curator's `create().compressed()` does (its default
    /// `GzipCompressionProvider`, byte for byte: see [`compression`](crate::compression)).
    /// Read it back with [`Client::get_data_decompressed`](crate::Client::get_data_decompressed).
    ///
    /// ```no_run
    /// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
    /// use zkrs_client::{CreateMode, CreateOptions};
    /// let options = CreateOptions::new(CreateMode::Persistent).compressed();
    /// client.create_with("/app/config", br#"{"replicas":3}"#, &options).await?;
    /// let (data, _stat) = client.get_data_decompressed("/app/config").await?;
    /// assert_eq!(&data[..], br#"{"replicas":3}"#);
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "compression")]
    pub fn compressed(mut self) -> CreateOptions<'a> {
        self.compressed = true;
        self
    }
}
