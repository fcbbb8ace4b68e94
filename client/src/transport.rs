//! [`Transport`]: one connection to a server, plain TCP or TLS (feature `tls`), or a
//! simulated network's in-memory link (`memory_link.rs`), behind the non-blocking calls the
//! driver uses: wait for readiness, then read or write what the socket takes without
//! waiting. Keeping TLS behind the same calls keeps the driver one loop for both, and TLS
//! costs nothing when the feature is off.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::BytesMut;
use tokio::io::Interest;
use tokio::net::TcpStream;

use crate::memory_link::{Dialer, LinkEnd};
#[cfg(feature = "tls")]
use crate::tls::{SocketIo, TlsConnector, TlsError};

/// How connections are made: plain, or TLS with the client's settings, or by a simulated
/// network's dialer.
#[derive(Clone, Default)]
pub(crate) struct Connector {
    #[cfg(feature = "tls")]
    pub(crate) tls: Option<TlsConnector>,
    /// Replaces DNS and TCP when set (a simulation).
    pub(crate) dialer: Option<Arc<dyn Dialer>>,
}

impl Connector {
    /// Plain connections (TLS is set afterwards), or the dialer's.
    #[allow(clippy::needless_update)] // the update fills `tls` when the feature has it
    pub(crate) fn new(dialer: Option<Arc<dyn Dialer>>) -> Connector {
        Connector {
            dialer,
            ..Connector::default()
        }
    }

    /// Connects to one address of the host `name` (the name TLS checks the certificate
    /// against) and runs the TLS handshake. No timeout of its own: the caller's covers it.
    pub(crate) async fn connect_addr(&self, addr: SocketAddr, name: &str) -> io::Result<Transport> {
        let tcp = TcpStream::connect(addr).await?;
        let _ = tcp.set_nodelay(true);
        #[cfg(feature = "tls")]
        if let Some(tls) = &self.tls {
            let conn = tls.handshake(&tcp, name).await?;
            return Ok(Transport::Socket(SocketTransport::tls(tcp, conn)));
        }
        let _ = name;
        Ok(Transport::Socket(SocketTransport::plain(tcp)))
    }
}

/// A connection to one server.
pub(crate) enum Transport {
    /// TCP, with TLS when configured.
    Socket(SocketTransport),
    /// A simulated network's link.
    Memory(LinkEnd),
}

impl Transport {
    /// Waits until the connection may have bytes to read.
    pub(crate) async fn readable(&self) -> io::Result<()> {
        match self {
            Transport::Socket(s) => s.readable().await,
            Transport::Memory(m) => m.readable().await,
        }
    }

    /// Waits until the connection may take bytes.
    pub(crate) async fn writable(&self) -> io::Result<()> {
        match self {
            Transport::Socket(s) => s.writable().await,
            Transport::Memory(_) => Ok(()),
        }
    }

    /// Appends what can be read now to `buf`: `Ok(0)` at the end of the stream, `WouldBlock`
    /// when nothing is there yet. `buf` must have spare capacity.
    pub(crate) fn try_read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        match self {
            Transport::Socket(s) => s.try_read_buf(buf),
            Transport::Memory(m) => m.try_read_buf(buf),
        }
    }

    /// Writes a prefix of `data` without waiting; returns its length (`WouldBlock` when
    /// nothing could be taken).
    pub(crate) fn try_write(&mut self, data: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Socket(s) => s.try_write(data),
            Transport::Memory(m) => m.try_write(data),
        }
    }

    /// Whether bytes already accepted still wait for the socket (TLS records).
    pub(crate) fn wants_write(&self) -> bool {
        match self {
            Transport::Socket(s) => s.wants_write(),
            Transport::Memory(_) => false,
        }
    }

    /// Sends what [`Transport::wants_write`] holds, as far as the socket takes it.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        match self {
            Transport::Socket(s) => s.flush(),
            Transport::Memory(_) => Ok(()),
        }
    }

    /// Writes all of `data`, waiting as needed (for short exchanges such as `isro`).
    pub(crate) async fn write_all(&mut self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() || self.wants_write() {
            let result = if data.is_empty() {
                self.flush().map(|()| 0)
            } else {
                self.try_write(data)
            };
            match result {
                Ok(n) => data = &data[n..],
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            if !data.is_empty() || self.wants_write() {
                self.writable().await?;
            }
        }
        Ok(())
    }

    /// Reads until the server closes the connection, keeping at most `limit` bytes.
    pub(crate) async fn read_to_end(&mut self, limit: usize) -> io::Result<BytesMut> {
        let mut buf = BytesMut::with_capacity(limit.min(4096));
        loop {
            if buf.len() >= limit {
                return Ok(buf);
            }
            buf.reserve(64);
            match self.try_read_buf(&mut buf) {
                Ok(0) => return Ok(buf),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.readable().await?,
                Err(e) => return Err(e),
            }
        }
    }
}

