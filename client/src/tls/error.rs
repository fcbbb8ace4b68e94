//! [`TlsError`]: a failed TLS handshake, with who refused what ([`TlsErrorKind`]) and
//! rustls's reason as its source.

use std::fmt;
use std::io;
use std::sync::Arc;

use rustls::{AlertDescription, CertificateError};

/// A TLS handshake that failed: with which host, what kind of refusal
/// ([`TlsError::kind`]), and rustls's reason as its [`source`](std::error::Error::source)
/// (`invalid peer certificate: Revoked`, `received fatal alert: CertificateRequired`, ...).
///
/// A failed handshake is a failed connection attempt: the client goes on to the next host
/// and keeps trying, as after any failed attempt, whatever the kind. A certificate refused
/// on one host may be that host's mistake (another may present a good one), and a refusal
/// of the client's own certificate may end when its files are rotated (they are read again
/// before each connection when they changed) or when the servers' trust is. The Java client
/// and `zookeeper-client` also retry. [`ClientBuilder::connect`](crate::ClientBuilder::connect)
/// gives up at its timeout; its error ([`ErrorKind::ConnectionLoss`](crate::ErrorKind))
/// then has the last TLS failure as its source: find it with [`TlsError::find`].
///
/// ```no_run
/// # async fn f() {
/// use zkrs_client::{ClientBuilder, TlsError, TlsErrorKind, TlsOptions};
///
/// let tls = TlsOptions::new().ca_file("ca.pem").crl_file("ca-crl.pem");
/// match ClientBuilder::new("zk1:2281").tls(tls).connect().await {
///     Ok(_client) => {}
///     Err(e) => match TlsError::find(&e).map(TlsError::kind) {
///         Some(TlsErrorKind::ServerCertificateRevoked) => eprintln!("a revoked server: {e}"),
///         Some(TlsErrorKind::ClientCertificateRefused) => eprintln!("renew our certificate: {e}"),
///         _ => eprintln!("{e}"),
///     },
/// }
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct TlsError {
    host: String,
    kind: TlsErrorKind,
    error: rustls::Error,
    /// The files changed but could not be used, so the last good ones were: why.
    reload_failure: Option<Arc<str>>,
}

/// Who refused what in a failed TLS handshake ([`TlsError::kind`]).
///
/// More kinds may come (the enum is `#[non_exhaustive]`): match the ones you handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TlsErrorKind {
    /// We refused the server's certificate: a CRL given with
    /// [`TlsOptions::crl_file`](crate::TlsOptions::crl_file) lists it (or a CA of its chain).
    ServerCertificateRevoked,
    /// We refused the server's certificate: it has expired, or is not valid yet.
    ServerCertificateExpired,
    /// We refused the server's certificate: no CA we trust signed it.
    ServerCertificateUnknownIssuer,
    /// We refused the server's certificate: it names neither the host of the connect string
    /// nor the pinned [`TlsOptions::server_name`](crate::TlsOptions::server_name).
    ServerCertificateWrongName,
    /// We refused the server's certificate for another reason: a bad encoding or signature,
    /// no certificate at all, or a revocation status the CRLs given cannot tell (a CRL is
    /// needed from the issuer of each certificate of the chain when CRLs are given).
    ServerCertificateInvalid,
    /// The server refused our certificate, or our lack of one: it sent an alert about it
    /// (`bad_certificate`, `certificate_required`, `unknown_ca`, `certificate_revoked`,
    /// `certificate_expired`, `certificate_unknown`, ...).
    ClientCertificateRefused,
    /// Any other handshake failure: no protocol version or cipher suite in common, a peer
    /// that does not speak TLS, a malformed message.
    Handshake,
}

impl TlsError {
    pub(crate) fn new(
        host: &str,
        error: rustls::Error,
        reload_failure: Option<Arc<str>>,
    ) -> TlsError {
        TlsError {
            host: host.to_string(),
            kind: kind_of(&error),
            error,
            reload_failure,
        }
    }

    /// As an `io::Error` (what a connection attempt fails with), found again by
    /// [`TlsError::find`].
    pub(crate) fn into_io(self) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, self)
    }

    /// Who refused what.
    pub fn kind(&self) -> TlsErrorKind {
        self.kind
    }

    /// The host as the connect string names it (without the port).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The TLS failure behind `error`, if one is among its causes: the error of a
    /// [`ClientBuilder::connect`](crate::ClientBuilder::connect) that timed out, or any
    /// error whose [`source`](std::error::Error::source) chain holds one (an `io::Error`'s
    /// wrapped error is looked at too).
    pub fn find<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a TlsError> {
        let mut next = Some(error);
        while let Some(error) = next {
            if let Some(tls) = error.downcast_ref::<TlsError>() {
                return Some(tls);
            }
            // `io::Error::source` skips the error it wraps: look at it first.
            next = match error
                .downcast_ref::<io::Error>()
                .and_then(io::Error::get_ref)
            {
                Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
                None => error.source(),
            };
        }
        None
    }
}

