//! Delivery of watch events: each change of a write goes through the data and child tables
//! in ZooKeeper's order (`createNode`, `deleteNode`, `setData`), and each connection that
//! fires gets a notification frame (xid -1) in its output, ahead of the reply to the write.
//! Its header's zxid is -1 on 3.8; from 3.9 (ZOOKEEPER-4655) the zxid of the transaction that
//! fired it, which is the tree's last one when `notify` runs (every caller applies one
//! transaction, then notifies).

use std::collections::BTreeSet;

use zkrs_codec::{
    write_frame, xid, AclEntry, Encode, ErrorCode, EventType, KeeperState, ReplyHeader,
    WatcherEvent,
};

use crate::acl;
use crate::connection_id::ConnectionId;
use crate::path::{parent_of, watch_key};
use crate::server::Server;
use crate::write::Change;

impl Server {
    /// Fires the watches of `changes`, in order. A connection whose identities may not read
    /// the node (its parent, for children events) does not get the event, though its one-shot
    /// watch is used up: the CVE-2024-23944 check of 3.8.4+, also in Debian's 3.8.0 package.
    pub(crate) fn notify(&mut self, changes: Vec<Change>) {
        let none = BTreeSet::new();
        let zxid = if self.config.zookeeper.events_carry_zxid() {
            self.tree.last_zxid
        } else {
            -1
        };
        for change in changes {
            match change {
                Change::Created(path, acl, parent_acl) => {
                    let fired = self
                        .data_watches
                        .trigger(&path, EventType::NodeCreated, &none);
                    self.send_event(&fired, EventType::NodeCreated, &path, Some(&acl), zxid);
                    self.children_changed(&path, &parent_acl, zxid);
                }
                Change::Deleted(path, acl, parent_acl) => {
                    let data = self
                        .data_watches
                        .trigger(&path, EventType::NodeDeleted, &none);
                    self.send_event(&data, EventType::NodeDeleted, &path, Some(&acl), zxid);
                    let child = self
                        .child_watches
                        .trigger(&path, EventType::NodeDeleted, &data);
                    self.send_event(&child, EventType::NodeDeleted, &path, Some(&acl), zxid);
                    self.children_changed(&path, &parent_acl, zxid);
                }
                Change::DataChanged(path, acl) => {
                    let fired = self
                        .data_watches
                        .trigger(&path, EventType::NodeDataChanged, &none);
                    self.send_event(&fired, EventType::NodeDataChanged, &path, Some(&acl), zxid);
                }
            }
        }
    }

    fn children_changed(&mut self, child: &str, parent_acl: &[AclEntry], zxid: i64) {
        let parent = watch_key(parent_of(child).unwrap_or("")).to_owned();
        let fired =
            self.child_watches
                .trigger(&parent, EventType::NodeChildrenChanged, &BTreeSet::new());
        self.send_event(
            &fired,
            EventType::NodeChildrenChanged,
            &parent,
            Some(parent_acl),
            zxid,
        );
    }

    /// Sends one notification to each connection that may read it (`acl`: the node's ACL,
    /// `None` for events that are not checked), with `zxid` in its header.
    pub(crate) fn send_event(
        &mut self,
        to: &BTreeSet<ConnectionId>,
        event: EventType,
        path: &str,
        acl: Option<&[AclEntry]>,
        zxid: i64,
    ) {
        for &conn in to {
            let allowed = match (acl, self.connections.get(&conn)) {
                (Some(acl), Some(c)) => acl::check(acl, 1, &c.auth).is_ok(),
                _ => true,
            };
            if allowed {
                self.send_event_to(conn, event, path, zxid);
            }
        }
    }

    /// One notification on `conn`; setWatches' own events carry zxid -1 on every release.
    pub(crate) fn send_event_to(
        &mut self,
        conn: ConnectionId,
        event: EventType,
        path: &str,
        zxid: i64,
    ) {
        let Some(c) = self.connections.get_mut(&conn) else {
            return;
        };
        write_frame(&mut c.output, |buf| {
            ReplyHeader {
                xid: xid::NOTIFICATION,
                zxid,
                err: ErrorCode::Ok,
            }
            .encode(buf);
            WatcherEvent {
                event_type: event,
                state: KeeperState::SyncConnected,
                path: Some(path),
            }
            .encode(buf);
        });
        self.mark_dirty(conn);
    }
}
