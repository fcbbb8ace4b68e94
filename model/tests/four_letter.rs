//! Four-letter words: the core answers a connection whose first four bytes spell one and
//! closes it (sans-I/O, on explicit time), and over TCP its answers have the shape and the
//! figures of a real ZooKeeper 3.8's after the same work.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use tokio::time::timeout;
use zkrs_client::Client;
use zkrs_codec::CreateMode;
use zkrs_model::{ConnectionId, Server, ServerConfig, TcpServer};
use zkrs_testkit::TestingServer;

const DEADLINE: Duration = Duration::from_secs(10);

/// A ConnectRequest frame: protocol 0, lastZxidSeen 0, timeout 30 s, new session.
fn connect_request() -> Vec<u8> {
    let mut frame = vec![0, 0, 0, 44, 0, 0, 0, 0];
    frame.extend_from_slice(&[0; 8]);
    frame.extend_from_slice(&30_000i32.to_be_bytes());
    frame.extend_from_slice(&[0; 8]);
    frame.extend_from_slice(&[0, 0, 0, 16]);
    frame.extend_from_slice(&[0; 16]);
    frame
}

/// Everything the server sends on `conn` now, and whether it closes it.
fn drain(server: &mut Server, conn: ConnectionId) -> (Vec<u8>, bool) {
    let mut data = Vec::new();
    let mut close = false;
    while let Some(t) = server.poll_transmit() {
        if t.connection == conn {
            data.extend_from_slice(&t.data);
            close |= t.close;
        }
    }
    (data, close)
}

fn ask(server: &mut Server, word: &[u8], now: Instant) -> (String, bool) {
    let conn = server.accept("127.0.0.1", now);
    server.handle_input(conn, word, now);
    let (data, close) = drain(server, conn);
    (String::from_utf8(data).unwrap(), close)
}

#[test]
fn ruok_is_answered_then_the_connection_closed() {
    let start = Instant::now();
    let mut server = Server::new(ServerConfig::default(), start);
    assert_eq!(ask(&mut server, b"ruok", start), ("imok".into(), true));
    // `echo ruok | nc`: what follows the word is ignored.
    assert_eq!(ask(&mut server, b"ruok\n", start), ("imok".into(), true));
    assert_eq!(ask(&mut server, b"isro", start), ("rw".into(), true));
}

#[test]
fn a_word_may_arrive_in_pieces() {
    let start = Instant::now();
    let mut server = Server::new(ServerConfig::default(), start);
    let conn = server.accept("127.0.0.1", start);
    server.handle_input(conn, b"ru", start);
    assert_eq!(drain(&mut server, conn), (Vec::new(), false));
    server.handle_input(conn, b"ok", start);
    assert_eq!(drain(&mut server, conn), (b"imok".to_vec(), true));
}

#[test]
fn after_the_handshake_four_letters_are_a_frame_length() {
    let start = Instant::now();
    let mut server = Server::new(ServerConfig::default(), start);
    let conn = server.accept("127.0.0.1", start);
    server.handle_input(conn, &connect_request(), start);
    let (reply, close) = drain(&mut server, conn);
    assert!(!reply.is_empty() && !close);
    // "ruok" as a length is 0x72756f6b, over jute.maxbuffer: the connection closes, unanswered.
    server.handle_input(conn, b"ruok", start);
    assert_eq!(drain(&mut server, conn), (Vec::new(), true));
}

