//! The realm against a real KDC, and its configuration files.

use std::fs;
use std::net::{Ipv4Addr, TcpStream};
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use super::conf_files::{kdc_conf_text, krb5_conf_text, KDC_LOG};
use super::principals::quote;
use super::realm::random_password;
use super::tools::{Tools, KRB5_PATH_ENV};
use super::KerberosRealm;
use crate::error::Error;
use crate::listen::tcp_listeners;
use crate::tempdir::TempDir;

/// The longest any wait in these tests may take.
const DEADLINE: Duration = Duration::from_secs(20);

fn realm() -> KerberosRealm {
    KerberosRealm::start().unwrap_or_else(|e| panic!("starting the realm: {e}"))
}

#[test]
fn the_realm_starts_and_its_files_say_so() {
    let realm = realm();
    assert_eq!(realm.realm(), "ZKR.TEST");
    assert_eq!(realm.kdc_address().ip(), Ipv4Addr::LOCALHOST);
    TcpStream::connect_timeout(&realm.kdc_address(), DEADLINE).expect("the KDC listens");
    let port = realm.kdc_address().port();
    assert_eq!(tcp_listeners(port).unwrap_or(1), 1, "one listener only");
    let conf = fs::read_to_string(realm.krb5_conf()).unwrap();
    for expected in [
        " default_realm = ZKR.TEST\n",
        " dns_lookup_kdc = false\n",
        " rdns = false\n",
        " dns_canonicalize_hostname = false\n",
        " udp_preference_limit = 1\n",
        &format!("  kdc = 127.0.0.1:{port}\n"),
        " localhost = ZKR.TEST\n",
        " 127.0.0.1 = ZKR.TEST\n",
        &format!(
            " default_ccache_name = FILE:{}/ccache\n",
            realm.dir().display()
        ),
    ] {
        assert!(conf.contains(expected), "{expected:?} missing from\n{conf}");
    }
    let kdc = fs::read_to_string(realm.kdc_conf()).unwrap();
    assert!(kdc.contains(&format!("kdc_tcp_ports = {port}\n")), "{kdc}");
    assert!(realm.dir().join("principal").is_file(), "no database");
    assert!(realm.dir().join("stash").is_file(), "no stash");
    assert_eq!(
        realm.full_principal("zookeeper/localhost"),
        "zookeeper/localhost@ZKR.TEST"
    );
    assert_eq!(realm.full_principal("a@B.C"), "a@B.C");

    // Drop kills the KDC and removes the folder.
    let dir = realm.dir().to_path_buf();
    let pid = realm.kdc.pid();
    drop(realm);
    assert!(!dir.exists());
    // The pid may be reused by now, but not with our folder in its
    // command line (`-P <dir>/krb5kdc.pid`).
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let cmdline = String::from_utf8_lossy(&cmdline);
    assert!(
        !cmdline.contains(&*dir.to_string_lossy()),
        "the KDC {pid} lives on: {cmdline}"
    );
}

#[test]
fn a_keytab_gets_a_ticket_and_another_principals_does_not() {
    let realm = realm();
    let alice = realm.add_principal_with_keytab("alice").unwrap();
    let service = realm
        .add_principal_with_keytab("zookeeper/localhost")
        .unwrap();
    assert_eq!(alice, realm.dir().join("alice.keytab"));
    assert_eq!(service, realm.dir().join("zookeeper_localhost.keytab"));

    let ccache = realm.dir().join("alice.ccache");
    realm.kinit("alice", &alice, &ccache, None).unwrap();
    let listed = realm.klist(&ccache).unwrap();
    assert!(
        listed.contains("Default principal: alice@ZKR.TEST"),
        "{listed}"
    );
    assert!(listed.contains("krbtgt/ZKR.TEST@ZKR.TEST"), "{listed}");
    assert!(realm.has_valid_ticket(&ccache).unwrap());
    // The KDC issued it (not something cached elsewhere).
    let log = fs::read_to_string(realm.dir().join(KDC_LOG)).unwrap();
    assert!(
        log.contains("alice@ZKR.TEST for krbtgt/ZKR.TEST@ZKR.TEST"),
        "{log}"
    );

    // The service's keytab holds no key of alice.
    let other = realm.dir().join("other.ccache");
    let err = realm
        .kinit("alice", &service, &other, None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("kinit") && err.contains("alice"), "{err}");
    assert!(!realm.has_valid_ticket(&other).unwrap());

    // The principal exists already: kadmin.local's failure is noticed.
    let err = realm
        .add_principal_with_keytab("alice")
        .unwrap_err()
        .to_string();
    assert!(err.contains("already exists"), "{err}");
    // A name that maps to the same file gets another one.
    let twin = realm
        .add_principal_with_keytab("zookeeper_localhost")
        .unwrap();
    assert_eq!(twin, realm.dir().join("zookeeper_localhost-2.keytab"));
}

