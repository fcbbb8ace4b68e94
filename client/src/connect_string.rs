//! Connect strings: `host1:2181,host2:2181,[::1]:2182/chroot`.

use crate::error::ErrorExt;
use crate::error::{Error, Result};
use crate::path::Chroot;

/// The default ZooKeeper client port.
pub const DEFAULT_PORT: u16 = 2181;

/// A parsed connect string: hosts in the order given, and the chroot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectString {
    /// `(host, port)` pairs; hosts are names or IP addresses (IPv6 without brackets).
    pub hosts: Vec<(String, u16)>,
    /// Everything from the first `/`; `/` alone is no chroot.
    pub chroot: Chroot,
}

impl ConnectString {
    /// Parses a connect string.
    ///
    /// ```
    /// use zkrs_client::ConnectString;
    /// let cs = ConnectString::parse("a:2181,b,[::1]:2182/app").unwrap();
    /// assert_eq!(cs.hosts, vec![("a".into(), 2181), ("b".into(), 2181), ("::1".into(), 2182)]);
    /// assert_eq!(cs.chroot.as_str(), Some("/app"));
    /// ```
    pub fn parse(s: &str) -> Result<ConnectString> {
        let (host_part, chroot) = match s.find('/') {
            Some(i) => (
                &s[..i],
                Chroot::new(&s[i..]).map_err(|e| {
                    Error::invalid(format!("bad chroot in connect string {s:?}: {e}"))
                })?,
            ),
            None => (s, Chroot::none()),
        };
        let mut hosts = Vec::new();
        for item in host_part
            .split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
        {
            hosts.push(parse_host(item).map_err(|why| {
                Error::invalid(format!("bad host {item:?} in connect string {s:?}: {why}"))
            })?);
        }
        if hosts.is_empty() {
            return Err(Error::invalid(format!("no host in connect string {s:?}")));
        }
        Ok(ConnectString { hosts, chroot })
    }
}

pub(crate) fn parse_host(item: &str) -> std::result::Result<(String, u16), String> {
    let (host, port) = if let Some(rest) = item.strip_prefix('[') {
        let end = rest.find(']').ok_or("missing ']'")?;
        let host = &rest[..end];
        match &rest[end + 1..] {
            "" => (host, None),
            p => (
                host,
                Some(p.strip_prefix(':').ok_or("expected ':' after ']'")?),
            ),
        }
    } else {
        match item.rsplit_once(':') {
            Some((h, p)) if !h.contains(':') => (h, Some(p)),
            Some(_) => return Err("IPv6 addresses need brackets: [::1]:2181".into()),
            None => (item, None),
        }
    };
    if host.is_empty() {
        return Err("empty host name".into());
    }
    let port = match port {
        None => DEFAULT_PORT,
        Some(p) => p.parse::<u16>().map_err(|_| format!("bad port {p:?}"))?,
    };
    Ok((host.to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_hosts_ports_and_chroot() {
        let cs = ConnectString::parse("127.0.0.1:2181,localhost:2182").unwrap();
        assert_eq!(cs.hosts.len(), 2);
        assert_eq!(cs.chroot, Chroot::none());
        let cs = ConnectString::parse("h/").unwrap();
        assert_eq!(cs.chroot, Chroot::none());
        assert_eq!(cs.hosts, vec![("h".to_string(), 2181)]);
    }

    #[test]
    fn refuses_nonsense() {
        for bad in [
            "",
            "/app",
            "h:notaport",
            "h:70000",
            "::1:2181",
            "[::1",
            "h/app/",
            "h/a//b",
        ] {
            let err = ConnectString::parse(bad).unwrap_err();
            assert!(err.is_invalid_input(), "{bad}: {err}");
        }
    }
}
