//! Host names resolved at every connection attempt (ZOOKEEPER-2184): every address a name
//! has now is a candidate, tried in a shuffled order, so a member that moved to a new address
//! under the same name (a Kubernetes pod) is found at the next attempt, and clients of a
//! name with several addresses spread over them. Resolution is I/O, so it happens here in
//! the driver; the session core only picks hosts by index and draws the shuffle.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use crate::__private::Rng;
use crate::transport::{Connector, Transport};

/// Resolves `name:port` and connects to the first of its addresses that answers, in an
/// order shuffled by `shuffle` (from the core's `Event::Connect`), all within `timeout`.
/// The error says why each address failed, or that the name did not resolve.
pub(crate) async fn connect_host(
    connector: &Connector,
    name: &str,
    port: u16,
    timeout: Duration,
    shuffle: u64,
) -> io::Result<Transport> {
    let attempt = async {
        if let Some(dialer) = &connector.dialer {
            return dialer.dial(name, port).await.map(Transport::Memory);
        }
        let mut addrs = resolve(name, port).await?;
        shuffle_addrs(&mut addrs, shuffle);
        let literal = name.parse::<IpAddr>().is_ok();
        let mut failures = Vec::new();
        let mut kind = io::ErrorKind::ConnectionRefused;
        // The last TLS refusal, kept whole so that its kind can still be found.
        #[allow(unused_mut)] // set only with the `tls` feature
        let mut cause: Option<io::Error> = None;
        for addr in addrs {
            match connector.connect_addr(addr, name).await {
                Ok(transport) => return Ok(transport),
                Err(e) => {
                    kind = e.kind();
                    failures.push(if literal {
                        e.to_string()
                    } else {
                        format!("{addr}: {e}")
                    });
                    #[cfg(feature = "tls")]
                    if crate::tls::TlsError::find(&e).is_some() {
                        cause = Some(e);
                    }
                }
            }
        }
        match cause {
            // One address given by number: its own error says it all.
            Some(cause) if literal && failures.len() == 1 => Err(cause),
            cause => Err(io::Error::new(
                kind,
                AddressFailures {
                    text: failures.join(", "),
                    cause,
                },
            )),
        }
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(result) => result,
        Err(_) => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "no connection to {name}:{port} within {} ms",
                timeout.as_millis()
            ),
        )),
    }
}

/// Why each address of a host failed, in words, with the last TLS refusal as the source.
#[derive(Debug)]
struct AddressFailures {
    text: String,
    cause: Option<io::Error>,
}

impl std::fmt::Display for AddressFailures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for AddressFailures {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Every address `name` has now (a literal IP address is its own).
pub(crate) async fn resolve(name: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    if let Ok(ip) = name.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let failed = |why: String| io::Error::new(io::ErrorKind::NotFound, why);
    let mut addrs: Vec<SocketAddr> = tokio::net::lookup_host((name, port))
        .await
        .map_err(|e| failed(format!("failed to resolve {name}: {e}")))?
        .collect();
    // Some resolvers answer an address twice (once per socket type).
    let mut seen = std::collections::HashSet::new();
    addrs.retain(|a| seen.insert(*a));
    if addrs.is_empty() {
        return Err(failed(format!("failed to resolve {name}: no address")));
    }
    Ok(addrs)
}

/// Fisher-Yates with the core's draw: repeatable for a given `shuffle`.
fn shuffle_addrs(addrs: &mut [SocketAddr], shuffle: u64) {
    let mut rng = Rng::new(shuffle);
    for i in (1..addrs.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        addrs.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn literal_addresses_and_unknown_names() {
        let addrs = resolve("127.0.0.1", 2181).await.unwrap();
        assert_eq!(addrs, vec!["127.0.0.1:2181".parse().unwrap()]);
        let e = resolve("nonexistent.invalid", 2181).await.unwrap_err();
        assert!(
            e.to_string()
                .starts_with("failed to resolve nonexistent.invalid: "),
            "{e}"
        );
    }

    #[test]
    fn the_shuffle_is_a_repeatable_permutation() {
        let all: Vec<SocketAddr> = (1..=8)
            .map(|i| format!("10.0.0.{i}:2181").parse().unwrap())
            .collect();
        let mut a = all.clone();
        let mut b = all.clone();
        shuffle_addrs(&mut a, 42);
        shuffle_addrs(&mut b, 42);
        assert_eq!(a, b);
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, all);
        let orders: std::collections::HashSet<Vec<SocketAddr>> = (0..20)
            .map(|seed| {
                let mut c = all.clone();
                shuffle_addrs(&mut c, seed);
                c
            })
            .collect();
        assert!(orders.len() > 10, "the shuffle hardly shuffles");
    }
}