#[test]
fn passwords_and_short_lifetimes() {
    let realm = realm();
    realm
        .add_principal_with_password("bob", "a \"quoted\" pass")
        .unwrap();
    let ccache = realm.dir().join("bob.ccache");
    let err = realm
        .kinit_with_password("bob", "wrong", &ccache, None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("Password incorrect"), "{err}");

    let lifetime = Duration::from_secs(2);
    let asked = Instant::now();
    realm
        .kinit_with_password("bob", "a \"quoted\" pass", &ccache, Some(lifetime))
        .unwrap();
    assert!(realm.has_valid_ticket(&ccache).unwrap());
    // klist: "MM/DD/YY HH:MM:SS  MM/DD/YY HH:MM:SS  krbtgt/ZKR.TEST@ZKR.TEST"
    let listed = realm.klist(&ccache).unwrap();
    let line = listed
        .lines()
        .find(|l| l.ends_with("krbtgt/ZKR.TEST@ZKR.TEST"))
        .unwrap_or_else(|| panic!("no TGT in\n{listed}"));
    let secs = |hms: &str| -> i64 {
        hms.split(':')
            .map(|n| n.parse::<i64>().unwrap())
            .fold(0, |acc, n| acc * 60 + n)
    };
    let fields: Vec<&str> = line.split_whitespace().collect();
    let span = (secs(fields[3]) - secs(fields[1])).rem_euclid(24 * 3600);
    assert_eq!(span, 2, "{line}");
    // It expires: wait for it, within a deadline.
    while realm.has_valid_ticket(&ccache).unwrap() {
        assert!(asked.elapsed() < DEADLINE, "the 2 s ticket never expired");
        thread::sleep(Duration::from_millis(50));
    }
    assert!(asked.elapsed() >= Duration::from_secs(1));

    assert!(matches!(
        realm.kinit("bob", Path::new("/x"), &ccache, Some(Duration::ZERO)),
        Err(Error::InvalidArgument { .. })
    ));
}

#[test]
fn bad_names_are_refused_before_kadmin() {
    let realm = realm();
    for bad in ["", "a b", "a\"b", "-randkey", "x'y", "a\nb"] {
        assert!(
            matches!(
                realm.add_principal_with_keytab(bad),
                Err(Error::InvalidArgument { .. })
            ),
            "{bad:?}"
        );
    }
    assert!(matches!(
        realm.add_principal_with_password("carol", "two\nlines"),
        Err(Error::InvalidArgument { .. })
    ));
}

#[test]
fn missing_commands_say_how_to_install_them() {
    let empty = TempDir::new().unwrap();
    let err = Tools::find_in(&[empty.path().to_path_buf()], KRB5_PATH_ENV)
        .unwrap_err()
        .to_string();
    assert!(err.contains("krb5kdc"), "{err}");
    assert!(err.contains("scripts/install-zookeeper.sh"), "{err}");
    assert!(err.contains("ZKR_KRB5_PATH"), "{err}");
}

#[test]
fn configuration_files() {
    let kdc = kdc_conf_text(Path::new("/r"), 88);
    for expected in [
        "database_name = /r/principal\n",
        "key_stash_file = /r/stash\n",
        "acl_file = /r/kadm5.acl\n",
        "kdc_listen = 127.0.0.1:88\n",
        "kdc_tcp_listen = 127.0.0.1:88\n",
        "kdc_ports = 88\n",
        "kdc_tcp_ports = 88\n",
        "max_life = 7d\n",
        " ZKR.TEST = {\n",
        "kdc = STDERR\n",
    ] {
        assert!(kdc.contains(expected), "{expected:?} missing from\n{kdc}");
    }
    let krb5 = krb5_conf_text(Path::new("/r"), 88);
    assert!(
        krb5.ends_with(
            "[realms]\n ZKR.TEST = {\n  kdc = 127.0.0.1:88\n }\n\
             [domain_realm]\n localhost = ZKR.TEST\n 127.0.0.1 = ZKR.TEST\n"
        ),
        "{krb5}"
    );
    assert_ne!(random_password(), random_password());
    assert_eq!(random_password().len(), 32);
    assert_eq!(quote("a\"b"), "\"a\"\"b\"");
}
