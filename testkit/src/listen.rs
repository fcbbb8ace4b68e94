//! Which process listens on a TCP port, from the kernel's socket tables: for waiting until
//! a server's second port (the TLS `secureClientPort`) listens
//! ([`Instance::wait_listening`](crate::instance::Instance::wait_listening)).
//!
//! `srvr` on the plain port says the server serves, but a standalone server
//! binds its TLS port only after that (`ZooKeeperServerMain` starts the plain
//! connection factory, which starts the server, then the secure one). A TCP
//! probe of the TLS port would make ZooKeeper log a failed handshake and
//! count an authentication failure, so on Linux we look at the sockets in
//! `/proc` instead: the port is ready when the server's own JVM has a
//! listening socket on it (not just anyone: a process that took the port
//! would otherwise pass for the server). Elsewhere we fall back to a TCP
//! connection.
//!
//! [`KerberosRealm`](crate::KerberosRealm) uses the same tables to check that
//! its KDC listens, and listens alone, on its port.

use std::fs;

/// TCP state "listen" in `/proc/net/tcp`.
const TCP_LISTEN: &str = "0A";

/// How many TCP sockets listen on `port` (any address), from
/// `/proc/net/tcp{,6}`; `None` when `/proc` cannot tell. More than one means
/// processes share the port with `SO_REUSEPORT` (as MIT's `krb5kdc` does).
pub(crate) fn tcp_listeners(port: u16) -> Option<usize> {
    let mut tables = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|t| fs::read_to_string(t).ok())
        .peekable();
    tables.peek()?;
    Some(
        tables
            .map(|table| listening_inodes(&table, port).len())
            .sum(),
    )
}

/// Whether process `pid` has a TCP socket listening on `port`, from
/// `/proc/net/tcp{,6}` and `/proc/<pid>/fd`; `None` when `/proc` cannot tell.
pub(crate) fn listens(pid: u32, port: u16) -> Option<bool> {
    let mut tables = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|t| fs::read_to_string(t).ok())
        .peekable();
    tables.peek()?;
    let inodes: Vec<String> = tables
        .flat_map(|table| listening_inodes(&table, port))
        .collect();
    if inodes.is_empty() {
        return Some(false);
    }
    let fds = fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    Some(fds.flatten().any(|fd| {
        fs::read_link(fd.path()).is_ok_and(|target| {
            let target = target.to_string_lossy();
            inodes.iter().any(|i| target == format!("socket:[{i}]"))
        })
    }))
}

/// The inodes of the listening sockets on `port` in one `/proc/net/tcp`
/// table (lines: `sl local_address rem_address st ... uid timeout inode`).
fn listening_inodes(table: &str, port: u16) -> Vec<String> {
    let port = format!(":{port:04X}");
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (local, state, inode) = (fields.get(1)?, fields.get(3)?, fields.get(9)?);
            (local.ends_with(&port) && *state == TCP_LISTEN).then(|| inode.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, TcpListener};

    #[test]
    fn parses_proc_net_tcp() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000        0 4343 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4444 1 0000000000000000 100 0 0 10 0
";
        assert_eq!(listening_inodes(table, 0x1F90), ["4242"]);
        assert_eq!(listening_inodes(table, 0x1F91), ["4444"]);
        assert!(listening_inodes(table, 80).is_empty());
    }

    #[test]
    fn sees_our_own_listener_only() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let me = std::process::id();
        if listens(me, port).is_none() {
            return; // no /proc here
        }
        assert_eq!(listens(me, port), Some(true));
        // pid 1 does not own it (or its fds are not ours to read).
        assert_ne!(listens(1, port), Some(true));
        assert_eq!(tcp_listeners(port), Some(1));
        drop(listener);
        assert_eq!(listens(me, port), Some(false));
        assert_eq!(tcp_listeners(port), Some(0));
    }
}
