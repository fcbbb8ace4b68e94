//! Real Apache ZooKeeper servers for tests, examples and demos, like Apache
//! Curator's `TestingServer` and `TestingCluster`.
//!
//! Nothing is mocked: [`TestingServer`] and [`TestingCluster`] run the real
//! ZooKeeper server (3.9.5 from the jar cache by default; any version with
//! `ZKRS_TEST_ZOOKEEPER` or [`ServerOptions::version`]) in JVM
//! child processes on `127.0.0.1`, each in its own temporary folder, on free
//! ports. Dropping them kills the JVMs and deletes the folders, also when a
//! test panics; a watchdog kills the JVMs if the test process itself is
//! killed (see [orphans](crate::TestingServer#orphans)).
//!
//! ```no_run
//! use std::time::Duration;
//! use zkrs_testkit::{four_letter_word, TestingServer};
//!
//! let server = TestingServer::start()?;
//! let stat = four_letter_word(server.address(), "srvr", Duration::from_secs(2))?;
//! assert!(stat.contains("Mode: standalone"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Installing ZooKeeper
//!
//! Run `scripts/install-zookeeper.sh`: it installs java and Debian's
//! `zookeeper` (3.8.0), and fetches the default version (3.9.5) and Curator
//! from Maven Central into the jar cache ([`jar_cache`]);
//! `scripts/fetch-jars.sh zookeeper VERSION` fetches any other. Then
//! `ZKRS_TEST_ZOOKEEPER=3.7.2` (or `debian`) chooses the server every test
//! starts. `ZKR_ZOOKEEPER_CLASSPATH` points at a complete classpath instead,
//! e.g. `/opt/zookeeper/lib/*` from an upstream tarball; `ZKR_JAVA` selects
//! the java binary. See [`Installation`] and [`Distribution`].
//!
//! # TLS
//!
//! [`TlsCertificates::generate`] makes a CA, server and client certificates
//! (and bad ones: expired, signed by another CA) with the `openssl` command;
//! [`ServerOptions::tls`] gives a server a second, TLS-only port
//! (`secureClientPort`, served by ZooKeeper's Netty connection factory) next
//! to its plain one:
//!
//! ```no_run
//! use zkrs_testkit::{ClientAuth, ServerOptions, TestingServer, TlsCertificates};
//!
//! let certs = TlsCertificates::generate()?;
//! let server = TestingServer::start_with(ServerOptions::new().tls(&certs, ClientAuth::Need))?;
//! let tls_address = server.secure_connect_string().expect("a TLS port");
//! // Connect there trusting certs.ca_pem(), presenting certs.client_cert_pem()
//! // and certs.client_key_pem(): the session is x509:CN=zkrs-client,O=zkr.
//! # drop(tls_address);
//! # Ok::<(), zkrs_testkit::Error>(())
//! ```
//!
//! # Kerberos
//!
//! [`KerberosRealm::start`] runs a real MIT `krb5kdc` for the realm
//! `ZKR.TEST` in a temporary folder and makes principals, keytabs and ticket
//! caches; [`ServerOptions::kerberos`] makes a server authenticate clients
//! with GSSAPI against it:
//!
//! ```no_run
//! use zkrs_testkit::{KerberosRealm, ServerOptions, TestingServer};
//!
//! let realm = KerberosRealm::start()?;
//! let keytab = realm.add_principal_with_keytab("zookeeper/localhost")?;
//! let options = ServerOptions::new().kerberos(&realm, &keytab, "zookeeper/localhost");
//! let server = TestingServer::start_with(options)?;
//! # drop(server);
//! # Ok::<(), zkrs_testkit::Error>(())
//! ```
//!
//! # Platform
//!
//! Unix only: processes are paused, resumed and stopped with signals sent by
//! `sh`'s `kill` builtin.

#![warn(missing_docs)]
// The counting allocator (measure.rs) implements `GlobalAlloc`, an unsafe trait; nothing
// else may use unsafe code.
#![deny(unsafe_code)]
// On docs.rs: label each item with the cargo feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod cluster;
mod config;
mod error;
pub mod faults;
mod four_letter;
mod instance;
mod java_programs;
mod kerberos;
mod listen;
mod locate;
pub mod measure;
mod membership;
mod model_server;
mod options;
mod ports;
mod process;
mod proxy;
pub mod scripted;
mod server;
mod stopped;
mod tempdir;
mod tls;
mod versions;

pub use cluster::TestingCluster;
pub use config::SUPERUSER;
pub use error::{Error, Result};
pub use faults::{Fault, FaultRecord, FaultSchedule, FaultScheduleBuilder};
pub use four_letter::{four_letter_word, server_mode, Mode};
pub use java_programs::{JavaPrograms, CURATOR_CLASSPATH_ENV, JAVAC_ENV};
pub use kerberos::{KerberosRealm, KRB5_PATH_ENV};
pub use locate::{Installation, CLASSPATH_ENV, DEBIAN_SERVER_JAR, JAVA_ENV};
pub use options::ServerOptions;
pub use ports::free_port;
pub use proxy::{Direction, FaultyProxy};
pub use scripted::ScriptedServer;
pub use server::TestingServer;
pub use tempdir::TempDir;
pub use tls::{ClientAuth, TlsCertificates, OPENSSL_ENV};
pub use versions::{
    jar_cache, Distribution, ServerVersion, CURATOR_ENV, DEFAULT_CURATOR, DEFAULT_ZOOKEEPER,
    JAR_CACHE_ENV, ZOOKEEPER_ENV,
};

#[cfg(test)]
mod tests {
    /// Servers can be shared between threads (e.g. in an `Arc`).
    #[test]
    fn handles_are_send_and_sync() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<crate::TestingServer>();
        send_sync::<crate::TestingCluster>();
        send_sync::<crate::Error>();
        send_sync::<crate::TlsCertificates>();
        send_sync::<crate::ServerOptions>();
        send_sync::<crate::KerberosRealm>();
    }
}
