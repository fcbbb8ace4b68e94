//! TLS to ZooKeeper's `secureClientPort` (feature `tls`): [`TlsOptions`] say what to trust
//! and who to be; the driver runs rustls's connection state machine itself over the same
//! non-blocking socket calls as a plain connection (see `transport.rs`), so no async TLS
//! wrapper crate is needed.

use crate::error::ErrorExt;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore};
use tokio::net::TcpStream;

use crate::error::{Error, Result};

/// What a TLS connection trusts and presents, for
/// [`ClientBuilder::tls`](crate::ClientBuilder::tls). Applies to every host of the connect
/// string and to the read-write probe of read-only mode.
///
/// Trust comes from a CA file ([`TlsOptions::ca_file`]), the platform's store
/// ([`TlsOptions::platform_roots`], also the default when no CA file is given), or both.
/// The server's certificate must name the host as written in the connect string (a DNS
/// name, or an IP address in its `subjectAltName`); [`TlsOptions::server_name`] pins one
/// name for every host instead, for example when connecting by IP to certificates that
/// carry only DNS names. Files are read when the client starts: a missing or unreadable
/// file fails [`ClientBuilder::connect`](crate::ClientBuilder::connect) at once.
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
    ca_files: Vec<PathBuf>,
    platform_roots: bool,
    client_cert: Option<(PathBuf, PathBuf)>,
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
        self.ca_files.push(path.into());
        self
    }

    /// Also trusts the platform's store (on Linux the system bundle, or `SSL_CERT_FILE` /
    /// `SSL_CERT_DIR`).
    pub fn platform_roots(mut self) -> TlsOptions {
        self.platform_roots = true;
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
        self.client_cert = Some((cert_chain.into(), private_key.into()));
        self
    }

    /// Checks every server's certificate against this name instead of the host written in
    /// the connect string (still verified: this pins the name, it does not skip the check).
    pub fn server_name(mut self, name: impl Into<String>) -> TlsOptions {
        self.server_name = Some(name.into());
        self
    }

    /// Uses a rustls configuration built by the caller (custom verifiers, cipher suites,
    /// session resumption); the CA, platform and client-certificate settings are then
    /// ignored, [`TlsOptions::server_name`] still applies.
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
        let config = match &self.config {
            Some(config) => config.clone(),
            None => Arc::new(self.build_config()?),
        };
        Ok(TlsConnector {
            config,
            server_name,
        })
    }

    fn build_config(&self) -> Result<ClientConfig> {
        let mut roots = RootCertStore::empty();
        for path in &self.ca_files {
            let certs = read_certs(path, "CA file")?;
            let (added, _) = roots.add_parsable_certificates(certs);
            if added == 0 {
                return Err(Error::invalid(format!(
                    "TLS: no usable CA certificate in {}",
                    path.display()
                )));
            }
        }
        if self.platform_roots || self.ca_files.is_empty() {
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
            if roots.is_empty() {
                let why = found.errors.first().map(|e| format!(": {e}"));
                return Err(Error::invalid(format!(
                    "TLS: the platform's trust store holds no certificate{}",
                    why.unwrap_or_default()
                )));
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::invalid(format!("TLS: {e}")))?
            .with_root_certificates(roots);
        match &self.client_cert {
            None => Ok(builder.with_no_client_auth()),
            Some((cert_path, key_path)) => {
                let chain = read_certs(cert_path, "client certificate file")?;
                let key = PrivateKeyDer::from_pem_file(key_path).map_err(|e| {
                    Error::invalid(format!(
                        "TLS: cannot read a private key from {}: {e}",
                        key_path.display()
                    ))
                })?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| Error::invalid(format!("TLS: bad client certificate: {e}")))
            }
        }
    }
}

impl fmt::Debug for TlsOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsOptions")
            .field("ca_files", &self.ca_files)
            .field("platform_roots", &self.platform_roots)
            .field("client_cert", &self.client_cert)
            .field("server_name", &self.server_name)
            .field("custom_config", &self.config.is_some())
            .finish()
    }
}

