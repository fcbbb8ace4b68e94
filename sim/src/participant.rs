//! The service under test crashing: [`World::spawn_participant`] runs a participant as a
//! task and, at each crash the plan draws for it ([`FaultKind::ParticipantCrash`]), drops
//! that task wherever it awaits and starts it again when the crash ends, as a supervisor
//! restarts a process.

use std::future::Future;
use std::time::Duration;

use crate::faults::FaultKind;
use crate::world::World;

impl World {
    /// Runs participant `id` of the service under test: `start(world)` as a task of its own
    /// now, and again after each crash the plan has for it
    /// ([`FaultConfig::participant_crashes`](crate::FaultConfig::participant_crashes)).
    ///
    /// Clients made from the world `start` is given belong to the participant. At a crash
    /// its task is dropped wherever it awaits (what the future owns is dropped: a guard's
    /// `Drop` runs, a `JoinSet` it holds aborts its tasks; a task it spawned otherwise runs
    /// on, with clients that can no longer reach the ensemble), and its connections are
    /// reset with nothing more sent: no close reaches the ensemble, so its sessions and
    /// their ephemeral nodes live on until the ensemble expires them, as a crashed
    /// process's do. When the crash ends, `start` is called again with a world whose
    /// clients are new ones.
    pub fn spawn_participant<F, Fut>(&self, id: usize, start: F)
    where
        F: Fn(World) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let world = self.clone();
        let crashes: Vec<_> = self
            .crashes
            .iter()
            .filter(|f| f.kind == FaultKind::ParticipantCrash && f.member == id)
            .copied()
            .collect();
        tokio::spawn(async move {
            let mut task = tokio::spawn(start(world.incarnation(id, 0)));
            for crash in crashes {
                world.sleep_until(crash.at).await;
                // The network resets its connections at this instant (the fault's start):
                // a close the dropped clients' drivers write now is never delivered.
                task.abort();
                world.trace(&format!("participant {id} crashed (fault #{})", crash.id));
                world.sleep_until(crash.at + crash.length).await;
                let incarnation = world.net.lock().revive(id);
                world.trace(&format!("participant {id} restarts ({incarnation})"));
                task = tokio::spawn(start(world.incarnation(id, incarnation)));
            }
        });
    }

    /// This world, making clients for participant `id`'s `incarnation`.
    fn incarnation(&self, id: usize, incarnation: u64) -> World {
        let mut world = self.clone();
        world.owner = Some((id, incarnation));
        world
    }

    async fn sleep_until(&self, at: Duration) {
        tokio::time::sleep(at.saturating_sub(self.now())).await;
    }
}