#[test]
fn srvr_counts_packets_connections_and_nodes() {
    let start = Instant::now();
    let mut server = Server::new(ServerConfig::default(), start);
    let client = server.accept("127.0.0.1", start);
    server.handle_input(client, &connect_request(), start);
    drain(&mut server, client);
    let (srvr, close) = ask(&mut server, b"srvr", start);
    assert!(close);
    // Received: the ConnectRequest and the word; Sent: the ConnectResponse (the answer is
    // counted once sent). Zxid: createSession is a transaction.
    let expected = format!(
        "Zookeeper version: 3.8.0-zkrs-model-{}, built on 1970-01-01 00:00 UTC\n\
         Latency min/avg/max: 0/0.0/0\nReceived: 2\nSent: 1\nConnections: 2\nOutstanding: 0\n\
         Zxid: 0x1\nMode: standalone\nNode count: 5\n",
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(srvr, expected);
    let (stat, _) = ask(&mut server, b"stat", start);
    assert!(
        stat.contains(
            "Clients:\n /127.0.0.1[1](queued=0,recved=1,sent=1)\n \
             /127.0.0.1[0](queued=0,recved=1,sent=0)\n\nLatency"
        ),
        "{stat}"
    );
    assert!(stat.contains("Received: 3\nSent: 2\n"), "{stat}");
}

#[test]
fn conf_and_mntr_report_the_settings_and_the_tree() {
    let start = Instant::now();
    let mut config = ServerConfig::default();
    config.max_session_timeout = Some(Duration::from_secs(60));
    let mut server = Server::new(config, start);
    let (conf, _) = ask(&mut server, b"conf", start + Duration::from_millis(1500));
    assert_eq!(
        conf,
        "clientPort=0\nsecureClientPort=-1\ntickTime=200\nmaxClientCnxns=0\n\
         minSessionTimeout=400\nmaxSessionTimeout=60000\nclientPortListenBacklog=-1\n\
         serverId=0\n"
    );
    let (mntr, _) = ask(&mut server, b"mntr", start + Duration::from_millis(1500));
    let figures = key_values(&mntr, '\t');
    assert_eq!(figures["zk_server_state"], "standalone");
    assert_eq!(figures["zk_znode_count"], "5");
    assert_eq!(figures["zk_approximate_data_size"], "44");
    assert_eq!(figures["zk_uptime"], "1500");
    assert_eq!(figures["zk_packets_received"], "2");
}

#[test]
fn words_left_out_get_zookeepers_whitelist_answer() {
    let start = Instant::now();
    let mut server = Server::new(ServerConfig::default(), start);
    assert_eq!(
        ask(&mut server, b"dump", start),
        (
            "dump is not executed because it is not in the whitelist.\n".into(),
            true
        )
    );
}

// ----- Against a real ZooKeeper 3.8 -----

/// Sends `word` and reads the answer until the server closes the connection.
fn word(addr: SocketAddr, word: &str) -> String {
    let mut stream = TcpStream::connect_timeout(&addr, DEADLINE).unwrap();
    stream.set_read_timeout(Some(DEADLINE)).unwrap();
    stream.write_all(word.as_bytes()).unwrap();
    let _ = stream.shutdown(Shutdown::Write);
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .unwrap_or_else(|e| panic!("{word} to {addr}: {e}"));
    answer
}

fn key_values(answer: &str, separator: char) -> BTreeMap<String, String> {
    answer
        .lines()
        .filter_map(|l| l.split_once(separator))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

fn keys(answer: &str, separator: char) -> Vec<String> {
    answer
        .lines()
        .filter_map(|l| l.split_once(separator))
        .map(|(k, _)| k.trim().to_owned())
        .collect()
}

/// The same work on a server: a persistent node with data, an ephemeral, a data watch.
async fn work(connect: &str) -> Client {
    let client = timeout(DEADLINE, Client::connect(connect))
        .await
        .unwrap()
        .unwrap();
    client
        .create("/app", b"0123456789", CreateMode::Persistent)
        .await
        .unwrap();
    client
        .create("/app/e", b"", CreateMode::Ephemeral)
        .await
        .unwrap();
    let (_, _, _watch) = client.get_data_and_watch("/app").await.unwrap();
    client
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_have_the_shape_and_figures_of_a_real_servers() {
    let real = TestingServer::start().expect("a real ZooKeeper");
    let real_addr = real.address();
    let real_conf = word(real_addr, "conf");
    // The model with the real server's settings.
    let settings = key_values(&real_conf, '=');
    let ms = |k: &str| Duration::from_millis(settings[k].parse().unwrap());
    let mut config = ServerConfig::default();
    config.tick_time = ms("tickTime");
    config.min_session_timeout = Some(ms("minSessionTimeout"));
    config.max_session_timeout = Some(ms("maxSessionTimeout"));
    let model = TcpServer::start_with(config).await.unwrap();
    let model_addr = model.addr();

    for w in ["ruok", "isro"] {
        assert_eq!(word(model_addr, w), word(real_addr, w), "{w}");
    }
    // conf: the real server's lines, less its folders, values equal but the port.
    let model_conf = word(model_addr, "conf");
    let real_keys: Vec<String> = keys(&real_conf, '=')
        .into_iter()
        .filter(|k| !k.starts_with("dataDir") && !k.starts_with("dataLog"))
        .collect();
    assert_eq!(
        keys(&model_conf, '='),
        real_keys,
        "{model_conf}\n{real_conf}"
    );
    let model_settings = key_values(&model_conf, '=');
    assert_eq!(model_settings["clientPort"], model_addr.port().to_string());
    for key in [
        "tickTime",
        "minSessionTimeout",
        "maxSessionTimeout",
        "serverId",
    ] {
        assert_eq!(model_settings[key], settings[key], "{key}");
    }

    let real_client = work(&real.connect_string()).await;
    let model_client = work(&model.connect_string()).await;

    // srvr and stat: the same lines; the same zxid and node count after the same work.
    for w in ["srvr", "stat"] {
        let (r, m) = (word(real_addr, w), word(model_addr, w));
        assert_eq!(keys(&m, ':'), keys(&r, ':'), "{w}:\n{m}\n{r}");
        let (r, m) = (key_values(&r, ':'), key_values(&m, ':'));
        for key in ["Zxid", "Mode", "Node count", "Outstanding"] {
            assert_eq!(m[key], r[key], "{w} {key}");
        }
    }
    // stat lists the clients as ZooKeeper does: the client with its address, then the asker.
    let stat = word(model_addr, "stat");
    let client_line = stat.lines().nth(2).unwrap();
    assert!(
        client_line.starts_with(" /127.0.0.1:") && client_line.contains("[1](queued=0,recved="),
        "{stat}"
    );
    // mntr: a subset of the real keys, in the real order, with the same tree figures.
    let (r, m) = (word(real_addr, "mntr"), word(model_addr, "mntr"));
    let real_keys = keys(&r, '\t');
    let model_keys = keys(&m, '\t');
    let positions: Vec<usize> = model_keys
        .iter()
        .map(|k| {
            real_keys
                .iter()
                .position(|r| r == k)
                .unwrap_or_else(|| panic!("{k} is not a real mntr key"))
        })
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{model_keys:?}");
    let (r, m) = (key_values(&r, '\t'), key_values(&m, '\t'));
    for key in [
        "zk_server_state",
        "zk_ephemerals_count",
        "zk_znode_count",
        "zk_approximate_data_size",
        "zk_watch_count",
        "zk_global_sessions",
        "zk_outstanding_requests",
    ] {
        assert_eq!(m[key], r[key], "mntr {key}");
    }
    drop((real_client, model_client));
}
