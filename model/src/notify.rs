//! Delivery of watch events: each change of a write goes through the data and child tables
//! in ZooKeeper's order (`createNode`, `deleteNode`, `setData`), and each connection that
//! fires gets a notification frame (xid -1) in its output, ahead of the reply to the write.

use std::collections::BTreeSet;

use zkrs_codec::{
    write_frame, xid, Encode, ErrorCode, EventType, KeeperState, ReplyHeader, WatcherEvent,
};

use crate::connection_id::ConnectionId;
use crate::path::{parent_of, watch_key};
use crate::server::Server;
use crate::write::Change;

impl Server {
    /// Fires the watches of `changes`, in order.
    pub(crate) fn notify(&mut self, changes: Vec<Change>) {
        let none = BTreeSet::new();
        for change in changes {
            match change {
                Change::Created(path) => {
                    let fired = self
                        .data_watches
                        .trigger(&path, EventType::NodeCreated, &none);
                    self.send_event(&fired, EventType::NodeCreated, &path);
                    let parent = watch_key(parent_of(&path).unwrap_or("")).to_owned();
                    let fired =
                        self.child_watches
                            .trigger(&parent, EventType::NodeChildrenChanged, &none);
                    self.send_event(&fired, EventType::NodeChildrenChanged, &parent);
                }
                Change::Deleted(path) => {
                    let data = self
                        .data_watches
                        .trigger(&path, EventType::NodeDeleted, &none);
                    self.send_event(&data, EventType::NodeDeleted, &path);
                    let child = self
                        .child_watches
                        .trigger(&path, EventType::NodeDeleted, &data);
                    self.send_event(&child, EventType::NodeDeleted, &path);
                    let parent = watch_key(parent_of(&path).unwrap_or("")).to_owned();
                    let fired =
                        self.child_watches
                            .trigger(&parent, EventType::NodeChildrenChanged, &none);
                    self.send_event(&fired, EventType::NodeChildrenChanged, &parent);
                }
                Change::DataChanged(path) => {
                    let fired = self
                        .data_watches
                        .trigger(&path, EventType::NodeDataChanged, &none);
                    self.send_event(&fired, EventType::NodeDataChanged, &path);
                }
            }
        }
    }

    /// Sends one notification to each connection.
    pub(crate) fn send_event(&mut self, to: &BTreeSet<ConnectionId>, event: EventType, path: &str) {
        for &conn in to {
            self.send_event_to(conn, event, path);
        }
    }

    pub(crate) fn send_event_to(&mut self, conn: ConnectionId, event: EventType, path: &str) {
        let Some(c) = self.connections.get_mut(&conn) else {
            return;
        };
        write_frame(&mut c.output, |buf| {
            ReplyHeader {
                xid: xid::NOTIFICATION,
                zxid: -1,
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
