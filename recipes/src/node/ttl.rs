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
/// let node = PersistentTtlNode::new(&client, "/workers/w1", Duration::from_secs(30), b"busy");
/// node.start()?;
/// // ... gone about 30 s after this process stops touching it ...
/// node.close().await?;
/// # Ok(()) }
/// ```
#[must_use = "dropping it gives up what it holds (its node, or its watch) at once"]
pub struct PersistentTtlNode {
    node: PersistentNode,
    touch: PersistentNode,
    ttl: Duration,
    stop: std::sync::Mutex<Option<oneshot::Sender<()>>>,
}

impl PersistentTtlNode {
    /// A node at `path` kept by a touch child with `ttl` (not started).
    pub fn new(client: &Client, path: &str, ttl: Duration, data: &[u8]) -> PersistentTtlNode {
        PersistentTtlNode {
            node: PersistentNode::new(client, path, CreateMode::Container, data),
            touch: PersistentNode::new(
                client,
                &join(path, TOUCH_NODE),
                CreateMode::PersistentWithTtl,
                b"",
            )
            .with_ttl(ttl),
            ttl,
            stop: std::sync::Mutex::new(None),
        }
    }

    /// Starts keeping the node and touching its child every `ttl / 2` (in tasks; needs a
    /// tokio runtime).
    pub fn start(&self) -> Result<()> {
        self.node.start()?;
        self.touch.start()?;
        let (stop, mut stopped) = oneshot::channel::<()>();
        *self.stop.lock().unwrap_or_else(|e| e.into_inner()) = Some(stop);
        let touch = self.touch.handle();
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
                        let _ = touch.touch().await;
                    }
                }
            }
        });
        Ok(())
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

    /// Stops touching, deletes the touch child and the node.
    pub async fn close(&self) -> Result<()> {
        self.stop.lock().unwrap_or_else(|e| e.into_inner()).take();
        self.touch.close().await?;
        self.node.close().await
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
