//! [`PersistentTtlNode`]: a node that lives while its owner does, through a TTL child.

use std::time::Duration;

use tokio::sync::oneshot;
use zkrs_client::{Client, CreateMode, Result};

use super::persistent::PersistentNode;
use crate::framework::join;

/// The child a [`PersistentTtlNode`] keeps touching (Curator's name).
pub const TOUCH_NODE: &str = "touch";

/// A node that lives as long as its owner keeps it, without an ephemeral node's tie to one
/// session, as Curator 5.4's `PersistentTtlNode`: a container at `path` (with the data),
/// and a child `touch` created `PERSISTENT_WITH_TTL` and written every `ttl / 2`. When the
/// owner stops, the child expires after `ttl`, and the server then deletes the empty
/// container. Needs `zookeeper.extendedTypesEnabled=true` on the server.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use std::time::Duration;
/// use zkrs_recipes::node::PersistentTtlNode;
/// let node = PersistentTtlNode::builder(&client, "/workers/w1", Duration::from_secs(30))
///     .data(b"busy")
///     .start()?;
/// // ... gone about 30 s after this process stops touching it ...
/// node.close().await?;
/// # Ok(()) }
/// ```
#[must_use = "dropping it gives up what it holds (its node, or its watch) at once"]
pub struct PersistentTtlNode {
    node: PersistentNode,
    touch: PersistentNode,
    ttl: Duration,
    /// Dropping it stops the touching.
    _stop: oneshot::Sender<()>,
}

/// Settings for a [`PersistentTtlNode`]; [`PersistentTtlNodeBuilder::start`] starts it.
#[derive(Debug)]
#[must_use = "a builder does nothing until started"]
pub struct PersistentTtlNodeBuilder {
    client: Client,
    path: String,
    ttl: Duration,
    data: Vec<u8>,
}

impl PersistentTtlNodeBuilder {
    /// The node's data (default: empty).
    pub fn data(mut self, data: impl AsRef<[u8]>) -> PersistentTtlNodeBuilder {
        self.data = data.as_ref().to_vec();
        self
    }

    /// Starts keeping the node and touching its child every `ttl / 2` (in tasks: needs a
    /// tokio runtime). `InvalidInput` for a bad path.
    pub fn start(self) -> Result<PersistentTtlNode> {
        let node = PersistentNode::builder(&self.client, &self.path, CreateMode::Container)
            .data(&self.data)
            .start()?;
        let touch = PersistentNode::builder(
            &self.client,
            &join(&self.path, TOUCH_NODE),
            CreateMode::PersistentWithTtl,
        )
        .ttl(self.ttl)
        .start()?;
        let (stop, mut stopped) = oneshot::channel::<()>();
        let toucher = touch.handle();
        let every = self.ttl / 2;
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every.max(Duration::from_millis(1)));
            tick.tick().await;
            loop {
                tokio::select! {
                    biased;
                    _ = &mut stopped => return,
                    _ = tick.tick() => {
                        // A write resets the TTL; failures are retried at the next tick.
                        let _ = toucher.touch().await;
                    }
                }
            }
        });
        Ok(PersistentTtlNode {
            node,
            touch,
            ttl: self.ttl,
            _stop: stop,
        })
    }
}

impl PersistentTtlNode {
    /// Settings for a node at `path` kept by a touch child with `ttl`.
    pub fn builder(client: &Client, path: &str, ttl: Duration) -> PersistentTtlNodeBuilder {
        PersistentTtlNodeBuilder {
            client: client.clone(),
            path: path.to_string(),
            ttl,
            data: Vec::new(),
        }
    }

    /// Waits until both nodes were created once: `false` if `timeout` passed first.
    pub async fn wait_for_initial_create(&self, timeout: Duration) -> Result<bool> {
        Ok(self.node.wait_for_initial_create(timeout).await?
            && self.touch.wait_for_initial_create(timeout).await?)
    }

    /// Changes the node's data.
    pub async fn set_data(&self, data: &[u8]) -> Result<()> {
        self.node.set_data(data).await
    }

    /// Stops touching, deletes the touch child and the node. Dropping it does the same in
    /// the background.
    pub async fn close(self) -> Result<()> {
        let PersistentTtlNode {
            node, touch, _stop, ..
        } = self;
        drop(_stop);
        touch.close().await?;
        node.close().await
    }
}

impl std::fmt::Debug for PersistentTtlNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PersistentTtlNode")
            .field("node", &self.node)
            .field("ttl", &self.ttl)
            .finish()
    }
}
