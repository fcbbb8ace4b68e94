//! [`Current`]: the latest value of something that changes, and a way to wait for changes.

/// The latest value of something that changes (leadership, an election's state), and a way
/// to wait for it to change. Quick changes coalesce: a reader sees the latest value, not every
/// step (the recipes' event streams give every transition). Clone it freely.
///
/// ```no_run
/// // `leading` from, say, `LeaderLatch::leadership()` (zkrs-recipes).
/// # async fn demo(mut leading: zkrs_client::Current<bool>) {
/// leading.wait_for(|l| *l).await; // until we lead
/// println!("leading: {}", leading.get());
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Current<T> {
    rx: tokio::sync::watch::Receiver<T>,
}

impl<T: Clone> Current<T> {
    /// Follows a tokio watch channel (the recipes reach it through `__private`).
    pub(crate) fn from_watch(rx: tokio::sync::watch::Receiver<T>) -> Current<T> {
        Current { rx }
    }

    /// The value now (and marks it seen).
    pub fn get(&mut self) -> T {
        self.rx.borrow_and_update().clone()
    }

    /// Waits for a value not seen yet; `None` once its source is gone.
    pub async fn changed(&mut self) -> Option<T> {
        self.rx.changed().await.ok()?;
        Some(self.get())
    }

    /// Waits until the value satisfies `f` (at once if it does now); `None` if its source is
    /// gone first.
    pub async fn wait_for(&mut self, f: impl FnMut(&T) -> bool) -> Option<T> {
        self.rx.wait_for(f).await.ok().map(|v| v.clone())
    }
}
