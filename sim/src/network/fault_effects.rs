//! What each fault does to the network as it starts and ends: a member crashed, held back,
//! behind a black hole or slowed; connections reset or cut; a client cut off or paused; a
//! participant's incarnation ended. The ensemble model is told what is its to know.

use std::time::Duration;

use super::{Event, Network};
use crate::faults::{Direction, Fault, FaultKind};

impl Network {
    /// Whether connection `id` lost bytes and nothing cuts it off still (a black hole on its
    /// member, an outage, its client's isolation): it is reset as the last of them heals.
    fn lost_and_healed(&self, id: u64) -> bool {
        let c = &self.conns[&id];
        let net = &self.members[c.member];
        c.lost_bytes
            && !c.ended
            && !(net.hole_requests || net.hole_replies || self.outage || self.isolated(c.client))
    }

    pub(super) fn start_fault(&mut self, f: Fault, now: Duration) {
        self.trace.record(now, &format!("start {f}"));
        self.faults_injected += 1;
        let m = f.member;
        match f.kind {
            FaultKind::Crash => {
                self.members[m].crashed = true;
                self.ensemble.crash(m);
            }
            FaultKind::Isolate => self.ensemble.partition(m),
            FaultKind::Lag => {
                let mut rng = self.rng.fork(1 << 32 | f.id as u64);
                let next = now + Duration::from_millis(rng.between(50, 800));
                self.members[m].lag = Some((f.id, rng));
                self.ensemble.hold(m);
                self.schedule(
                    next,
                    Event::LagStep {
                        member: m,
                        fault: f.id,
                    },
                );
            }
            FaultKind::BlackHole(d) => {
                let net = &mut self.members[m];
                net.hole_requests |= matches!(d, Direction::Requests | Direction::Both);
                net.hole_replies |= matches!(d, Direction::Replies | Direction::Both);
            }
            FaultKind::Reset => {
                for id in self.conns_of(m) {
                    self.reset(id, now);
                }
            }
            FaultKind::Cut => self.members[m].cut_next = true,
            FaultKind::Latency { extra_ms } => {
                self.members[m].extra_latency = Duration::from_millis(extra_ms);
            }
            FaultKind::SkipReply { replies } => self.members[m].skip_replies += replies,
            FaultKind::Outage => self.outage = true,
            FaultKind::ParticipantCrash => {
                // Down, and every connection of its incarnation reset: nothing it had
                // written and not sent, a close included, reaches the ensemble.
                self.participants.entry(m).or_insert((0, false)).1 = true;
                let ids: Vec<u64> = self
                    .conns
                    .iter()
                    .filter(|(_, c)| c.owner.is_some_and(|(p, _)| p == m) && !c.ended)
                    .map(|(&id, _)| id)
                    .collect();
                for id in ids {
                    self.reset(id, now);
                }
            }
            FaultKind::IsolateClient { client } => {
                self.clients.entry(client).or_default().isolated = true;
            }
            FaultKind::PauseClient { client } => {
                self.clients.entry(client).or_default().parked = Some(Vec::new());
            }
        }
        if f.length > Duration::ZERO {
            self.active += 1;
            self.schedule(f.at + f.length, Event::FaultEnd(f));
        }
    }

    pub(super) fn end_fault(&mut self, f: Fault, now: Duration) {
        self.trace.record(now, &format!("end {f}"));
        self.active -= 1;
        let m = f.member;
        match f.kind {
            FaultKind::Crash => {
                self.members[m].crashed = false;
                self.ensemble.restart(m);
            }
            FaultKind::Isolate => self.ensemble.heal(m),
            FaultKind::Lag => {
                self.members[m].lag = None;
                self.ensemble.release(m);
            }
            FaultKind::BlackHole(_) => {
                let net = &mut self.members[m];
                net.hole_requests = false;
                net.hole_replies = false;
                let lost: Vec<u64> = self
                    .conns_of(m)
                    .into_iter()
                    .filter(|&id| self.lost_and_healed(id))
                    .collect();
                for id in lost {
                    self.reset(id, now);
                }
            }
            FaultKind::Latency { .. } => self.members[m].extra_latency = Duration::ZERO,
            FaultKind::Outage => {
                self.outage = false;
                // As a black hole's end: a connection that lost bytes is reset, unless its
                // member is still in a hole of its own, or its client cut off (reset when
                // that one heals).
                let lost: Vec<u64> = self
                    .conns
                    .keys()
                    .copied()
                    .filter(|&id| self.lost_and_healed(id))
                    .collect();
                for id in lost {
                    self.reset(id, now);
                }
            }
            FaultKind::IsolateClient { client } => {
                self.clients.remove(&client);
                let lost: Vec<u64> = self
                    .conns
                    .iter()
                    .filter(|(_, c)| c.client == client)
                    .map(|(&id, _)| id)
                    .filter(|&id| self.lost_and_healed(id))
                    .collect();
                for id in lost {
                    self.reset(id, now);
                }
            }
            FaultKind::PauseClient { client } => {
                // What waited goes on now, in the order it came.
                let parked = self.clients.remove(&client).and_then(|c| c.parked);
                for event in parked.unwrap_or_default() {
                    self.schedule(now, event);
                }
            }
            // The participant's restart brings it back up (`revive`).
            FaultKind::Reset
            | FaultKind::Cut
            | FaultKind::SkipReply { .. }
            | FaultKind::ParticipantCrash => {}
        }
    }

    /// Participant `p` starts again after a crash: its new incarnation, which may dial.
    pub(crate) fn revive(&mut self, p: usize) -> u64 {
        let (incarnation, down) = self.participants.entry(p).or_insert((0, false));
        *incarnation += 1;
        *down = false;
        *incarnation
    }
}