/// A TCP connection, with TLS when configured.
pub(crate) struct SocketTransport {
    tcp: TcpStream,
    #[cfg(feature = "tls")]
    tls: Option<Box<rustls::ClientConnection>>,
    /// The last TLS read stopped at the end of its room with plaintext perhaps left in
    /// rustls: the socket may be empty, so its readiness cannot say so.
    #[cfg(feature = "tls")]
    tls_buffered: bool,
}

impl SocketTransport {
    fn plain(tcp: TcpStream) -> SocketTransport {
        SocketTransport {
            tcp,
            #[cfg(feature = "tls")]
            tls: None,
            #[cfg(feature = "tls")]
            tls_buffered: false,
        }
    }

    /// A TLS connection whose handshake is done.
    #[cfg(feature = "tls")]
    fn tls(tcp: TcpStream, conn: Box<rustls::ClientConnection>) -> SocketTransport {
        SocketTransport {
            tcp,
            tls: Some(conn),
            tls_buffered: false,
        }
    }

    /// Waits until the socket may have bytes to read (at once while rustls may hold
    /// plaintext a bounded read left there).
    pub(crate) async fn readable(&self) -> io::Result<()> {
        #[cfg(feature = "tls")]
        if self.tls_buffered {
            return Ok(());
        }
        self.tcp.readable().await
    }

    /// Waits until the socket may take bytes.
    pub(crate) async fn writable(&self) -> io::Result<()> {
        self.tcp.writable().await
    }

    /// Appends what can be read now to `buf` (decrypted, with TLS): `Ok(0)` at the end of
    /// the stream, `WouldBlock` when nothing is there yet. `buf` must have spare capacity.
    pub(crate) fn try_read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        #[cfg(feature = "tls")]
        if let Some(conn) = &mut self.tls {
            let (read, buffered) = read_tls(&self.tcp, conn, buf);
            self.tls_buffered = buffered;
            return read;
        }
        // A short read means the socket is drained: say so to tokio (the outer `try_io`
        // clears the readiness on `WouldBlock`), as its own `poll_read` does, so the next
        // wait really waits instead of costing a `recv` that returns EAGAIN.
        let room = buf.capacity() - buf.len();
        let mut read = None;
        let result = self.tcp.try_io(Interest::READABLE, || {
            let n = self.tcp.try_read_buf(buf)?;
            read = Some(n);
            if n > 0 && n < room {
                Err(io::ErrorKind::WouldBlock.into())
            } else {
                Ok(n)
            }
        });
        match read {
            Some(n) => Ok(n),
            None => result,
        }
    }

    /// Writes a prefix of `data` without waiting; returns its length (`WouldBlock` when
    /// nothing could be taken).
    pub(crate) fn try_write(&mut self, data: &[u8]) -> io::Result<usize> {
        #[cfg(feature = "tls")]
        if let Some(conn) = &mut self.tls {
            // Send what is already encrypted first, so rustls's buffer stays small.
            flush_tls(&self.tcp, conn)?;
            let taken = io::Write::write(&mut conn.writer(), data)?;
            flush_tls(&self.tcp, conn)?;
            return match taken {
                0 if !data.is_empty() => Err(io::ErrorKind::WouldBlock.into()),
                n => Ok(n),
            };
        }
        match self.tcp.try_write(data)? {
            0 if !data.is_empty() => Err(io::ErrorKind::WriteZero.into()),
            n => Ok(n),
        }
    }

    /// Whether bytes already accepted still wait for the socket (TLS records).
    pub(crate) fn wants_write(&self) -> bool {
        #[cfg(feature = "tls")]
        if let Some(conn) = &self.tls {
            return conn.wants_write();
        }
        false
    }

    /// Sends what [`Transport::wants_write`] holds, as far as the socket takes it.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        #[cfg(feature = "tls")]
        if let Some(conn) = &mut self.tls {
            return flush_tls(&self.tcp, conn);
        }
        Ok(())
    }
}

