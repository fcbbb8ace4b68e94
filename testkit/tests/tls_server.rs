//! Real ZooKeeper servers on a TLS port, checked with `openssl s_client`: the
//! handshake (server certificate, names, client certificates, expiry), then a
//! ZooKeeper session over it (ConnectRequest/ConnectResponse) and the identity
//! the server gave the session (`whoAmI`, opcode 107, ZooKeeper 3.7+).

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use zkrs_testkit::{
    four_letter_word, ClientAuth, ServerOptions, ServerVersion, TestingCluster, TestingServer,
    TlsCertificates,
};

/// The longest any single wait may take.
const DEADLINE: Duration = Duration::from_secs(20);

/// `openssl s_client -quiet` as a child: our bytes go to the server through
/// its stdin, the server's come back on its stdout.
struct SClient {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Receiver<Vec<u8>>,
    stderr: Receiver<String>,
    stderr_text: Option<String>,
    buffered: Vec<u8>,
}

impl SClient {
    /// Connects to `address` trusting `ca` (`-verify_return_error`: a bad
    /// server certificate fails the handshake), with `extra` arguments
    /// (`-cert`/`-key`, `-verify_ip`...).
    fn connect(address: &str, ca: &Path, extra: &[&str]) -> SClient {
        let mut child = Command::new("openssl")
            .args([
                "s_client",
                "-quiet",
                "-verify_return_error",
                "-connect",
                address,
            ])
            .arg("-CAfile")
            .arg(ca)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn openssl s_client");
        let (out_tx, stdout) = mpsc::channel();
        let mut out = child.stdout.take().unwrap();
        thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = out.read(&mut buf) {
                if out_tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let (err_tx, stderr) = mpsc::channel();
        let mut err = child.stderr.take().unwrap();
        thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            let _ = err_tx.send(text);
        });
        SClient {
            stdin: child.stdin.take(),
            child,
            stdout,
            stderr,
            stderr_text: None,
            buffered: Vec::new(),
        }
    }

    /// Connects presenting a client certificate.
    fn connect_as(address: &str, ca: &Path, cert: &Path, key: &Path) -> SClient {
        let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());
        SClient::connect(address, ca, &["-cert", cert, "-key", key])
    }

    fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Exactly `n` bytes from the server, or why not (s_client's stderr).
    fn read(&mut self, n: usize) -> Result<Vec<u8>, String> {
        let deadline = Instant::now() + DEADLINE;
        while self.buffered.len() < n {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stdout.recv_timeout(left) {
                Ok(chunk) => self.buffered.extend(chunk),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("no answer within {DEADLINE:?}"))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!(
                        "s_client ended after {} bytes: {}",
                        self.buffered.len(),
                        self.stderr_text()
                    ))
                }
            }
        }
        Ok(self.buffered.drain(..n).collect())
    }

    /// One length-prefixed ZooKeeper frame's body.
    fn read_frame(&mut self) -> Result<Vec<u8>, String> {
        let len = i32::from_be_bytes(self.read(4)?.try_into().unwrap());
        assert!((0..1 << 20).contains(&len), "frame length {len}");
        self.read(len as usize)
    }

    /// What s_client printed on stderr (it has exited or is about to).
    fn stderr_text(&mut self) -> String {
        if self.stderr_text.is_none() {
            let text = self.stderr.recv_timeout(DEADLINE);
            self.stderr_text = Some(text.unwrap_or_else(|_| "(stderr not closed in time)".into()));
        }
        self.stderr_text.clone().unwrap_or_default()
    }

    /// Waits for s_client to exit on its own; its status and stderr.
    fn wait_exit(mut self) -> (ExitStatus, String) {
        let deadline = Instant::now() + DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (status, self.stderr_text());
            }
            assert!(
                Instant::now() < deadline,
                "s_client did not exit within {DEADLINE:?}"
            );
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for SClient {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A ConnectRequest frame: protocol 0, zxid 0, 4 s timeout, new session, empty
/// password, not read-only.
fn connect_request() -> Vec<u8> {
    let mut body = Vec::new();
    body.extend(0i32.to_be_bytes()); // protocolVersion
    body.extend(0i64.to_be_bytes()); // lastZxidSeen
    body.extend(4000i32.to_be_bytes()); // timeOut
    body.extend(0i64.to_be_bytes()); // sessionId
    body.extend(16i32.to_be_bytes()); // passwd
    body.extend([0u8; 16]);
    body.push(0); // readOnly
    let mut frame = (body.len() as i32).to_be_bytes().to_vec();
    frame.extend(body);
    frame
}

/// Starts a session over `client`; returns its id.
fn start_session(client: &mut SClient) -> Result<i64, String> {
    client.send(&connect_request());
    let body = client.read_frame()?;
    let int = |at: usize| i32::from_be_bytes(body[at..at + 4].try_into().unwrap());
    assert!(body.len() >= 36, "ConnectResponse of {} bytes", body.len());
    assert_eq!(int(0), 0, "protocolVersion");
    let timeout = int(4);
    assert!(
        (400..=4000).contains(&timeout),
        "negotiated timeout {timeout}"
    );
    let session = i64::from_be_bytes(body[8..16].try_into().unwrap());
    assert_ne!(session, 0, "session id");
    assert_eq!(int(16), 16, "password length");
    Ok(session)
}

/// The (scheme, id) pairs the server gives the session (`whoAmI`); `None` from a server
/// before 3.7, which answers it UNIMPLEMENTED (checked) and closes the connection.
fn who_am_i(client: &mut SClient, version: ServerVersion) -> Option<Vec<(String, String)>> {
    let mut frame = 8i32.to_be_bytes().to_vec();
    frame.extend(1i32.to_be_bytes()); // xid
    frame.extend(107i32.to_be_bytes()); // OpCode.whoAmI
    client.send(&frame);
    let body = client.read_frame().expect("whoAmI reply");
    let mut at = 0;
    let mut int = |body: &[u8]| {
        let v = i32::from_be_bytes(body[at..at + 4].try_into().unwrap());
        at += 4;
        v
    };
    assert_eq!(int(&body), 1, "xid");
    int(&body); // zxid, two halves
    int(&body);
    let code = int(&body);
    if !version.at_least(3, 7) {
        assert_eq!(code, -6, "UNIMPLEMENTED from {version}");
        return None;
    }
    assert_eq!(code, 0, "error code");
    let count = int(&body);
    let mut ids = Vec::new();
    let mut string = |body: &[u8]| {
        let len = i32::from_be_bytes(body[at..at + 4].try_into().unwrap()) as usize;
        let s = String::from_utf8(body[at + 4..at + 4 + len].to_vec()).unwrap();
        at += 4 + len;
        s
    };
    for _ in 0..count {
        let scheme = string(&body);
        let id = string(&body);
        ids.push((scheme, id));
    }
    Some(ids)
}

fn x509_ids(ids: &[(String, String)]) -> Vec<&str> {
    ids.iter()
        .filter(|(scheme, _)| scheme == "x509")
        .map(|(_, id)| id.as_str())
        .collect()
}

/// A handshake that must fail: nothing reaches the ZooKeeper layer, s_client
/// exits with an error; its stderr.
fn refused(mut client: SClient) -> String {
    client.send(&connect_request());
    let answer = client.read(4);
    assert!(answer.is_err(), "the server answered: {answer:?}");
    let (status, stderr) = client.wait_exit();
    assert!(!status.success(), "s_client succeeded: {stderr}");
    eprintln!("refused ({status}): {}", stderr.trim());
    stderr
}

fn start(options: ServerOptions) -> TestingServer {
    let started = Instant::now();
    let server = TestingServer::start_with(options).expect("start a TLS server");
    eprintln!("TLS server started in {:?}", started.elapsed());
    server
}

#[test]
fn server_only_tls_serves_sessions_next_to_the_plain_port() {
    let certs = TlsCertificates::generate().expect("certificates");
    let server = start(ServerOptions::new().tls(&certs, ClientAuth::None));
    let secure = server.secure_connect_string().expect("a TLS port");
    let port = server.secure_port().unwrap();
    assert_ne!(port, server.port());
    assert_eq!(secure, format!("127.0.0.1:{port}"));
    assert_eq!(server.secure_address().unwrap().to_string(), secure);
    assert_eq!(server.options().tls_client_auth(), Some(ClientAuth::None));

    // The plain port still serves (readiness and four-letter words use it).
    let srvr = four_letter_word(server.address(), "srvr", DEADLINE).unwrap();
    assert!(srvr.contains("Mode: standalone"), "{srvr}");

    // The certificate names IP:127.0.0.1 and DNS:zookeeper.test; a session
    // starts over TLS, without an x509 identity (no certificate was asked).
    let mut client = SClient::connect(&secure, certs.ca_pem(), &["-verify_ip", "127.0.0.1"]);
    start_session(&mut client).unwrap();
    let version = server.version().unwrap();
    if let Some(ids) = who_am_i(&mut client, version) {
        assert!(x509_ids(&ids).is_empty(), "{ids:?}");
        assert!(ids.contains(&("ip".into(), "127.0.0.1".into())), "{ids:?}");
    }
    drop(client);
    let mut client = SClient::connect(
        &secure,
        certs.ca_pem(),
        &["-verify_hostname", "zookeeper.test"],
    );
    start_session(&mut client).unwrap();
    drop(client);

    // A client that does not trust our CA refuses the server.
    let stderr = refused(SClient::connect(&secure, certs.other_ca_pem(), &[]));
    assert!(stderr.contains("certificate verify failed"), "{stderr}");
    // A name the certificate does not hold is refused too.
    let stderr = refused(SClient::connect(
        &secure,
        certs.ca_pem(),
        &["-verify_hostname", "elsewhere.test"],
    ));
    assert!(stderr.contains("hostname mismatch"), "{stderr}");

    // The TLS port survives a restart.
    server.restart().expect("restart");
    assert_eq!(server.secure_port(), Some(port));
    let mut client = SClient::connect(&secure, certs.ca_pem(), &[]);
    start_session(&mut client).unwrap();
}

#[test]
fn need_refuses_clients_without_an_accepted_certificate() {
    let certs = TlsCertificates::generate().expect("certificates");
    let server = start(ServerOptions::new().tls(&certs, ClientAuth::Need));
    let secure = server.secure_connect_string().unwrap();

    let stderr = refused(SClient::connect(&secure, certs.ca_pem(), &[]));
    assert!(stderr.contains("alert bad certificate"), "{stderr}");
    let stderr = refused(SClient::connect_as(
        &secure,
        certs.ca_pem(),
        certs.untrusted_client_cert_pem(),
        certs.untrusted_client_key_pem(),
    ));
    assert!(stderr.contains("alert certificate unknown"), "{stderr}");

    let mut client = SClient::connect_as(
        &secure,
        certs.ca_pem(),
        certs.client_cert_pem(),
        certs.client_key_pem(),
    );
    start_session(&mut client).unwrap();
    if let Some(ids) = who_am_i(&mut client, server.version().unwrap()) {
        assert_eq!(x509_ids(&ids), [certs.client_subject()], "{ids:?}");
    }
    assert_eq!(certs.client_subject(), "CN=zkrs-client,O=zkr");
}

#[test]
fn want_lets_anonymous_clients_in_and_names_certified_ones() {
    let certs = TlsCertificates::generate().expect("certificates");
    let server = start(ServerOptions::new().tls(&certs, ClientAuth::Want));
    let secure = server.secure_connect_string().unwrap();

    let mut anonymous = SClient::connect(&secure, certs.ca_pem(), &[]);
    start_session(&mut anonymous).unwrap();
    let version = server.version().unwrap();
    if let Some(ids) = who_am_i(&mut anonymous, version) {
        assert!(x509_ids(&ids).is_empty(), "{ids:?}");
    }

    let mut named = SClient::connect_as(
        &secure,
        certs.ca_pem(),
        certs.client_cert_pem(),
        certs.client_key_pem(),
    );
    start_session(&mut named).unwrap();
    if let Some(ids) = who_am_i(&mut named, version) {
        assert_eq!(x509_ids(&ids), [certs.client_subject()], "{ids:?}");
    }

    // A certificate from another CA fails the handshake even when optional.
    let stderr = refused(SClient::connect_as(
        &secure,
        certs.ca_pem(),
        certs.untrusted_client_cert_pem(),
        certs.untrusted_client_key_pem(),
    ));
    assert!(stderr.contains("alert certificate unknown"), "{stderr}");
}

/// ZooKeeper before 3.9 speaks TLS 1.2 only unless told otherwise (3.9 offers TLS 1.3 by
/// default, on a JDK that has it); the three lines documented on `ServerOptions::tls` give
/// the older ones TLS 1.3.
#[test]
fn tls_1_3_takes_three_config_lines() {
    let certs = TlsCertificates::generate().expect("certificates");
    let plain = start(ServerOptions::new().tls(&certs, ClientAuth::None));
    let version = plain.version().expect("the server's version");
    let mut client = SClient::connect(
        &plain.secure_connect_string().unwrap(),
        certs.ca_pem(),
        &["-tls1_3"],
    );
    if version.at_least(3, 9) {
        start_session(&mut client).unwrap_or_else(|e| panic!("{version}, TLS 1.3: {e}"));
    } else {
        let stderr = refused(client);
        assert!(
            stderr.contains("alert protocol version"),
            "{version}: {stderr}"
        );
    }
    drop(plain);

    let options = ServerOptions::new()
        .tls(&certs, ClientAuth::Want)
        .config("ssl.protocol", "TLSv1.3")
        .config("ssl.enabledProtocols", "TLSv1.3,TLSv1.2")
        .config(
            "ssl.ciphersuites",
            "TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384,\
             TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        );
    let server = start(options);
    let secure = server.secure_connect_string().unwrap();
    let (cert, key) = (certs.client_cert_pem(), certs.client_key_pem());
    let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());
    for version in ["-tls1_3", "-tls1_2"] {
        let mut client = SClient::connect(
            &secure,
            certs.ca_pem(),
            &[version, "-cert", cert, "-key", key],
        );
        start_session(&mut client).unwrap_or_else(|e| panic!("{version}: {e}"));
        if let Some(ids) = who_am_i(&mut client, server.version().unwrap()) {
            assert_eq!(
                x509_ids(&ids),
                [certs.client_subject()],
                "{version}: {ids:?}"
            );
        }
    }
}

#[test]
fn an_expired_server_certificate_is_refused() {
    let certs = TlsCertificates::generate().expect("certificates");
    let server = start(ServerOptions::new().tls_expired(&certs, ClientAuth::None));
    let secure = server.secure_connect_string().unwrap();
    let stderr = refused(SClient::connect(&secure, certs.ca_pem(), &[]));
    assert!(stderr.contains("certificate has expired"), "{stderr}");
}

#[test]
fn ensemble_members_serve_tls() {
    let certs = TlsCertificates::generate().expect("certificates");
    let cluster = TestingCluster::start_with(3, ServerOptions::new().tls(&certs, ClientAuth::Need))
        .expect("start a TLS ensemble");
    let all = cluster.secure_connect_string().expect("TLS ports");
    let mut seen = Vec::new();
    for i in 0..cluster.len() {
        let secure = cluster.member_secure_connect_string(i).unwrap();
        assert_ne!(cluster.member_secure_port(i), Some(cluster.member_port(i)));
        seen.push(secure.clone());
        let mut client = SClient::connect_as(
            &secure,
            certs.ca_pem(),
            certs.client_cert_pem(),
            certs.client_key_pem(),
        );
        start_session(&mut client).unwrap_or_else(|e| panic!("member {i}: {e}"));
        if let Some(ids) = who_am_i(&mut client, cluster.version(i).unwrap()) {
            assert_eq!(x509_ids(&ids), [certs.client_subject()], "{ids:?}");
        }
    }
    assert_eq!(all, seen.join(","));
}
