//! Putting an item: one sequential node, after waiting for room in a bounded queue.

use crate::error::ErrorExt;
use std::time::Duration;

use tokio::time::Instant;
use zkrs_client::{CreateMode, Error, ErrorCode, Result};

use super::bound::wait_for_room;
use super::item::encode_items;
use super::spec::Spec;
use crate::framework::join;

/// Creates `<queue>/<prefix><seq>` with `data`, waiting for room first if the queue is
/// bounded (until `deadline`: `Ok(None)` if it passed). Creates the queue node if missing.
///
/// If the connection drops with the create in flight the error is returned: the item may or
/// may not be in the queue (Curator's put is the same; its names cannot be protected without
/// Curator's consumers skipping them).
pub(crate) async fn put_node(
    spec: &Spec,
    prefix: &str,
    data: &[u8],
    deadline: Option<Instant>,
) -> Result<Option<String>> {
    spec.validate()?;
    if let Some(max) = spec.max_items {
        if !wait_for_room(&spec.client, &spec.path, max, deadline).await? {
            return Ok(None);
        }
    }
    let path = join(&spec.path, prefix);
    loop {
        match spec
            .client
            .create(&path, data, CreateMode::PersistentSequential)
            .await
        {
            Ok(created) => {
                crate::metrics::count::queue_put();
                return Ok(Some(created));
            }
            Err(e) if e.code() == Some(ErrorCode::NoNode) => spec.ensure_dir().await?,
            Err(e) => return Err(e),
        }
    }
}

/// Frames a batch, refusing an empty one.
pub(crate) fn frame_batch<I>(items: I) -> Result<Vec<u8>>
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
{
    let items: Vec<I::Item> = items.into_iter().collect();
    if items.is_empty() {
        return Err(Error::invalid(
            "an empty batch: put_multi needs at least one item",
        ));
    }
    Ok(encode_items(&items))
}

/// The deadline `timeout` from now.
pub(crate) fn deadline_in(timeout: Duration) -> Instant {
    Instant::now() + timeout
}
