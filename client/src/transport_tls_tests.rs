//! TLS reads against a rustls server on a loopback socket: a read takes no more than the
//! room it was given, however much the socket holds, and what it leaves in rustls is still
//! announced as readable once the socket is empty.

use std::io::Write as _;
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use zkrs_testkit::TlsCertificates;

use super::{Connector, Transport};
use crate::tls::TlsOptions;

/// Plaintext the server sends in one burst.
const BURST: usize = 1024 * 1024;
/// The room each read is given.
const ROOM: usize = 8 * 1024;
/// How much must wait in the socket before the first read: several rooms' worth.
const QUEUED: usize = 48 * 1024;
const DEADLINE: Duration = Duration::from_secs(20);

/// A TLS server on a loopback port that sends `BURST` bytes once the handshake is done,
/// then keeps the connection open until the client closes it.
fn burst_server(certs: &TlsCertificates) -> std::net::SocketAddr {
    let chain = CertificateDer::pem_file_iter(certs.server_cert_pem())
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(certs.server_key_pem()).unwrap();
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let (tcp, _) = listener.accept().unwrap();
        let conn = rustls::ServerConnection::new(Arc::new(config)).unwrap();
        let mut stream = rustls::StreamOwned::new(conn, tcp);
        let _ = stream.write_all(&vec![0x42; BURST]);
        let _ = stream.flush();
        // Until the client goes: a read ends at its close.
        let _ = std::io::Read::read(&mut stream, &mut [0; 1]);
    });
    addr
}

async fn tls_client(certs: &TlsCertificates, addr: std::net::SocketAddr) -> Transport {
    let options = TlsOptions::new()
        .ca_file(certs.ca_pem())
        .server_name(certs.server_names()[0]);
    let connector = Connector {
        tls: Some(options.connector().unwrap()),
        dialer: None,
    };
    tokio::time::timeout(DEADLINE, connector.connect_addr(addr, "localhost"))
        .await
        .expect("the handshake within the deadline")
        .unwrap()
}

/// Bytes waiting in the client's socket (ciphertext), without taking them.
async fn queued(transport: &Transport) -> usize {
    let Transport::Socket(socket) = transport else {
        unreachable!("a socket")
    };
    let mut probe = vec![0; QUEUED];
    tokio::time::timeout(DEADLINE, socket.tcp.peek(&mut probe))
        .await
        .expect("bytes within the deadline")
        .unwrap_or(0)
}

#[tokio::test]
async fn a_tls_read_takes_no_more_than_its_room_and_leaves_the_rest_readable() {
    let certs = TlsCertificates::generate().unwrap();
    let addr = burst_server(&certs);
    let mut transport = tls_client(&certs, addr).await;
    // The client's last handshake record, as the driver's first flush sends it.
    tokio::time::timeout(DEADLINE, transport.write_all(b""))
        .await
        .expect("the flush within the deadline")
        .unwrap();

    // Several rooms' worth waits in the socket (polled: the kernel says when, not an event).
    let started = std::time::Instant::now();
    while queued(&transport).await < QUEUED {
        assert!(started.elapsed() < DEADLINE, "the burst never arrived");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    let mut buf = BytesMut::with_capacity(ROOM);
    let first = transport.try_read_buf(&mut buf).expect("plaintext");
    assert!(
        first <= ROOM && buf.len() <= ROOM,
        "one read took {first} bytes with {ROOM} bytes of room"
    );

    // The rest comes a room at a time, announced as readable even when what is left sits
    // in rustls and the socket is empty.
    let mut total = first;
    while total < BURST {
        tokio::time::timeout(DEADLINE, transport.readable())
            .await
            .unwrap_or_else(|_| panic!("{} bytes never announced", BURST - total))
            .unwrap();
        buf.clear();
        match transport.try_read_buf(&mut buf) {
            Ok(0) => panic!("the stream ended after {total} bytes"),
            Ok(n) => {
                assert!(n <= ROOM, "a read took {n} bytes");
                total += n;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(total, BURST);
}
