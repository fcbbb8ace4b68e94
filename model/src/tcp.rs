//! The TCP adapter: the model served on 127.0.0.1 with tokio, so any client (zkrs, Curator,
//! zkCli.sh) can connect. One task owns the [`Server`]; each connection has a reader task
//! feeding it bytes and a writer task sending what it answers. Time is tokio's clock since
//! start, fed into the deterministic core (so a paused tokio clock drives it too).

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::config::ServerConfig;
use crate::connection_id::ConnectionId;
use crate::server::Server;

type Call = Box<dyn FnOnce(&mut Server, Duration) + Send>;

enum Input {
    Accepted(TcpStream, SocketAddr),
    Bytes(ConnectionId, Bytes),
    Gone(ConnectionId),
    Call(Call),
}

enum Output {
    Data(Bytes),
    Close,
}

/// A model server listening on 127.0.0.1. Dropping it stops the server and closes every
/// connection.
#[derive(Debug)]
pub struct ModelServer {
    addr: SocketAddr,
    inputs: mpsc::UnboundedSender<Input>,
    acceptor: JoinHandle<()>,
    core: JoinHandle<()>,
}

impl ModelServer {
    /// Starts a server with the default settings on a free port (inside a tokio runtime).
    pub async fn start() -> io::Result<Self> {
        Self::start_with(ServerConfig::default()).await
    }

    /// Starts a server with `config` on a free port.
    pub async fn start_with(config: ServerConfig) -> io::Result<Self> {
        Self::start_on(0, config).await
    }

    /// Starts a server with `config` on 127.0.0.1:`port` (0: a free port).
    pub async fn start_on(port: u16, config: ServerConfig) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let (inputs, rx) = mpsc::unbounded_channel();
        let to_core = inputs.clone();
        let acceptor = tokio::spawn(async move {
            while let Ok((stream, peer)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                if to_core.send(Input::Accepted(stream, peer)).is_err() {
                    return;
                }
            }
        });
        let core = tokio::spawn(run_core(Server::new(config), inputs.clone(), rx));
        Ok(ModelServer {
            addr,
            inputs,
            acceptor,
            core,
        })
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `127.0.0.1:<port>`, for a client's connect string.
    pub fn connect_string(&self) -> String {
        self.addr.to_string()
    }

    /// Runs `f` on the model between two inputs (to inspect the tree, or expire a session),
    /// with the model's current time.
    pub async fn with_server<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Server, Duration) -> R + Send + 'static,
    ) -> Option<R> {
        let (tx, rx) = oneshot::channel();
        let call: Call = Box::new(move |server, now| {
            let _ = tx.send(f(server, now));
        });
        self.inputs.send(Input::Call(call)).ok()?;
        rx.await.ok()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.acceptor.abort();
        self.core.abort();
    }
}

struct Link {
    out: mpsc::UnboundedSender<Output>,
    reader: JoinHandle<()>,
}

async fn run_core(
    mut server: Server,
    inputs: mpsc::UnboundedSender<Input>,
    mut rx: mpsc::UnboundedReceiver<Input>,
) {
    let start = Instant::now();
    let mut links: HashMap<ConnectionId, Link> = HashMap::new();
    loop {
        let wake = server
            .poll_timeout()
            .map_or_else(|| start + Duration::from_secs(3600), |t| start + t);
        let input = tokio::select! {
            input = rx.recv() => match input {
                Some(input) => Some(input),
                None => return,
            },
            () = tokio::time::sleep_until(wake) => None,
        };
        let now = start.elapsed();
        match input {
            None => server.handle_timeout(now),
            Some(Input::Accepted(stream, peer)) => {
                let conn = server.accept(now, &peer.ip().to_string());
                let (mut read, write) = stream.into_split();
                let (out, out_rx) = mpsc::unbounded_channel();
                tokio::spawn(write_loop(write, out_rx));
                let to_core = inputs.clone();
                let reader = tokio::spawn(async move {
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        match read.read(&mut buf).await {
                            Ok(0) | Err(_) => {
                                let _ = to_core.send(Input::Gone(conn));
                                return;
                            }
                            Ok(n) => {
                                let bytes = Bytes::copy_from_slice(&buf[..n]);
                                if to_core.send(Input::Bytes(conn, bytes)).is_err() {
                                    return;
                                }
                            }
                        }
                    }
                });
                links.insert(conn, Link { out, reader });
            }
            Some(Input::Bytes(conn, bytes)) => server.handle_input(now, conn, &bytes),
            Some(Input::Gone(conn)) => {
                if let Some(link) = links.remove(&conn) {
                    let _ = link.out.send(Output::Close);
                    server.handle_disconnect(now, conn);
                }
            }
            Some(Input::Call(call)) => call(&mut server, now),
        }
        while let Some(t) = server.poll_transmit() {
            let Some(link) = links.get(&t.connection) else {
                continue;
            };
            if !t.data.is_empty() {
                let _ = link.out.send(Output::Data(t.data));
            }
            if t.close {
                let _ = link.out.send(Output::Close);
                if let Some(link) = links.remove(&t.connection) {
                    link.reader.abort();
                }
            }
        }
    }
}

async fn write_loop(mut write: OwnedWriteHalf, mut rx: mpsc::UnboundedReceiver<Output>) {
    while let Some(out) = rx.recv().await {
        match out {
            Output::Data(bytes) => {
                if write.write_all(&bytes).await.is_err() {
                    return;
                }
            }
            Output::Close => {
                let _ = write.shutdown().await;
                return;
            }
        }
    }
}
