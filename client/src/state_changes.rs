//! [`StateChanges`]: a subscription to connection-state transitions that never drops one.

use std::pin::Pin;
use std::task::{Context, Poll};

use crate::event_stream::EventStream;
use crate::session::StateChange;

/// Connection-state transitions, in order, from the moment of subscription. Each subscriber
/// has its own queue, so a slow reader never makes another miss a transition. The queue is
/// not bounded: transitions come at the pace of connection events, and none may be dropped
/// (a reader that never reads holds one small item per transition).
#[derive(Debug)]
pub struct StateChanges {
    initial: StateChange,
    rx: EventStream<StateChange>,
}

impl StateChanges {
    pub(crate) fn new(initial: StateChange, rx: EventStream<StateChange>) -> Self {
        StateChanges { initial, rx }
    }

    /// The state when the subscription was made.
    pub fn initial(&self) -> StateChange {
        self.initial
    }

    /// The next transition; `None` once the client is gone.
    pub async fn next(&mut self) -> Option<StateChange> {
        self.rx.next().await
    }

    /// Polls for the next transition.
    pub fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<StateChange>> {
        self.rx.poll_event(cx)
    }

    /// A transition already queued, without waiting.
    pub fn try_next(&mut self) -> Option<StateChange> {
        self.rx.try_next()
    }
}

impl futures_core::Stream for StateChanges {
    type Item = StateChange;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<StateChange>> {
        self.get_mut().rx.poll_event(cx)
    }
}
