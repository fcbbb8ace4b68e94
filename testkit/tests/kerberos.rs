//! ZooKeeper servers that authenticate clients with Kerberos (GSSAPI) against
//! a real MIT KDC ([`KerberosRealm`]), checked with ZooKeeper's own Java CLI
//! (`org.apache.zookeeper.ZooKeeperMain`) as the client: its `whoami` shows the
//! identity the server gave the session.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use zkrs_testkit::{
    four_letter_word, Error, Installation, KerberosRealm, ServerOptions, TestingServer,
};

/// The longest any single wait may take.
const DEADLINE: Duration = Duration::from_secs(60);

fn realm() -> KerberosRealm {
    KerberosRealm::start().unwrap_or_else(|e| panic!("starting the realm: {e}"))
}

/// A realm with the service principal `zookeeper/localhost`, and a server
/// that logs in as it.
fn kerberos_server(require_sasl: bool) -> (KerberosRealm, TestingServer) {
    let realm = realm();
    let keytab = realm
        .add_principal_with_keytab("zookeeper/localhost")
        .unwrap();
    let options = ServerOptions::new()
        .kerberos(&realm, &keytab, "zookeeper/localhost")
        .require_sasl(require_sasl);
    let server = TestingServer::start_with(options).unwrap_or_else(|e| panic!("{e}"));
    (realm, server)
}

#[test]
fn a_kerberos_server_logs_in_to_the_kdc_and_serves() {
    let (realm, server) = kerberos_server(true);
    let answer = four_letter_word(server.address(), "ruok", Duration::from_secs(5)).unwrap();
    assert_eq!(answer, "imok");
    assert_eq!(
        server.options().kerberos_principal(),
        Some("zookeeper/localhost@ZKR.TEST")
    );
    // ZooKeeper logged in with the keytab, through this realm's KDC.
    let log = fs::read_to_string(server.log_path()).unwrap();
    assert!(log.contains("Server successfully logged in."), "{log}");
    let kdc_log = fs::read_to_string(realm.dir().join("krb5kdc.log")).unwrap();
    assert!(
        kdc_log.contains("zookeeper/localhost@ZKR.TEST for krbtgt/ZKR.TEST@ZKR.TEST"),
        "{kdc_log}"
    );
    let cfg = fs::read_to_string(server.temp_dir().join("zoo.cfg")).unwrap();
    for line in [
        "authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider\n",
        "kerberos.removeHostFromPrincipal=true\n",
        "kerberos.removeRealmFromPrincipal=true\n",
        "sessionRequireClientSASLAuth=true\n",
    ] {
        assert!(cfg.contains(line), "{line:?} missing from\n{cfg}");
    }
    let jaas = fs::read_to_string(server.temp_dir().join("jaas.conf")).unwrap();
    assert!(
        jaas.contains("principal=\"zookeeper/localhost@ZKR.TEST\";"),
        "{jaas}"
    );
}

#[test]
fn a_server_whose_keytab_lacks_its_principal_does_not_start() {
    let realm = realm();
    let other = realm.add_principal_with_keytab("alice").unwrap();
    let options = ServerOptions::new()
        .kerberos(&realm, &other, "zookeeper/localhost")
        .startup_timeout(Duration::from_secs(30));
    // ZooKeeper's JAAS login fails, and it exits saying so.
    let err = TestingServer::start_with(options).unwrap_err();
    assert!(matches!(err, Error::ServerExited { .. }), "{err}");
    assert!(
        err.to_string().contains("SASL configuration did not allow"),
        "{err}"
    );
}

