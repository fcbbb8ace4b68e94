//! [`TlsConnector`]: the TLS state of each new connection, from the configuration as it is
//! now, and the handshake, run over the socket's non-blocking calls.

use std::io;
use std::sync::Arc;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection};
use tokio::net::TcpStream;

use super::error::TlsError;
use super::files::{CurrentConfig, ReloadingConfig};

/// Makes the TLS state of each connection.
#[derive(Clone)]
pub(crate) struct TlsConnector {
    source: ConfigSource,
    server_name: Option<ServerName<'static>>,
}

/// Where each connection's configuration comes from.
#[derive(Clone)]
enum ConfigSource {
    /// The caller's own ([`TlsOptions::rustls_config`](super::TlsOptions::rustls_config)).
    Given(Arc<ClientConfig>),
    /// The files, read again when they change.
    Files(Arc<ReloadingConfig>),
}

impl TlsConnector {
    /// Connections with the caller's configuration.
    pub(crate) fn given(
        config: Arc<ClientConfig>,
        server_name: Option<ServerName<'static>>,
    ) -> TlsConnector {
        TlsConnector {
            source: ConfigSource::Given(config),
            server_name,
        }
    }

    /// Connections with the configuration of the files, as they are at each connection.
    pub(crate) fn reloading(
        files: ReloadingConfig,
        server_name: Option<ServerName<'static>>,
    ) -> TlsConnector {
        TlsConnector {
            source: ConfigSource::Files(Arc::new(files)),
            server_name,
        }
    }

    fn config(&self) -> CurrentConfig {
        match &self.source {
            ConfigSource::Given(config) => CurrentConfig {
                config: config.clone(),
                reload_failure: None,
            },
            ConfigSource::Files(files) => files.current(),
        }
    }

    /// A new TLS connection to `host`, checked against the pinned name if there is one;
    /// with why the files could not be read again, if they could not.
    fn connection(&self, host: &str) -> io::Result<(ClientConnection, Failed)> {
        let name = match &self.server_name {
            Some(name) => name.clone(),
            None => ServerName::try_from(host.to_string()).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("TLS: '{host}' cannot be checked against a certificate ({e}); set TlsOptions::server_name"),
                )
            })?,
        };
        let CurrentConfig {
            config,
            reload_failure,
        } = self.config();
        let failed = Failed {
            host: host.to_string(),
            reload_failure,
        };
        let conn = ClientConnection::new(config, name).map_err(|e| failed.io(e))?;
        Ok((conn, failed))
    }

    /// Runs the handshake on a connected socket: the connection is ready for the session's
    /// bytes when this returns. Errors name the host and rustls's reason.
    pub(crate) async fn handshake(
        &self,
        tcp: &TcpStream,
        host: &str,
    ) -> io::Result<Box<ClientConnection>> {
        let (conn, failed) = self.connection(host)?;
        let mut conn = Box::new(conn);
        while conn.is_handshaking() {
            while conn.wants_write() {
                tcp.writable().await?;
                match conn.write_tls(&mut SocketIo(tcp)) {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    // A server that refuses us sends an alert and closes, and our next
                    // write may fail first (EPIPE): the alert says why, so read it.
                    Err(e) => return Err(alert_or(&mut conn, tcp, &failed, e)),
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
                        return Err(failed.io(e));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(alert_or(&mut conn, tcp, &failed, e)),
            }
        }
        Ok(conn)
    }
}

/// The server's alert if one already arrived, else `error`, naming the host either way.
fn alert_or(
    conn: &mut ClientConnection,
    tcp: &TcpStream,
    failed: &Failed,
    error: io::Error,
) -> io::Error {
    if let Ok(n) = conn.read_tls(&mut SocketIo(tcp)) {
        if n > 0 {
            if let Err(alert) = conn.process_new_packets() {
                return failed.io(alert);
            }
        }
    }
    io::Error::new(
        error.kind(),
        format!("TLS handshake with {} failed: {error}", failed.host),
    )
}

/// What a handshake's [`TlsError`] says besides rustls's reason.
struct Failed {
    host: String,
    reload_failure: Option<Arc<str>>,
}

impl Failed {
    fn io(&self, error: rustls::Error) -> io::Error {
        TlsError::new(&self.host, error, self.reload_failure.clone()).into_io()
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
