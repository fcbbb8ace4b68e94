//! [`StateChanges`]: a subscription to connection-state transitions that never drops one.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::sync::mpsc;

use crate::session::StateChange;

/// Connection-state transitions, in order, from the moment of subscription. Each subscriber
/// has its own unbounded queue, so a slow reader never makes another miss a transition.
#[derive(Debug)]
pub struct StateChanges {
    initial: StateChange,
    rx: mpsc::UnboundedReceiver<StateChange>,
}

impl StateChanges {
    pub(crate) fn new(initial: StateChange, rx: mpsc::UnboundedReceiver<StateChange>) -> Self {
        StateChanges { initial, rx }
    }

    /// The state when the subscription was made.
    pub fn initial(&self) -> StateChange {
        self.initial
    }

    /// The next transition; `None` once the client is gone.
    pub async fn next(&mut self) -> Option<StateChange> {
        self.rx.recv().await
    }

    /// Polls for the next transition.
    pub fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<StateChange>> {
        self.rx.poll_recv(cx)
    }

    /// A transition already queued, without waiting.
    pub fn try_next(&mut self) -> Option<StateChange> {
        self.rx.try_recv().ok()
    }
}

impl futures_core::Stream for StateChanges {
    type Item = StateChange;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<StateChange>> {
        self.get_mut().rx.poll_recv(cx)
    }
}