fn read_certs(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<std::result::Result<Vec<_>, _>>())
        .map_err(|e| {
            Error::invalid(format!(
                "TLS: cannot read the {what} {}: {e}",
                path.display()
            ))
        })?;
    if certs.is_empty() {
        return Err(Error::invalid(format!(
            "TLS: no certificate in the {what} {}",
            path.display()
        )));
    }
    Ok(certs)
}

/// Makes the TLS state of each connection.
#[derive(Clone)]
pub(crate) struct TlsConnector {
    config: Arc<ClientConfig>,
    server_name: Option<ServerName<'static>>,
}

impl TlsConnector {
    /// A new TLS connection to `host`, checked against the pinned name if there is one.
    fn connection(&self, host: &str) -> io::Result<ClientConnection> {
        let name = match &self.server_name {
            Some(name) => name.clone(),
            None => ServerName::try_from(host.to_string()).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("TLS: '{host}' cannot be checked against a certificate ({e}); set TlsOptions::server_name"),
                )
            })?,
        };
        ClientConnection::new(self.config.clone(), name).map_err(|e| TlsFailure::io_error(host, e))
    }

    /// Runs the handshake on a connected socket: the connection is ready for the session's
    /// bytes when this returns. Errors name the host and rustls's reason.
    pub(crate) async fn handshake(
        &self,
        tcp: &TcpStream,
        host: &str,
    ) -> io::Result<Box<ClientConnection>> {
        let mut conn = Box::new(self.connection(host)?);
        while conn.is_handshaking() {
            while conn.wants_write() {
                tcp.writable().await?;
                match conn.write_tls(&mut SocketIo(tcp)) {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    // A server that refuses us sends an alert and closes, and our next
                    // write may fail first (EPIPE): the alert says why, so read it.
                    Err(e) => return Err(alert_or(&mut conn, tcp, host, e)),
                }
            }
            if !conn.is_handshaking() {
                break;
            }
            tcp.readable().await?;
            match conn.read_tls(&mut SocketIo(tcp)) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("TLS handshake with {host}: the server closed the connection (is this its secureClientPort?)"),
                    ))
                }
                Ok(_) => {
                    if let Err(e) = conn.process_new_packets() {
                        // Tell the server why, as TLS wants (best effort).
                        let _ = conn.write_tls(&mut SocketIo(tcp));
                        return Err(TlsFailure::io_error(host, e));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(alert_or(&mut conn, tcp, host, e)),
            }
        }
        Ok(conn)
    }
}

/// The server's alert if one already arrived, else `error`, naming the host either way.
fn alert_or(
    conn: &mut ClientConnection,
    tcp: &TcpStream,
    host: &str,
    error: io::Error,
) -> io::Error {
    if let Ok(n) = conn.read_tls(&mut SocketIo(tcp)) {
        if n > 0 {
            if let Err(alert) = conn.process_new_packets() {
                return TlsFailure::io_error(host, alert);
            }
        }
    }
    io::Error::new(
        error.kind(),
        format!("TLS handshake with {host} failed: {error}"),
    )
}

/// A TLS failure: which host, and rustls's reason (`invalid peer certificate: UnknownIssuer`,
/// `received fatal alert: CertificateRequired`, ...), kept as the `io::Error`'s source.
#[derive(Debug)]
pub(crate) struct TlsFailure {
    host: String,
    error: rustls::Error,
}

impl TlsFailure {
    pub(crate) fn io_error(host: &str, error: rustls::Error) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            TlsFailure {
                host: host.to_string(),
                error,
            },
        )
    }
}

impl fmt::Display for TlsFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TLS with {} failed: {}", self.host, self.error)
    }
}

impl std::error::Error for TlsFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// `Read`/`Write` over a tokio socket's non-blocking calls, for rustls's `read_tls` and
/// `write_tls` (which want std's traits): `WouldBlock` when the socket has nothing.
pub(crate) struct SocketIo<'a>(pub(crate) &'a TcpStream);

impl io::Read for SocketIo<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.try_read(buf)
    }
}

impl io::Write for SocketIo<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.try_write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