/// Moves records from the socket into rustls and plaintext out of it, into the room `buf`
/// has (its spare capacity, which the driver sizes by the frame under way): the bytes
/// appended to `buf`, `Ok(0)` at the end of the stream; and whether it stopped with the room
/// full, rustls perhaps holding more plaintext. Bounded by the room, a burst is taken a
/// room at a time, and the driver's timers get their turn between reads; unbounded, it was
/// decrypted whole, into a buffer grown past any limit, while nothing else ran.
#[cfg(feature = "tls")]
fn read_tls(
    tcp: &TcpStream,
    conn: &mut rustls::ClientConnection,
    buf: &mut BytesMut,
) -> (io::Result<usize>, bool) {
    if buf.capacity() == buf.len() {
        buf.reserve(4096);
    }
    let room = buf.capacity() - buf.len();
    let mut total = 0;
    // Ciphertext taken from the socket by this call: records without plaintext (alerts,
    // session tickets, padding) must not keep it here either.
    let mut taken = 0;
    loop {
        // Plaintext rustls already holds, as far as the room goes.
        while total < room {
            let start = buf.len();
            // At most one TLS record's worth: zeroing is the price of not using `unsafe`.
            let take = (room - total).min(16 * 1024);
            buf.resize(start + take, 0);
            let read = io::Read::read(&mut conn.reader(), &mut buf[start..]);
            buf.truncate(start + *read.as_ref().unwrap_or(&0));
            match read {
                // The server ended the TLS session (close_notify).
                Ok(0) => return (Ok(total), false),
                Ok(n) => total += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return (Err(e), false),
            }
        }
        if total >= room {
            return (Ok(total), true);
        }
        if taken >= room + 32 * 1024 {
            // The socket still has bytes (it never said WouldBlock): its readiness stays.
            return (
                if total > 0 {
                    Ok(total)
                } else {
                    Err(io::ErrorKind::WouldBlock.into())
                },
                false,
            );
        }
        match conn.read_tls(&mut SocketIo(tcp)) {
            // The TCP stream ended: whatever came before it first.
            Ok(0) => return (Ok(total), false),
            Ok(n) => {
                taken += n;
                if let Err(e) = conn.process_new_packets() {
                    let _ = conn.write_tls(&mut SocketIo(tcp));
                    // Named as the handshake names it: the host, without the port.
                    let peer = tcp
                        .peer_addr()
                        .map(|a| a.ip().to_string())
                        .unwrap_or_else(|_| "the server".into());
                    return (Err(TlsError::new(&peer, e, None).into_io()), false);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                return (if total > 0 { Ok(total) } else { Err(e) }, false);
            }
            Err(e) => return (Err(e), false),
        }
    }
}

/// Sends encrypted records until the socket would block or none are left.
#[cfg(feature = "tls")]
fn flush_tls(tcp: &TcpStream, conn: &mut rustls::ClientConnection) -> io::Result<()> {
    while conn.wants_write() {
        match conn.write_tls(&mut SocketIo(tcp)) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(all(test, feature = "tls"))]
#[path = "transport_tls_tests.rs"]
mod tls_tests;