#[test]
fn kerberos_and_digest_users_cannot_be_combined() {
    let realm = realm();
    let keytab = realm
        .add_principal_with_keytab("zookeeper/localhost")
        .unwrap();
    let options = ServerOptions::new()
        .kerberos(&realm, &keytab, "zookeeper/localhost")
        .sasl_digest_user("bob", "bob-secret");
    match TestingServer::start_with(options) {
        Err(Error::InvalidArgument { message }) => {
            assert!(message.contains("cannot be combined"), "{message}")
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

/// Runs ZooKeeper's Java CLI as `principal` (keys from `keytab`) against
/// `connect` (with `jvm_args` too), sends `whoami`, and returns what it
/// printed.
fn java_whoami(
    realm: &KerberosRealm,
    connect: &str,
    principal: &str,
    keytab: &Path,
    jvm_args: &[&str],
) -> String {
    let install = Installation::resolve(None, None).unwrap();
    let name = principal.replace('/', "_");
    let jaas = realm.dir().join(format!("{name}-client-jaas.conf"));
    fs::write(
        &jaas,
        format!(
            "Client {{\n  com.sun.security.auth.module.Krb5LoginModule required\n  \
             useKeyTab=true\n  keyTab=\"{}\"\n  storeKey=true\n  useTicketCache=false\n  \
             principal=\"{}\";\n}};\n",
            keytab.display(),
            realm.full_principal(principal)
        ),
    )
    .unwrap();
    let log4j = realm.dir().join("client-log4j.properties");
    fs::write(
        &log4j,
        "log4j.rootLogger=WARN, E\nlog4j.appender.E=org.apache.log4j.ConsoleAppender\n\
         log4j.appender.E.Target=System.err\nlog4j.appender.E.layout=org.apache.log4j.PatternLayout\n\
         log4j.appender.E.layout.ConversionPattern=%-5p %c{1} - %m%n\n",
    )
    .unwrap();
    let out_path = realm.dir().join(format!("{name}-client.out"));
    let out = fs::File::create(&out_path).unwrap();
    let mut child = Command::new(install.java())
        .arg("-Djava.net.preferIPv4Stack=true")
        .arg(format!("-Dlog4j.configuration=file:{}", log4j.display()))
        .arg(format!(
            "-Djava.security.auth.login.config={}",
            jaas.display()
        ))
        .arg(format!(
            "-Djava.security.krb5.conf={}",
            realm.krb5_conf().display()
        ))
        .args(jvm_args)
        .arg("-cp")
        .arg(install.classpath())
        .args(["org.apache.zookeeper.ZooKeeperMain", "-server", connect])
        .stdin(Stdio::piped())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        // `whoami` (3.7 on), and on every version the ids an `auth` ACL expands to: a node
        // made with it lists the session's authenticated ids (`'sasl,'alice`).
        static NODES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let node = format!(
            "/who-{}-{}",
            std::process::id(),
            NODES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let script = format!("whoami\ncreate {node} x auth::cdrwa\ngetAcl {node}\nquit\n");
        stdin.write_all(script.as_bytes()).unwrap();
    }
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "ZooKeeperMain did not exit within {DEADLINE:?}:\n{}",
                fs::read_to_string(&out_path).unwrap_or_default()
            );
        }
        thread::sleep(Duration::from_millis(50));
    }
    fs::read_to_string(&out_path).unwrap()
}

/// Whether the Java client's session was `sasl:<name>`: its `auth` ACL says so on every
/// version, and `whoami` too from 3.7 on.
fn authenticated_as(printed: &str, name: &str, server: &TestingServer) -> bool {
    let acl = printed.contains(&format!("'sasl,'{name}\n"));
    let whoami = printed.contains(&format!("\nsasl: {name}\n"));
    acl && (whoami || !server.version().unwrap().at_least(3, 7))
}

#[test]
fn a_java_client_authenticates_with_its_keytab() {
    let (realm, server) = kerberos_server(true);
    let alice = realm.add_principal_with_keytab("alice").unwrap();
    let carol = realm.add_principal_with_keytab("carol/localhost").unwrap();

    // The client names the service after the host it dials: localhost.
    let connect = format!("localhost:{}", server.port());
    let printed = java_whoami(&realm, &connect, "alice", &alice, &[]);
    assert!(authenticated_as(&printed, "alice", &server), "{printed}");

    // Dialling 127.0.0.1, Java's client still asks for zookeeper/localhost
    // (it turns the address back into a host name); the server strips the
    // host and the realm from the client's principal.
    let printed = java_whoami(
        &realm,
        &server.connect_string(),
        "carol/localhost",
        &carol,
        &[],
    );
    assert!(authenticated_as(&printed, "carol", &server), "{printed}");

    // The server accepts tickets for its own principal only: a client that
    // asks for zookeeper/127.0.0.1 (a principal the KDC knows) is refused.
    realm
        .add_principal_with_keytab("zookeeper/127.0.0.1")
        .unwrap();
    let printed = java_whoami(
        &realm,
        &server.connect_string(),
        "alice",
        &alice,
        &["-Dzookeeper.server.principal=zookeeper/127.0.0.1@ZKR.TEST"],
    );
    assert!(printed.contains("AuthFailed"), "{printed}");
    assert!(!printed.contains("\nsasl: alice\n"), "{printed}");
}

#[test]
fn a_server_named_after_its_address_serves_clients_that_ask_for_that_name() {
    let realm = realm();
    let keytab = realm
        .add_principal_with_keytab("zookeeper/127.0.0.1")
        .unwrap();
    let server = TestingServer::start_with(ServerOptions::new().kerberos(
        &realm,
        &keytab,
        "zookeeper/127.0.0.1",
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let alice = realm.add_principal_with_keytab("alice").unwrap();
    // What a client that does not canonicalize 127.0.0.1 asks for.
    let printed = java_whoami(
        &realm,
        &server.connect_string(),
        "alice",
        &alice,
        &["-Dzookeeper.server.principal=zookeeper/127.0.0.1@ZKR.TEST"],
    );
    assert!(authenticated_as(&printed, "alice", &server), "{printed}");
}
