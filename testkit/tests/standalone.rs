//! A real standalone server: lifecycle, pause, restart and cleanup.

mod common;

use std::io::ErrorKind;
use std::panic;
use std::path::PathBuf;
use std::time::Duration;

use common::{cmdline, eventually, pid_alive};
use zkrs_testkit::{four_letter_word, Error, Mode, ServerOptions, TestingServer};

const ANSWER: Duration = Duration::from_secs(5);
const SERVE: Duration = Duration::from_secs(30);

fn srvr(server: &TestingServer) -> String {
    four_letter_word(server.address(), "srvr", ANSWER).expect("srvr")
}

#[test]
fn start_stop_restart_pause_resume_kill() {
    let server = TestingServer::start().expect("start");
    let port = server.port();
    assert_eq!(server.connect_string(), format!("127.0.0.1:{port}"));
    assert_eq!(server.address().to_string(), server.connect_string());
    assert!(server.is_running());

    let answer = srvr(&server);
    assert!(answer.contains("Zookeeper version: 3."), "{answer}");
    assert_eq!(Mode::from_srvr(&answer), Some(Mode::Standalone), "{answer}");
    assert_eq!(server.mode(), Some(Mode::Standalone));
    // The fast defaults reached the server.
    let conf = four_letter_word(server.address(), "conf", ANSWER).unwrap();
    for line in [
        "tickTime=200",
        "minSessionTimeout=400",
        "maxSessionTimeout=4000",
        "maxClientCnxns=0",
    ] {
        assert!(conf.lines().any(|l| l == line), "{line} not in\n{conf}");
    }

    // Graceful stop: the port is closed.
    server.stop().unwrap();
    assert!(!server.is_running());
    assert_eq!(server.pid(), None);
    let err = four_letter_word(server.address(), "srvr", ANSWER).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConnectionRefused, "{err}");
    server.stop().expect("stopping twice is a no-op");

    // Restart: same port, same data.
    server.restart().unwrap();
    assert_eq!(server.port(), port);
    assert_eq!(Mode::from_srvr(&srvr(&server)), Some(Mode::Standalone));
    assert!(server.data_dir().join("version-2").is_dir());

    // Pause: the connection is accepted by the kernel but nobody answers.
    server.pause().unwrap();
    assert!(server.is_paused());
    assert!(server.is_running());
    let err = four_letter_word(server.address(), "srvr", Duration::from_millis(500)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut, "{err}");
    assert_eq!(server.mode(), None);
    assert!(matches!(
        server.wait_serving(Duration::from_millis(300)),
        Err(Error::NotServing { .. })
    ));

    server.resume().unwrap();
    assert!(!server.is_paused());
    server.wait_serving(SERVE).unwrap();
    assert_eq!(Mode::from_srvr(&srvr(&server)), Some(Mode::Standalone));

    // Crash, then restart again.
    let pid = server.pid().unwrap();
    server.kill().unwrap();
    assert!(!server.is_running());
    assert!(!pid_alive(pid));
    assert!(matches!(server.pause(), Err(Error::NotRunning { .. })));
    assert!(matches!(
        server.wait_serving(ANSWER),
        Err(Error::NotRunning { .. })
    ));
    server.restart().unwrap();
    assert_eq!(server.port(), port);
    assert_eq!(server.mode(), Some(Mode::Standalone));

    // Restart while paused works too.
    server.pause().unwrap();
    server.restart().unwrap();
    assert!(!server.is_paused());
    assert_eq!(server.mode(), Some(Mode::Standalone));

    let log = std::fs::read_to_string(server.log_path()).unwrap();
    assert!(
        log.contains("binding to port"),
        "log has ZooKeeper's output"
    );
}

#[test]
fn drop_kills_a_paused_server_and_removes_its_folder() {
    let server = TestingServer::start().expect("start");
    let pid = server.pid().unwrap();
    let dir = server.temp_dir().to_path_buf();
    let addr = server.address();
    assert!(pid_alive(pid));
    assert!(dir.join("zoo.cfg").is_file());
    assert!(server.log_path().starts_with(&dir));
    server.pause().unwrap();

    drop(server);

    assert!(!dir.exists(), "{} still exists", dir.display());
    eventually(Duration::from_secs(10), "the JVM to be gone", || {
        !pid_alive(pid)
    });
    let err = four_letter_word(addr, "srvr", ANSWER).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConnectionRefused, "{err}");
}

