//! Changing a reconfigurable [`TestingCluster`]'s membership: starting a member that joins
//! a running ensemble, and the `server.N=` lines `reconfig` takes.
//!
//! The test kit starts and stops servers; the `reconfig` itself is the client's to send
//! (that is what tests test).

use std::fs;
use std::path::Path;

use crate::cluster::{create_member, TestingCluster};
use crate::config::{self, PeerPorts};
use crate::error::{Error, Result};
use crate::ports::free_ports;
use crate::server::wait_ready;

impl TestingCluster {
    /// Starts a new member that joins this reconfigurable ensemble (started with
    /// [`ServerOptions::reconfig`](crate::ServerOptions::reconfig)), waits until it serves,
    /// and returns its index (its `myid` is the index + 1).
    ///
    /// As ZooKeeper's admin guide does it: the new member's dynamic file lists the current
    /// configuration (read from the running members' newest dynamic file, so earlier
    /// reconfigs count) plus itself. It syncs with the leader and serves clients as a
    /// non-voting follower until a `reconfig` adds [`member_spec`](Self::member_spec) to
    /// the configuration. Removing a member is the other way round: `reconfig` it out, then
    /// [`kill`](Self::kill) it (a removed member may keep serving until then).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if the ensemble is not reconfigurable; as for
    /// [`restart`](Self::restart) if the new member does not serve.
    pub fn add_member(&mut self) -> Result<usize> {
        if !self.options.reconfig {
            return Err(Error::InvalidArgument {
                message: "add_member needs an ensemble started with ServerOptions::reconfig(true)"
                    .into(),
            });
        }
        let per_member = if self.options.tls.is_some() { 4 } else { 3 };
        let ports = free_ports(per_member).map_err(|e| Error::io("finding free ports", e))?;
        let peer = PeerPorts {
            client: ports[0],
            quorum: ports[1],
            election: ports[2],
        };
        let secure_port = ports.get(3).copied();
        let i = self.members.len();
        let mut lines = self.current_dynamic_lines()?;
        lines.push(config::dynamic_line(i + 1, &peer));
        let instance = create_member(
            self.dir.path(),
            i,
            &peer,
            secure_port,
            &[peer],
            &self.options,
            &lines,
        )?;
        instance.spawn(&self.install, &self.options)?;
        // Kept even if it does not come up: dropping the cluster then kills it and its log
        // stays readable through the index.
        self.members.push(instance);
        self.secure_ports.push(secure_port);
        self.peers.push(peer);
        wait_ready(&self.members[i], secure_port, self.options.startup_timeout)?;
        Ok(i)
    }

    /// Member `i`'s line for `reconfig` (joining or bulk):
    /// `server.<i+1>=127.0.0.1:QUORUM:ELECTION:participant;127.0.0.1:CLIENT`, as ZooKeeper
    /// writes it in `/zookeeper/config`.
    pub fn member_spec(&self, i: usize) -> String {
        self.member(i);
        config::dynamic_line(i + 1, &self.peers[i])
    }

    /// The `server.N=` lines of the newest dynamic configuration file among the running
    /// members (each server rewrites its file, `zoo.cfg.dynamic.<version in hex>`, and
    /// points its `zoo.cfg` at it, when a reconfiguration commits).
    pub fn current_dynamic_config(&self) -> Result<Vec<String>> {
        self.current_dynamic_lines()
    }

    fn current_dynamic_lines(&self) -> Result<Vec<String>> {
        let mut newest: Option<(u64, String)> = None;
        for (i, member) in self.members.iter().enumerate() {
            if !self.is_running(i) {
                continue;
            }
            let Some((version, text)) = dynamic_file_of(member.dir())? else {
                continue;
            };
            if newest.as_ref().is_none_or(|(v, _)| version > *v) {
                newest = Some((version, text));
            }
        }
        let Some((_, text)) = newest else {
            return Err(Error::InvalidArgument {
                message: "no running member has a dynamic configuration file".into(),
            });
        };
        Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("server."))
            .map(str::to_string)
            .collect())
    }
}

/// The dynamic file a member's `zoo.cfg` points at, with its version (the file name's hex
/// suffix; 0 for the file the test kit wrote).
fn dynamic_file_of(dir: &Path) -> Result<Option<(u64, String)>> {
    let zoo_cfg = dir.join(config::ZOO_CFG);
    let text = fs::read_to_string(&zoo_cfg)
        .map_err(|e| Error::io(format!("reading {}", zoo_cfg.display()), e))?;
    let Some(path) = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("dynamicConfigFile="))
    else {
        return Ok(None);
    };
    let path = Path::new(path.trim());
    let version = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.rsplit_once(".dynamic."))
        .and_then(|(_, hex)| u64::from_str_radix(hex, 16).ok())
        .unwrap_or(0);
    let dynamic = fs::read_to_string(path)
        .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
    Ok(Some((version, dynamic)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tempdir::TempDir;

    #[test]
    fn reads_the_dynamic_file_zoo_cfg_points_at_with_its_version() {
        let dir = TempDir::new().unwrap();
        let dynamic = dir.path().join("zoo.cfg.dynamic.10000000a");
        fs::write(&dynamic, "server.1=127.0.0.1:1:2:participant;127.0.0.1:3\n").unwrap();
        fs::write(
            dir.path().join(config::ZOO_CFG),
            format!("tickTime=200\ndynamicConfigFile={}\n", dynamic.display()),
        )
        .unwrap();
        let (version, text) = dynamic_file_of(dir.path()).unwrap().unwrap();
        assert_eq!(version, 0x1_0000_000a);
        assert!(text.starts_with("server.1="), "{text}");
        // The file the test kit writes has no version suffix: 0.
        fs::write(
            dir.path().join(config::ZOO_CFG),
            format!(
                "dynamicConfigFile={}\n",
                dir.path().join(config::DYNAMIC_CFG).display()
            ),
        )
        .unwrap();
        fs::write(dir.path().join(config::DYNAMIC_CFG), "server.2=h:1:2\n").unwrap();
        assert_eq!(dynamic_file_of(dir.path()).unwrap().unwrap().0, 0);
        // A static member: none.
        fs::write(dir.path().join(config::ZOO_CFG), "clientPort=1\n").unwrap();
        assert!(dynamic_file_of(dir.path()).unwrap().is_none());
    }
}
