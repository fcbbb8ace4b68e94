//! The line: queueing on ephemeral-sequential nodes, whoever sorts first going first, as the
//! locks, `LeaderLatch` and `LeaderElection` do.

pub(crate) mod place;
