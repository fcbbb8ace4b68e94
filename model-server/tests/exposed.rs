//! `zkrs-model` on a port others may reach: a warning when it listens beyond loopback, a
//! limit on connections per client address, and a listener that outlives running out of
//! file descriptors.

mod support;

use std::io::{ErrorKind, Read};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::Duration;

use support::{four_letter_word, Model, BIN, DEADLINE};

const WARNING: &str = "zkrs-model: warning: listening beyond loopback";

#[test]
fn listening_beyond_loopback_is_warned_of() {
    let open = Model::start(&["--bind", "0.0.0.0", "--port", "0"]);
    let (status, stderr) = open.signal("TERM");
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.contains(WARNING), "{stderr}");
    let local = Model::start(&["--port", "0"]);
    let (_, stderr) = local.signal("TERM");
    assert!(!stderr.contains(WARNING), "{stderr}");
}

/// Whether the server closed `stream` (end of stream or reset) within `wait`.
fn closed_within(stream: &mut TcpStream, wait: Duration) -> bool {
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut buf = [0u8; 64];
    match stream.read(&mut buf) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
    }
}

fn connect(addr: SocketAddr) -> TcpStream {
    TcpStream::connect_timeout(&addr, DEADLINE).expect("connect")
}

#[test]
fn connections_per_address_are_limited_as_zookeeper_does() {
    let model = Model::start(&["--port", "0"]);
    let addr = model.addrs()[0];
    assert!(four_letter_word(addr, "conf").contains("\nmaxClientCnxns=60\n"));
    let limited = Model::start(&["--port", "0", "--max-client-cnxns", "2"]);
    let addr = limited.addrs()[0];
    let mut held = vec![connect(addr), connect(addr)];
    let mut over = connect(addr);
    assert!(
        closed_within(&mut over, DEADLINE),
        "a third connection from 127.0.0.1 kept"
    );
    // The first two are still served (not closed for want of a handshake).
    assert!(!closed_within(&mut held[0], Duration::from_millis(50)));
    held.clear();
}

#[test]
fn the_listener_outlives_running_out_of_file_descriptors() {
    // A low descriptor limit for the server only: a shell sets it, then runs the binary.
    let mut command = Command::new("sh");
    command.args(["-c", "ulimit -n 32 && exec \"$0\" --port 0", BIN]);
    let model = Model::spawn(command);
    let addr = model.addrs()[0];
    // More connections than the server has descriptors: its accepts fail for a while.
    let mut held: Vec<TcpStream> = (0..48).map(|_| connect(addr)).collect();
    for stream in &mut held {
        stream
            .set_read_timeout(Some(Duration::from_millis(1)))
            .unwrap();
    }
    held.clear();
    // Once they are gone, a new connection is served.
    assert_eq!(four_letter_word(addr, "ruok"), "imok");
}
