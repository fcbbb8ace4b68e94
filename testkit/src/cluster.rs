//! An ensemble of ZooKeeper servers.

use std::fs;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use crate::config::{self, PeerPorts};
use crate::error::{Error, Result};
use crate::four_letter::Mode;
use crate::instance::Instance;
use crate::locate::Installation;
use crate::options::ServerOptions;
use crate::ports::free_ports;
use crate::server::{wait_ready, PORT_ATTEMPTS};
use crate::tempdir::TempDir;
use crate::versions::ServerVersion;

/// How long one `srvr` probe of a member may take in [`TestingCluster::leader`].
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// A real ZooKeeper ensemble (`QuorumPeerMain` processes) on `127.0.0.1`,
/// like Curator's `TestingCluster`.
///
/// Members are numbered from 0 in this API; member `i` has ZooKeeper
/// `myid` `i + 1`. Each has its own client, quorum and election port and its
/// own folder (config, log, `dataDir` with `myid`) under one temporary
/// folder, deleted on drop together with every JVM. Every method takes
/// `&self`.
///
/// Methods taking a member index panic if it is `>= len()`, like slice
/// indexing.
///
/// ```no_run
/// use std::time::Duration;
/// use zkrs_testkit::TestingCluster;
///
/// let cluster = TestingCluster::start(3)?;
/// let connect = cluster.connect_string(); // "127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3"
/// let leader = cluster.wait_for_leader(Duration::from_secs(30))?;
/// cluster.kill(leader)?;                  // a new leader gets elected
/// let new_leader = cluster.wait_for_leader(Duration::from_secs(30))?;
/// assert_ne!(leader, new_leader);
/// cluster.restart(leader)?;               // rejoins as a follower
/// # drop(connect);
/// # Ok::<(), zkrs_testkit::Error>(())
/// ```
#[derive(Debug)]
pub struct TestingCluster {
    // Dropped before `dir`: JVMs die before their folders are deleted.
    pub(crate) members: Vec<Instance>,
    /// Each member's TLS port, when the options ask for TLS.
    pub(crate) secure_ports: Vec<Option<u16>>,
    /// Each member's client, quorum and election ports.
    pub(crate) peers: Vec<PeerPorts>,
    pub(crate) install: Installation,
    pub(crate) options: ServerOptions,
    pub(crate) dir: TempDir,
}

impl TestingCluster {
    /// Starts an ensemble of `n` members (3 is the usual choice) with
    /// [`ServerOptions::default`] and waits until every member serves.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if `n == 0`; otherwise as for
    /// [`TestingServer::start`](crate::TestingServer::start).
    pub fn start(n: usize) -> Result<Self> {
        Self::start_with(n, ServerOptions::default())
    }

    /// Starts an ensemble of `n` members with the given options (applied to
    /// every member) and waits until every member serves, within the
    /// options' startup timeout.
    ///
    /// With `n == 1` ZooKeeper runs the single member in standalone mode.
    ///
    /// # Errors
    ///
    /// As for [`start`](Self::start).
    pub fn start_with(n: usize, options: ServerOptions) -> Result<Self> {
        if n == 0 {
            return Err(Error::InvalidArgument {
                message: "an ensemble needs at least one member".into(),
            });
        }
        options.check()?;
        if crate::model_server::selected() {
            return Err(crate::model_server::unsupported("TestingCluster"));
        }
        let install = Installation::select(
            options.classpath.as_deref(),
            options.version.as_ref(),
            options.java.as_deref(),
        )?;
        let dir = TempDir::new().map_err(|e| Error::io("creating a temporary folder", e))?;
        let mut attempt = 1;
        loop {
            let (members, secure_ports, peers) = create_members(n, &options, dir.path())?;
            match start_all(&members, &secure_ports, &install, &options) {
                Ok(()) => {
                    return Ok(TestingCluster {
                        members,
                        secure_ports,
                        peers,
                        install,
                        options,
                        dir,
                    })
                }
                Err(e) => {
                    let conflict = members.iter().any(Instance::port_conflict);
                    // Kill every member before deciding anything else.
                    drop(members);
                    if !conflict || attempt >= PORT_ATTEMPTS {
                        return Err(e);
                    }
                    // Someone took one of the ports: the whole ensemble's
                    // configuration has to change. Wipe the members'
                    // folders and try again with new ports.
                    for entry in fs::read_dir(dir.path()).into_iter().flatten().flatten() {
                        let _ = fs::remove_dir_all(entry.path());
                    }
                    attempt += 1;
                }
            }
        }
    }

