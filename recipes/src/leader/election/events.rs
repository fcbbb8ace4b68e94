//! The election's states and events: the Java recipe's `State` and `EventType`.

/// The states of the election (the Java recipe's `State`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ElectionState {
    /// Started; no offer yet.
    Start,
    /// Making an offer (creating the node).
    Offer,
    /// Working out where the offer stands.
    Determine,
    /// Leading.
    Elected,
    /// Not leading: watching the offer just before ours.
    Ready,
    /// Something went wrong (connection, session, our node deleted); the election recovers on
    /// its own unless stopped.
    Failed,
    /// Stopped (also the state before the first start).
    Stop,
}

/// The events of the election, in the order they happen (the Java recipe's `EventType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ElectionEvent {
    /// [`LeaderElectionBuilder::start`](super::LeaderElectionBuilder::start) was called.
    Start,
    /// Creating an offer.
    OfferStart,
    /// The offer exists.
    OfferComplete,
    /// Working out where the offer stands.
    DetermineStart,
    /// Done: ELECTED or READY follows.
    DetermineComplete,
    /// Becoming leader.
    ElectedStart,
    /// Leading.
    ElectedComplete,
    /// Becoming a follower.
    ReadyStart,
    /// Following: watching the offer just before ours.
    ReadyComplete,
    /// Something went wrong; recovery follows.
    Failed,
    /// [`LeaderElection::close`](super::LeaderElection::close) was called (or it was dropped).
    StopStart,
    /// Stopped: the offer is deleted.
    StopComplete,
}

impl ElectionEvent {
    /// The state the election is in once this event is dispatched.
    pub fn state(self) -> ElectionState {
        match self {
            ElectionEvent::Start => ElectionState::Start,
            ElectionEvent::OfferStart | ElectionEvent::OfferComplete => ElectionState::Offer,
            ElectionEvent::DetermineStart | ElectionEvent::DetermineComplete => {
                ElectionState::Determine
            }
            ElectionEvent::ElectedStart | ElectionEvent::ElectedComplete => ElectionState::Elected,
            ElectionEvent::ReadyStart | ElectionEvent::ReadyComplete => ElectionState::Ready,
            ElectionEvent::Failed => ElectionState::Failed,
            ElectionEvent::StopStart | ElectionEvent::StopComplete => ElectionState::Stop,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_has_its_state() {
        assert_eq!(ElectionEvent::Start.state(), ElectionState::Start);
        assert_eq!(ElectionEvent::OfferComplete.state(), ElectionState::Offer);
        assert_eq!(
            ElectionEvent::DetermineStart.state(),
            ElectionState::Determine
        );
        assert_eq!(
            ElectionEvent::ElectedComplete.state(),
            ElectionState::Elected
        );
        assert_eq!(ElectionEvent::ReadyStart.state(), ElectionState::Ready);
        assert_eq!(ElectionEvent::Failed.state(), ElectionState::Failed);
        assert_eq!(ElectionEvent::StopComplete.state(), ElectionState::Stop);
    }
}
