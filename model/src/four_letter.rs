//! ZooKeeper's four-letter words: a connection whose first four bytes spell one gets a plain
//! text answer in ZooKeeper 3.8's format (`server/command/*Command.java`) and is closed. The
//! model answers the words readiness probes and monitors send (`ruok`, `srvr`, `stat`, `mntr`,
//! `conf`, `isro`); the other words ZooKeeper knows get its answer for a word left out of
//! `4lw.commands.whitelist`. Figures the model does not have (latencies, files, the JVM) are
//! left out or zero, never made up.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::connection_id::ConnectionId;
use crate::server::{Phase, Server};
use crate::version::ZooKeeperVersion;

/// `Version.getFullVersion()` as the model reports it: the release it answers as, built by
/// zkrs-model (a version parser reads the release, the rest says it is not a JVM).
fn full_version(zookeeper: ZooKeeperVersion) -> String {
    format!(
        "{zookeeper}-zkrs-model-{}, built on 1970-01-01 00:00 UTC",
        env!("CARGO_PKG_VERSION")
    )
}

/// The words ZooKeeper 3.8 knows that the model does not answer (`FourLetterCommands`).
const NOT_ANSWERED: [&[u8; 4]; 12] = [
    b"cons", b"crst", b"dirs", b"dump", b"envi", b"gtmk", b"stmk", b"srst", b"wchc", b"wchp",
    b"wchs", b"hash",
];

/// A four-letter word at the start of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FourLetterWord {
    /// `imok`.
    Ruok,
    /// The server's figures.
    Srvr,
    /// `srvr` with the list of clients.
    Stat,
    /// The figures as `key<TAB>value` lines.
    Mntr,
    /// The settings as `key=value` lines.
    Conf,
    /// `rw` (the model is never read-only).
    Isro,
    /// A word ZooKeeper knows that the model leaves out of its whitelist.
    NotAnswered([u8; 4]),
}

impl FourLetterWord {
    /// The word `bytes` spell, if ZooKeeper knows it.
    fn parse(bytes: &[u8]) -> Option<Self> {
        let word: [u8; 4] = bytes.try_into().ok()?;
        Some(match &word {
            b"ruok" => FourLetterWord::Ruok,
            b"srvr" => FourLetterWord::Srvr,
            b"stat" => FourLetterWord::Stat,
            b"mntr" => FourLetterWord::Mntr,
            b"conf" => FourLetterWord::Conf,
            b"isro" => FourLetterWord::Isro,
            other if NOT_ANSWERED.contains(&other) => FourLetterWord::NotAnswered(word),
            _ => return None,
        })
    }
}

impl Server {
    /// If the first four bytes of `conn` (nothing read from it yet) spell a word, answers it
    /// and returns true; false while fewer than four bytes are in, or for anything else.
    pub(crate) fn answered_word(&mut self, conn: ConnectionId) -> bool {
        let word = self
            .connections
            .get(&conn)
            .and_then(|c| c.input.get(..4))
            .and_then(FourLetterWord::parse);
        match word {
            Some(word) => {
                self.answer_word(conn, word);
                true
            }
            None => false,
        }
    }

    /// Answers `word` on `conn` and closes it (its last bytes are still sent). The word counts
    /// as a packet received, the answer as one sent (once sent), as ZooKeeper counts them.
    fn answer_word(&mut self, conn: ConnectionId, word: FourLetterWord) {
        self.packets_received += 1;
        if let Some(c) = self.connections.get_mut(&conn) {
            c.received += 1;
            c.word = true;
        }
        let answer = match word {
            FourLetterWord::Ruok => "imok".to_owned(),
            FourLetterWord::Isro => "rw".to_owned(),
            FourLetterWord::Srvr => self.stat_answer(conn, false),
            FourLetterWord::Stat => self.stat_answer(conn, true),
            FourLetterWord::Mntr => self.mntr_answer(),
            FourLetterWord::Conf => self.conf_answer(),
            FourLetterWord::NotAnswered(word) => format!(
                "{} is not executed because it is not in the whitelist.\n",
                String::from_utf8_lossy(&word)
            ),
        };
        if let Some(c) = self.connections.get_mut(&conn) {
            c.output.extend_from_slice(answer.as_bytes());
        }
        self.close_connection(conn);
    }