/// The kind of a rustls handshake error.
fn kind_of(error: &rustls::Error) -> TlsErrorKind {
    use CertificateError as C;
    match error {
        rustls::Error::InvalidCertificate(problem) => match problem {
            C::Revoked => TlsErrorKind::ServerCertificateRevoked,
            C::Expired
            | C::ExpiredContext { .. }
            | C::NotValidYet
            | C::NotValidYetContext { .. } => TlsErrorKind::ServerCertificateExpired,
            C::UnknownIssuer => TlsErrorKind::ServerCertificateUnknownIssuer,
            C::NotValidForName | C::NotValidForNameContext { .. } => {
                TlsErrorKind::ServerCertificateWrongName
            }
            _ => TlsErrorKind::ServerCertificateInvalid,
        },
        rustls::Error::NoCertificatesPresented => TlsErrorKind::ServerCertificateInvalid,
        // What a server says when it refuses our certificate, or our lack of one.
        rustls::Error::AlertReceived(
            AlertDescription::BadCertificate
            | AlertDescription::UnsupportedCertificate
            | AlertDescription::CertificateRevoked
            | AlertDescription::CertificateExpired
            | AlertDescription::CertificateUnknown
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateRequired,
        ) => TlsErrorKind::ClientCertificateRefused,
        _ => TlsErrorKind::Handshake,
    }
}

impl fmt::Display for TlsError {
    /// `TLS with HOST failed: REASON`, and when the files had changed but could not be
    /// read again, that the last good ones were used and why.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TLS with {} failed: {}", self.host, self.error)?;
        if let Some(why) = &self.reload_failure {
            write!(
                f,
                " (with the last good TLS files: they changed but cannot be used: {why})"
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for TlsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_has_its_kind() {
        use CertificateError as C;
        let cases = [
            (
                rustls::Error::InvalidCertificate(C::Revoked),
                TlsErrorKind::ServerCertificateRevoked,
            ),
            (
                rustls::Error::InvalidCertificate(C::Expired),
                TlsErrorKind::ServerCertificateExpired,
            ),
            (
                rustls::Error::InvalidCertificate(C::NotValidYet),
                TlsErrorKind::ServerCertificateExpired,
            ),
            (
                rustls::Error::InvalidCertificate(C::UnknownIssuer),
                TlsErrorKind::ServerCertificateUnknownIssuer,
            ),
            (
                rustls::Error::InvalidCertificate(C::NotValidForName),
                TlsErrorKind::ServerCertificateWrongName,
            ),
            (
                rustls::Error::InvalidCertificate(C::UnknownRevocationStatus),
                TlsErrorKind::ServerCertificateInvalid,
            ),
            (
                rustls::Error::AlertReceived(AlertDescription::CertificateRequired),
                TlsErrorKind::ClientCertificateRefused,
            ),
            (
                rustls::Error::AlertReceived(AlertDescription::BadCertificate),
                TlsErrorKind::ClientCertificateRefused,
            ),
            (
                rustls::Error::AlertReceived(AlertDescription::HandshakeFailure),
                TlsErrorKind::Handshake,
            ),
            (rustls::Error::DecryptError, TlsErrorKind::Handshake),
        ];
        for (error, kind) in cases {
            assert_eq!(
                TlsError::new("zk1", error.clone(), None).kind(),
                kind,
                "{error:?}"
            );
        }
    }

    #[test]
    fn find_looks_through_io_errors_and_sources() {
        let tls = TlsError::new(
            "zk1",
            rustls::Error::InvalidCertificate(CertificateError::Revoked),
            None,
        );
        // As a connection attempt fails, then wrapped again as connect()'s error.
        let io = tls.into_io();
        assert_eq!(TlsError::find(&io).map(TlsError::host), Some("zk1"));
        let outer =
            crate::Error::new(crate::ErrorKind::ConnectionLoss, "no server").with_source(io);
        let found = TlsError::find(&outer).expect("found through the source");
        assert_eq!(found.kind(), TlsErrorKind::ServerCertificateRevoked);
        let plain = io::Error::other("connection refused");
        assert!(TlsError::find(&plain).is_none());
        let reloaded = TlsError::new("zk1", rustls::Error::DecryptError, Some("bad key".into()));
        assert!(
            reloaded.to_string().contains("cannot be used: bad key"),
            "{reloaded}"
        );
    }
}
