//! [`TlsOptions`]: what a client's TLS connections trust and present.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use rustls::pki_types::ServerName;
use rustls::ClientConfig;

use super::files::{ReloadingConfig, TlsFiles};
use super::handshake::TlsConnector;
use crate::error::{Error, ErrorExt, Result};

/// What a TLS connection trusts and presents, for
/// [`ClientBuilder::tls`](crate::ClientBuilder::tls). Applies to every host of the connect
/// string and to the read-write probe of read-only mode.
///
/// Trust comes from a CA file ([`TlsOptions::ca_file`]), the platform's store
/// ([`TlsOptions::platform_roots`], also the default when no CA file is given), or both.
/// The server's certificate must name the host as written in the connect string (a DNS
/// name, or an IP address in its `subjectAltName`); [`TlsOptions::server_name`] pins one
/// name for every host instead, for example when connecting by IP to certificates that
/// carry only DNS names. [`TlsOptions::crl_file`] adds revocation checks.
///
/// # Rotation
///
/// The files are read when the client starts: a missing or unreadable file fails
/// [`ClientBuilder::connect`](crate::ClientBuilder::connect) (and
/// [`start`](crate::ClientBuilder::start)) at once. Before each later connection they are
/// looked at again, and read again when one changed (its length, modification time, inode
/// or status-change time): a certificate, key, CA or CRL rotated by a certificate manager
/// (cert-manager, Vault's agent) is used from the next connection on, without restarting
/// the client. Replace a certificate and its key together (the usual write-then-rename, or
/// a Kubernetes secret's volume, does). If the changed files cannot be read or do not go
/// together (a file half written, a key that is not the certificate's), the last good
/// configuration stays in use: the client goes on connecting with it, logs why (feature
/// `tracing`), names why in the error of a handshake that then fails, and reads the files
/// again when they change again. The platform's trust store is read once, at the start.
///
/// ```no_run
/// # async fn f() -> zkrs_client::Result<()> {
/// use zkrs_client::{ClientBuilder, TlsOptions};
///
/// let tls = TlsOptions::new()
///     .ca_file("/etc/zookeeper/tls/ca.pem")
///     .client_cert("/etc/zookeeper/tls/client.pem", "/etc/zookeeper/tls/client.key")
///     .server_name("zookeeper.internal");
/// let client = ClientBuilder::new("10.0.0.1:2281,10.0.0.2:2281")
///     .tls(tls)
///     .connect()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone, Default)]
pub struct TlsOptions {
    files: TlsFiles,
    server_name: Option<String>,
    config: Option<Arc<ClientConfig>>,
}

impl TlsOptions {
    /// No CA file, no client certificate, names checked against each host: with nothing
    /// else set, the platform's trust store is used.
    pub fn new() -> TlsOptions {
        TlsOptions::default()
    }

    /// Trusts the CA certificates of a PEM file (repeatable).
    pub fn ca_file(mut self, path: impl Into<PathBuf>) -> TlsOptions {
        self.files.ca_files.push(path.into());
        self
    }

    /// Checks servers' certificates against the certificate revocation lists of a PEM file
    /// (`BEGIN X509 CRL`, version 2, as `openssl ca -gencrl` writes; repeatable): a revoked
    /// server certificate is refused ([`TlsErrorKind::ServerCertificateRevoked`]). With CRLs,
    /// every certificate of a server's chain below the trusted CA must be covered by a CRL
    /// of its issuer, or it is refused as of unknown status
    /// ([`TlsErrorKind::ServerCertificateInvalid`]); a CRL's next-update date is not
    /// enforced (rotate the file instead: it is read again when it changes). CRLs do not
    /// apply with [`TlsOptions::rustls_config`].
    ///
    /// [`TlsErrorKind::ServerCertificateRevoked`]: crate::TlsErrorKind::ServerCertificateRevoked
    /// [`TlsErrorKind::ServerCertificateInvalid`]: crate::TlsErrorKind::ServerCertificateInvalid
    pub fn crl_file(mut self, path: impl Into<PathBuf>) -> TlsOptions {
        self.files.crl_files.push(path.into());
        self
    }

    /// Also trusts the platform's store (on Linux the system bundle, or `SSL_CERT_FILE` /
    /// `SSL_CERT_DIR`).
    pub fn platform_roots(mut self) -> TlsOptions {
        self.files.platform_roots = true;
        self
    }

    /// Presents this certificate chain and key (PEM files) to servers that ask for one
    /// (mutual TLS, `ssl.clientAuth=need`); its subject becomes the session's `x509`
    /// identity.
    pub fn client_cert(
        mut self,
        cert_chain: impl Into<PathBuf>,
        private_key: impl Into<PathBuf>,
    ) -> TlsOptions {
        self.files.client_cert = Some((cert_chain.into(), private_key.into()));
        self
    }

    /// Checks every server's certificate against this name instead of the host written in
    /// the connect string (still verified: this pins the name, it does not skip the check).
    pub fn server_name(mut self, name: impl Into<String>) -> TlsOptions {
        self.server_name = Some(name.into());
        self
    }

    /// Uses a rustls configuration built by the caller (custom verifiers, cipher suites,
    /// session resumption); the CA, CRL, platform and client-certificate settings are then
    /// ignored (and nothing is read again: a configuration that reloads is the caller's to
    /// write, with a custom certificate resolver and verifier), [`TlsOptions::server_name`]
    /// still applies.
    pub fn rustls_config(mut self, config: Arc<ClientConfig>) -> TlsOptions {
        self.config = Some(config);
        self
    }

    /// Reads the files and builds what every connection of the client uses.
    pub(crate) fn connector(&self) -> Result<TlsConnector> {
        let server_name = match &self.server_name {
            None => None,
            Some(name) => Some(ServerName::try_from(name.clone()).map_err(|e| {
                Error::invalid(format!("TLS: '{name}' is not a valid server name: {e}"))
            })?),
        };
        Ok(match &self.config {
            Some(config) => TlsConnector::given(config.clone(), server_name),
            None => {
                TlsConnector::reloading(ReloadingConfig::load(self.files.clone())?, server_name)
            }
        })
    }
}

impl fmt::Debug for TlsOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsOptions")
            .field("ca_files", &self.files.ca_files)
            .field("crl_files", &self.files.crl_files)
            .field("platform_roots", &self.files.platform_roots)
            .field("client_cert", &self.files.client_cert)
            .field("server_name", &self.server_name)
            .field("custom_config", &self.config.is_some())
            .finish()
    }
}
