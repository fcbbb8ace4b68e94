//! The connect string's hosts change under a live session (`Client::update_hosts`): the
//! picker gets the new list, and ZOOKEEPER-1355's rebalancing ([`crate::rebalance`]) decides
//! whether this client leaves its host, keeping its session either way.

use super::*;

/// What a new host list means for a client whose host is in it too: it decides whether
/// [`Session::update_hosts`] may move such a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HostChange {
    /// The ensemble's membership changed (a reconfiguration, a new connect string):
    /// ZOOKEEPER-1355's draw moves a share of the clients to the added hosts, so that the
    /// load evens out. A client whose host left moves too.
    Rebalance,
    /// The hosts are new to this client, not to the ensemble (say an ensemble tracker's
    /// first reading of the membership): no draw, a client whose host is kept stays on it;
    /// one whose host left moves.
    Replace,
}

impl<T> Session<T> {
    /// The hosts changed: `kept[i]` is the old index of new host `i`, or `None` for a host
    /// that was not in the list; `names[i]` its name (for SASL), like
    /// [`SessionConfig::host_names`]; `change` says whether a client whose host is kept may
    /// be moved (see [`HostChange`]). From now on host indices (in [`Event::Connect`],
    /// [`Event::ProbeReadWrite`], [`Session::current_host`]) are into the new list.
    ///
    /// A client that stays keeps its connection. One that moves (its host left, or the
    /// draw sends it to an added host) from a healthy connection to a read-write server
    /// opens a connection to its new host first, and moves the session there without
    /// suspending it ([`Event::ConnectSpare`], then [`Event::UseSpare`] and
    /// [`Event::Moved`]; see `moving.rs` for the protocol and its fallbacks). Otherwise
    /// (no connection yet, a read-only server, a persistent watch held) it drops the
    /// connection, or the attempt under way, and connects to its new host at once: the
    /// session goes on there (`Suspended`, then `Reconnected`). Returns whether it moves. An
    /// empty list is ignored (false).
    pub fn update_hosts(
        &mut self,
        kept: &[Option<usize>],
        names: Vec<String>,
        change: HostChange,
        now: Instant,
    ) -> bool {
        if kept.is_empty() || self.conn == Conn::Closed {
            return false;
        }
        // A move under way is overtaken: the new list decides afresh.
        self.abandon_move(now);
        let old_count = if change == HostChange::Rebalance {
            self.hosts.host_count()
        } else {
            // As if no host were added: a kept host is never left for an added one.
            kept.len()
        };
        // The host we are on, or the one we would try next (none if ours left the list).
        let on = self.current_host().unwrap_or_else(|| self.hosts.current());
        let current = kept
            .iter()
            .position(|k| *k == Some(on))
            .filter(|_| !self.off_list);
        let is_kept: Vec<bool> = kept.iter().map(Option::is_some).collect();
        let plan = rebalance::rebalance(old_count, &is_kept, current, &mut self.rng);
        self.hosts.reorder(plan.order, plan.start);
        self.cfg.host_count = kept.len();
        self.cfg.host_names = names;
        let renumbered = current.filter(|_| !plan.move_now);
        if renumbered.is_none() && self.can_move() {
            // Leaving a healthy connection by choice: make before break (`moving.rs`).
            self.off_list = current.is_none();
            if let Conn::Open { host, .. } = &mut self.conn {
                // A placeholder when the old host left the list: the host moved to.
                *host = current.unwrap_or_else(|| self.hosts.current());
            }
            self.begin_move(current.is_some(), now);
            return plan.move_now;
        }
        match (&mut self.conn, renumbered) {
            (Conn::Idle { .. } | Conn::Closed, _) => {}
            (
                Conn::Connecting { host, .. }
                | Conn::Handshaking { host, .. }
                | Conn::Open { host, .. },
                Some(new_index),
            ) => *host = new_index,
            (_, None) => {
                self.loss_reason = Some(ConnectionFailure::HostsChanged);
                if self.tear_down(now) {
                    self.schedule_connect(now, Duration::ZERO);
                }
            }
        }
        plan.move_now
    }
}
