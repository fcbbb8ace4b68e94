//! Picking free TCP ports on 127.0.0.1.

use std::collections::HashSet;
use std::io;
use std::net::{Ipv4Addr, TcpListener};
use std::sync::{Mutex, OnceLock};

/// Ports already handed out by this process.
///
/// The OS may return the same ephemeral port to two `bind(0)` calls as soon
/// as the first listener is closed; two servers started concurrently (tests
/// run in parallel threads) would then race for it. Remembering what we gave
/// out avoids that within one process. Other processes can still grab a port
/// between our probe and the server's bind: that race is handled by
/// retrying the start when the server logs "Address already in use".
fn handed_out() -> &'static Mutex<HashSet<u16>> {
    static PORTS: OnceLock<Mutex<HashSet<u16>>> = OnceLock::new();
    PORTS.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Returns a TCP port on 127.0.0.1 that is free right now and has not been
/// returned before by this process.
///
/// Useful for "nothing listens here" tests too.
///
/// ```
/// let port = zkrs_testkit::free_port()?;
/// assert_ne!(port, 0);
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// # Errors
///
/// When binding a socket fails, or no new port turns up after many tries.
pub fn free_port() -> io::Result<u16> {
    Ok(free_ports(1)?[0])
}

/// Returns `n` distinct free ports (see [`free_port`]).
pub(crate) fn free_ports(n: usize) -> io::Result<Vec<u16>> {
    // Keep every probe listener open until we have all `n` ports, so that the
    // OS cannot give us the same port twice within this call.
    let mut listeners = Vec::with_capacity(n);
    let mut ports = Vec::with_capacity(n);
    let mut attempts = 0;
    while ports.len() < n {
        attempts += 1;
        if attempts > 100 + 10 * n {
            return Err(io::Error::new(
                io::ErrorKind::AddrNotAvailable,
                "could not find enough unused TCP ports on 127.0.0.1",
            ));
        }
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let port = listener.local_addr()?.port();
        // A port we handed out earlier stays reserved (its server may be
        // stopped for a restart); hold the listener so the next bind differs.
        let fresh = handed_out()
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(port);
        if fresh {
            ports.push(port);
        }
        listeners.push(listener);
    }
    Ok(ports)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_never_handed_out_twice() {
        let mut seen = HashSet::new();
        for _ in 0..20 {
            for port in free_ports(3).unwrap() {
                assert!(seen.insert(port), "port {port} handed out twice");
            }
        }
    }

    #[test]
    fn ports_are_bindable() {
        let port = free_port().unwrap();
        TcpListener::bind((Ipv4Addr::LOCALHOST, port)).unwrap();
    }
}