    /// `srvr`'s `Mode:` and `mntr`'s `zk_server_state`.
    fn mode(&self) -> &'static str {
        match self.membership.as_ref().map(|m| m.role.leading) {
            None => "standalone",
            Some(Some(_)) => "leader",
            Some(None) => "follower",
        }
    }

    /// `DataTree.getNodeCount()`: ZooKeeper keeps the root under two keys, `""` and `/`.
    fn node_count(&self) -> usize {
        self.tree.len() + 1
    }

    /// `srvr` (`StatCommand`), and `stat` with the list of clients.
    fn stat_answer(&self, asking: ConnectionId, clients: bool) -> String {
        let mut out = format!(
            "Zookeeper version: {}\n",
            full_version(self.config.zookeeper)
        );
        if clients {
            out.push_str("Clients:\n");
            for (id, c) in &self.connections {
                // Interest ops: the asking connection is done reading, the others read.
                let ops = if *id == asking { 0 } else { 1 };
                let peer = match c.peer {
                    Some(addr) => addr.to_string(),
                    None => c.auth.first().map(|a| a.id.clone()).unwrap_or_default(),
                };
                let _ = writeln!(
                    out,
                    " /{peer}[{ops}](queued=0,recved={},sent={})",
                    c.received, c.sent
                );
            }
            out.push('\n');
        }
        // The model answers at once: no latency to report.
        out.push_str("Latency min/avg/max: 0/0.0/0\n");
        let _ = writeln!(out, "Received: {}", self.packets_received);
        let _ = writeln!(out, "Sent: {}", self.packets_sent);
        let _ = writeln!(out, "Connections: {}", self.connections.len());
        out.push_str("Outstanding: 0\n");
        let _ = writeln!(out, "Zxid: 0x{:x}", self.tree.last_zxid);
        let _ = writeln!(out, "Mode: {}", self.mode());
        let _ = writeln!(out, "Node count: {}", self.node_count());
        if self.mode() == "leader" {
            // BufferStats with no proposal recorded.
            out.push_str("Proposal sizes last/min/max: -1/-1/-1\n");
        }
        out
    }

    /// `mntr` (`MonitorCommand`): the figures the model has, in the order a 3.8 server
    /// starts its list with; the JVM's, the files' and the latency histograms are left out.
    fn mntr_answer(&self) -> String {
        let (data_watches, child_watches) = self.watch_count();
        let sessions = match self.membership {
            // A member's sessions are the leader's; count those attached here.
            Some(_) => self
                .connections
                .values()
                .filter(|c| c.phase == Phase::Open)
                .map(|c| c.session)
                .collect::<BTreeSet<i64>>()
                .len(),
            None => self.sessions.sessions.len(),
        };
        let mut figures: Vec<(&str, String)> = vec![
            ("zk_version", full_version(self.config.zookeeper)),
            ("zk_server_state", self.mode().to_owned()),
            (
                "zk_ephemerals_count",
                self.tree.ephemeral_count().to_string(),
            ),
            (
                "zk_num_alive_connections",
                self.connections.len().to_string(),
            ),
            ("zk_avg_latency", "0.0".to_owned()),
            ("zk_outstanding_requests", "0".to_owned()),
            ("zk_znode_count", self.node_count().to_string()),
            ("zk_global_sessions", sessions.to_string()),
            ("zk_packets_sent", self.packets_sent.to_string()),
            ("zk_packets_received", self.packets_received.to_string()),
            ("zk_watch_count", (data_watches + child_watches).to_string()),
            ("zk_min_latency", "0".to_owned()),
            (
                "zk_approximate_data_size",
                self.tree.approximate_data_size().to_string(),
            ),
            ("zk_local_sessions", "0".to_owned()),
            ("zk_uptime", self.now.as_millis().to_string()),
            ("zk_max_latency", "0".to_owned()),
        ];
        if let Some((learners, synced)) = self.membership.as_ref().and_then(|m| m.role.leading) {
            figures.extend([
                ("zk_learners", learners.to_string()),
                ("zk_synced_followers", synced.to_string()),
                ("zk_synced_non_voting_followers", "0".to_owned()),
                ("zk_synced_observers", "0".to_owned()),
                ("zk_pending_syncs", "0".to_owned()),
            ]);
        }
        let mut out = String::new();
        for (key, value) in figures {
            let _ = writeln!(out, "{key}\t{value}");
        }
        out
    }

    /// `conf` (`ZooKeeperServer.dumpConf`), without the data and log folders (the model has
    /// no files).
    fn conf_answer(&self) -> String {
        let server_id = self.membership.as_ref().map_or(0, |m| m.role.id);
        format!(
            "clientPort={}\nsecureClientPort=-1\ntickTime={}\nmaxClientCnxns={}\n\
             minSessionTimeout={}\nmaxSessionTimeout={}\nclientPortListenBacklog=-1\n\
             serverId={server_id}\n",
            self.client_port,
            self.config.tick_time.as_millis(),
            self.config.max_client_cnxns,
            self.config.min_session_timeout_ms(),
            self.config.max_session_timeout_ms(),
        )
    }
}