    pub(crate) fn member(&self, i: usize) -> &Instance {
        assert!(
            i < self.members.len(),
            "ensemble member {i} does not exist: the ensemble has {} members (0..{})",
            self.members.len(),
            self.members.len()
        );
        &self.members[i]
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Always `false`: an ensemble has at least one member.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// All members' client addresses, comma separated:
    /// `"127.0.0.1:P1,127.0.0.1:P2,..."`.
    pub fn connect_string(&self) -> String {
        self.members
            .iter()
            .map(|m| m.address().to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Member `i`'s connect string, `"127.0.0.1:PORT"` (to pin a client to
    /// one member).
    pub fn member_connect_string(&self, i: usize) -> String {
        self.member(i).address().to_string()
    }

    /// Member `i`'s client port.
    pub fn member_port(&self, i: usize) -> u16 {
        self.member(i).port()
    }

    /// Member `i`'s client address.
    pub fn member_address(&self, i: usize) -> SocketAddr {
        self.member(i).address()
    }

    /// Member `i`'s TLS port (`secureClientPort`) when the ensemble was
    /// started with [`ServerOptions::tls`], `None` otherwise.
    pub fn member_secure_port(&self, i: usize) -> Option<u16> {
        self.member(i);
        self.secure_ports[i]
    }

    /// Member `i`'s TLS connect string, `"127.0.0.1:PORT"`, `None` without
    /// TLS.
    pub fn member_secure_connect_string(&self, i: usize) -> Option<String> {
        self.member_secure_port(i)
            .map(|port| format!("127.0.0.1:{port}"))
    }

    /// All members' TLS addresses, comma separated, `None` without TLS.
    pub fn secure_connect_string(&self) -> Option<String> {
        let ports: Option<Vec<u16>> = self.secure_ports.iter().copied().collect();
        ports.map(|ports| {
            ports
                .iter()
                .map(|port| format!("127.0.0.1:{port}"))
                .collect::<Vec<_>>()
                .join(",")
        })
    }

    /// Member `i`'s log file.
    pub fn member_log_path(&self, i: usize) -> PathBuf {
        self.member(i).log_path()
    }

    /// Member `i`'s folder (config, log, `dataDir`).
    pub fn member_dir(&self, i: usize) -> &Path {
        self.member(i).dir()
    }

    /// Member `i`'s JVM pid, `None` when stopped.
    pub fn member_pid(&self, i: usize) -> Option<u32> {
        self.member(i).pid()
    }

    /// The mode member `i` reports to `srvr`; `None` when stopped, paused,
    /// not serving (no quorum) or not answering within a second.
    pub fn member_mode(&self, i: usize) -> Option<Mode> {
        self.member(i).mode(PROBE_TIMEOUT)
    }

    /// The version member `i` reports (`srvr`); every member runs the same one.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the member does not answer within 5 s (stopped, paused).
    pub fn version(&self, i: usize) -> Result<ServerVersion> {
        self.member(i).version(Duration::from_secs(5))
    }

    /// The temporary folder holding every member's folder.
    pub fn temp_dir(&self) -> &Path {
        self.dir.path()
    }

    /// The options every member was started with.
    pub fn options(&self) -> &ServerOptions {
        &self.options
    }

    /// Whether member `i`'s JVM is alive (a paused member is).
    pub fn is_running(&self, i: usize) -> bool {
        self.member(i).is_running()
    }

    /// Whether member `i` is paused by [`pause`](Self::pause).
    pub fn is_paused(&self, i: usize) -> bool {
        self.member(i).is_paused()
    }

    /// Kills member `i` abruptly (SIGKILL). No-op if stopped.
    ///
    /// # Errors
    ///
    /// If signalling or waiting fails.
    pub fn kill(&self, i: usize) -> Result<()> {
        self.member(i).kill()
    }

    /// Stops member `i` gracefully (SIGTERM, SIGKILL after 10 s). No-op if
    /// stopped.
    ///
    /// # Errors
    ///
    /// If signalling or waiting fails.
    pub fn stop(&self, i: usize) -> Result<()> {
        self.member(i).stop()
    }

    /// Starts a stopped member without waiting for it to serve (no-op if it
    /// runs). Use this to bring back several members of an ensemble that
    /// lost its quorum, then [`wait_serving`](Self::wait_serving) on each:
    /// [`restart`](Self::restart) would wait for a quorum that cannot form
    /// until the others are back.
    ///
    /// # Errors
    ///
    /// If the JVM cannot be spawned.
    pub fn start_member(&self, i: usize) -> Result<()> {
        self.member(i).spawn(&self.install, &self.options)
    }

    /// Stops member `i` if running, starts it again (same ports, same data)
    /// and waits until it serves, i.e. has rejoined a quorum.
    ///
    /// # Errors
    ///
    /// As for [`TestingServer::restart`](crate::TestingServer::restart).
    pub fn restart(&self, i: usize) -> Result<()> {
        let member = self.member(i);
        member.stop()?;
        let mut attempt = 1;
        loop {
            member.spawn(&self.install, &self.options)?;
            match wait_ready(member, self.secure_ports[i], self.options.startup_timeout) {
                Ok(()) => return Ok(()),
                Err(_) if attempt < PORT_ATTEMPTS && member.port_conflict() => {
                    attempt += 1;
                    thread::sleep(Duration::from_millis(500));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Freezes member `i` with SIGSTOP (a silent partition: peers and
    /// clients time out instead of getting errors); returns once every
    /// thread of its JVM has stopped, as [`TestingServer::pause`](crate::TestingServer::pause).
    ///
    /// # Errors
    ///
    /// [`Error::NotRunning`] if stopped; [`Error::Io`] if a thread still
    /// runs 10 s after the signal.
    pub fn pause(&self, i: usize) -> Result<()> {
        self.member(i).pause()
    }

    /// Thaws member `i` (SIGCONT).
    ///
    /// # Errors
    ///
    /// [`Error::NotRunning`] if stopped.
    pub fn resume(&self, i: usize) -> Result<()> {
        self.member(i).resume()
    }

    /// Waits until member `i` serves (reports leader, follower, observer or
    /// standalone, and with TLS its TLS port listens), at most `timeout`.
    ///
    /// # Errors
    ///
    /// As for [`TestingServer::wait_serving`](crate::TestingServer::wait_serving).
    pub fn wait_serving(&self, i: usize, timeout: Duration) -> Result<()> {
        wait_ready(self.member(i), self.secure_ports[i], timeout)
    }

    /// The member currently reporting `Mode: leader` to `srvr`, if any.
    /// Stopped and paused members are not asked.
    pub fn leader(&self) -> Option<usize> {
        (0..self.members.len()).find(|&i| self.member_mode(i) == Some(Mode::Leader))
    }

    /// Polls [`leader`](Self::leader) until a member leads, at most
    /// `timeout`.
    ///
    /// # Errors
    ///
    /// [`Error::NoLeader`] listing each member's state.
    pub fn wait_for_leader(&self, timeout: Duration) -> Result<usize> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(leader) = self.leader() {
                return Ok(leader);
            }
            if Instant::now() >= deadline {
                let members = self.members.iter().map(|m| m.describe() + "\n").collect();
                return Err(Error::NoLeader { timeout, members });
            }
            thread::sleep(
                deadline
                    .saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(50)),
            );
        }
    }
}

/// Spawns every member, then waits for all of them with one shared deadline
/// (members need each other to serve, so they must all be started first).
fn start_all(
    members: &[Instance],
    secure_ports: &[Option<u16>],
    install: &Installation,
    options: &ServerOptions,
) -> Result<()> {
    for member in members {
        member.spawn(install, options)?;
    }
    let deadline = Instant::now() + options.startup_timeout;
    for (member, secure_port) in members.iter().zip(secure_ports) {
        wait_ready(
            member,
            *secure_port,
            deadline.saturating_duration_since(Instant::now()),
        )?;
    }
    Ok(())
}

/// The members, their TLS ports and their other ports.
type CreatedMembers = (Vec<Instance>, Vec<Option<u16>>, Vec<PeerPorts>);

/// Picks ports and writes every member's folder under `root`; returns the
/// members, their TLS ports and their other ports.
fn create_members(n: usize, options: &ServerOptions, root: &Path) -> Result<CreatedMembers> {
    let per_member = if options.tls.is_some() { 4 } else { 3 };
    let ports = free_ports(per_member * n).map_err(|e| Error::io("finding free ports", e))?;
    let peers: Vec<PeerPorts> = ports
        .chunks(per_member)
        .map(|p| PeerPorts {
            client: p[0],
            quorum: p[1],
            election: p[2],
        })
        .collect();
    let secure_ports: Vec<Option<u16>> = ports
        .chunks(per_member)
        .map(|p| p.get(3).copied())
        .collect();
    let lines: Vec<String> = peers
        .iter()
        .enumerate()
        .map(|(i, p)| config::dynamic_line(i + 1, p))
        .collect();
    let members = peers
        .iter()
        .zip(&secure_ports)
        .enumerate()
        .map(|(i, (peer, secure_port))| {
            create_member(root, i, peer, *secure_port, &peers, options, &lines)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((members, secure_ports, peers))
}

/// Writes member `i`'s folder under `root`: `zoo.cfg` (naming `peers` for a static
/// ensemble) and, for a reconfigurable one, the dynamic file with `dynamic_lines`.
pub(crate) fn create_member(
    root: &Path,
    i: usize,
    peer: &PeerPorts,
    secure_port: Option<u16>,
    peers: &[PeerPorts],
    options: &ServerOptions,
    dynamic_lines: &[String],
) -> Result<Instance> {
    let myid = i + 1;
    let dir = root.join(format!("member-{myid}"));
    let cfg = config::zoo_cfg(
        options,
        &dir.join(config::DATA_DIR),
        peer.client,
        secure_port,
        peers,
    );
    let instance = Instance::create(
        format!(
            "ensemble member {i} (myid {myid}, 127.0.0.1:{})",
            peer.client
        ),
        dir,
        peer.client,
        config::QUORUM_MAIN,
        &cfg,
        Some(myid),
    )?;
    if options.reconfig {
        let path = instance.dir().join(config::DYNAMIC_CFG);
        fs::write(&path, config::dynamic_cfg(dynamic_lines))
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
    }
    Ok(instance)
}