#[test]
fn a_panicking_test_cleans_up() {
    let (tx, rx) = std::sync::mpsc::channel::<(u32, PathBuf)>();
    let result = panic::catch_unwind(move || {
        let server = TestingServer::start().expect("start");
        tx.send((server.pid().unwrap(), server.temp_dir().to_path_buf()))
            .unwrap();
        panic!("test failure while a server runs");
    });
    assert!(result.is_err());
    let (pid, dir) = rx.recv().unwrap();
    assert!(!dir.exists());
    eventually(Duration::from_secs(10), "the JVM to be gone", || {
        !pid_alive(pid)
    });
}

#[test]
fn options_reach_the_server() {
    let server = TestingServer::start_with(
        ServerOptions::new()
            .tick_time_ms(100)
            .min_session_timeout_ms(300)
            .max_session_timeout_ms(6000)
            .config("clientPortListenBacklog", 77)
            .system_property("zkr.testkit.marker", "yes")
            .read_only_mode(true),
    )
    .expect("start");
    let conf = four_letter_word(server.address(), "conf", ANSWER).unwrap();
    let mut lines = vec![
        "tickTime=100",
        "minSessionTimeout=300",
        "maxSessionTimeout=6000",
    ];
    // A setting of 3.6 on (3.5 takes the line and leaves it out of `conf`).
    if server.version().unwrap().at_least(3, 6) {
        lines.push("clientPortListenBacklog=77");
    }
    for line in lines {
        assert!(conf.lines().any(|l| l == line), "{line} not in\n{conf}");
    }
    let cmd = cmdline(server.pid().unwrap());
    for arg in [
        "-Dzookeeper.extendedTypesEnabled=true",
        "-Dreadonlymode.enabled=true",
        "-Dzkr.testkit.marker=yes",
        "-Xmx256m",
        "org.apache.zookeeper.server.ZooKeeperServerMain",
    ] {
        assert!(cmd.contains(arg), "{arg} not in {cmd}");
    }
    assert_eq!(
        server.options().session_timeout_range(),
        (Duration::from_millis(300), Duration::from_millis(6000))
    );
}

#[test]
fn startup_failures_quote_the_log() {
    let err = TestingServer::start_with(
        ServerOptions::new()
            .config("tickTime", "not-a-number")
            .startup_timeout(SERVE),
    )
    .unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, Error::ServerExited { .. }), "{message}");
    assert!(message.contains("exited during startup"), "{message}");
    assert!(message.contains("last lines of"), "{message}");
    // ZooKeeper explains what is wrong with the configuration.
    assert!(message.contains("not-a-number"), "{message}");
}

#[test]
fn a_missing_server_says_how_to_install_it() {
    let err =
        TestingServer::start_with(ServerOptions::new().classpath("/nonexistent/zkr/zookeeper.jar"))
            .unwrap_err();
    assert!(matches!(err, Error::ServerNotFound { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "ZooKeeper server not found at /nonexistent/zkr/zookeeper.jar: run \
         scripts/install-zookeeper.sh (apt-get install zookeeper) or set \
         ZKR_ZOOKEEPER_CLASSPATH"
    );
    let err = zkrs_testkit::TestingCluster::start_with(
        3,
        ServerOptions::new().classpath("/nonexistent/zkr/zookeeper.jar"),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("scripts/install-zookeeper.sh"),
        "{err}"
    );

    let err =
        TestingServer::start_with(ServerOptions::new().java("/nonexistent/bin/java")).unwrap_err();
    assert!(matches!(err, Error::JavaNotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("ZKR_JAVA"), "{err}");
}

#[test]
fn a_taken_port_is_reported() {
    // Forcing the client port onto a port we hold makes every attempt fail
    // with a bind error, which exercises the retry path and its final error.
    let holder = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = holder.local_addr().unwrap().port();
    let err =
        TestingServer::start_with(ServerOptions::new().config("clientPort", taken)).unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, Error::ServerExited { .. }), "{message}");
    assert!(message.contains("Address already in use"), "{message}");
    let log = std::fs::read_to_string(err.log_path().unwrap());
    // The folder is gone with the failed server, so the log is too.
    assert!(log.is_err());
}
