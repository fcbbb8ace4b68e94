//! [`KerberosRealm`]: the realm's folder, its database and its running KDC; what the realm
//! is asked for (principals, tickets) is in `principals.rs` and `tickets.rs`.

use std::collections::hash_map::RandomState;
use std::fmt::Write as _;
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use super::conf_files::{
    kdc_conf_text, krb5_conf_text, write, ACL_FILE, KDC_CONF, KDC_LOG, KRB5_CONF, REALM,
};
use super::kdc::{log_tail, start_kdc, Started};
use super::tools::{Env, Tools};
use crate::error::{Error, Result};
use crate::ports::free_port;
use crate::process::JvmProcess;
use crate::tempdir::TempDir;

/// How many times a start is retried when the KDC's port turns out to be
/// shared (see [`KerberosRealm::start`]).
const PORT_ATTEMPTS: usize = 3;

/// A Kerberos realm, `ZKR.TEST`, served by a real MIT `krb5kdc` on a free
/// port of `127.0.0.1`, in a new temporary folder. Dropping it kills the KDC
/// (and waits for it) and deletes the folder; like a server's JVM, the KDC
/// has a watchdog that kills it if the test process dies without dropping
/// it.
///
/// Nothing here reads `/etc/krb5.conf` or the system's KDC configuration:
/// every command this type runs gets `KRB5_CONFIG=<dir>/krb5.conf` and
/// `KRB5_KDC_PROFILE=<dir>/kdc.conf` in its environment. Give
/// [`krb5_conf`](Self::krb5_conf) to the Kerberos clients of a test the same
/// way (`KRB5_CONFIG` for MIT's libraries, `-Djava.security.krb5.conf` for
/// Java). That `krb5.conf`:
///
/// ```text
/// [libdefaults]
///  default_realm = ZKR.TEST
///  dns_lookup_kdc = false
///  dns_lookup_realm = false
///  rdns = false
///  dns_canonicalize_hostname = false
///  udp_preference_limit = 1            # TCP only
///  clockskew = 1                       # an expired ticket is refused 1 s after its end
///  default_ccache_name = FILE:<dir>/ccache
/// [realms]
///  ZKR.TEST = {
///   kdc = 127.0.0.1:<port>
///  }
/// [domain_realm]
///  localhost = ZKR.TEST
///  127.0.0.1 = ZKR.TEST
/// ```
///
/// Tickets live at most 7 days (renewable for 14); [`kinit`](Self::kinit)
/// can ask for much less, down to one second.
///
/// The MIT commands are looked for in [`KRB5_PATH_ENV`](crate::KRB5_PATH_ENV) when set, else on
/// the `PATH` and in `/usr/sbin`, `/usr/local/sbin`, `/sbin`;
/// `scripts/install-zookeeper.sh` installs them (Debian's `krb5-kdc`,
/// `krb5-admin-server` and `krb5-user`). Heimdal's commands are not
/// supported.
///
/// ```no_run
/// use zkrs_testkit::{KerberosRealm, ServerOptions, TestingServer};
///
/// let realm = KerberosRealm::start()?;
/// let service_keytab = realm.add_principal_with_keytab("zookeeper/localhost")?;
/// let alice_keytab = realm.add_principal_with_keytab("alice")?;
/// let server = TestingServer::start_with(ServerOptions::new().kerberos(
///     &realm,
///     &service_keytab,
///     "zookeeper/localhost",
/// ))?;
/// // A ticket cache for a client that reads one (KRB5CCNAME=FILE:<path>).
/// let ccache = realm.dir().join("alice.ccache");
/// realm.kinit("alice", &alice_keytab, &ccache, None)?;
/// // A client asking for the service `zookeeper/localhost` now authenticates as
/// // `sasl:alice` (the server strips host and realm from principals).
/// # drop(server);
/// # Ok::<(), zkrs_testkit::Error>(())
/// ```
#[derive(Debug)]
pub struct KerberosRealm {
    // Field order matters: the KDC dies before its folder is deleted.
    pub(super) kdc: JvmProcess,
    pub(super) tools: Tools,
    pub(super) port: u16,
    pub(super) krb5_conf: PathBuf,
    pub(super) kdc_conf: PathBuf,
    /// Serialises `kadmin.local`: one database writer at a time.
    pub(super) admin: Mutex<()>,
    pub(super) dir: TempDir,
}

impl KerberosRealm {
    /// Makes the realm `ZKR.TEST` in a new temporary folder and starts its
    /// KDC: writes `kdc.conf` (database, stash and ACL in the folder, the KDC
    /// on one free port of `127.0.0.1` for UDP and TCP) and `krb5.conf`,
    /// creates the database (`kdb5_util -r ZKR.TEST create -s -P <random
    /// master password>`), starts `krb5kdc -n` (its output goes to
    /// `krb5kdc.log` in the folder) and returns once it accepts TCP
    /// connections. Takes a few tens of milliseconds.
    ///
    /// `krb5kdc` binds its port with `SO_REUSEPORT`, so a second KDC that
    /// happened to pick the same port would share it silently; the start
    /// checks that the KDC is the port's only listener and otherwise retries
    /// on another port.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when a command is missing (the message names
    /// `scripts/install-zookeeper.sh`) or fails (the message holds the
    /// command and what it printed), or when the KDC does not listen within
    /// 20 s; [`Error::ServerExited`] when the KDC exits during startup. Both
    /// quote the end of the KDC's log.
    pub fn start() -> Result<Self> {
        let tools = Tools::find()?;
        let dir = TempDir::new().map_err(|e| Error::io("creating a temporary folder", e))?;
        let krb5_conf = dir.path().join(KRB5_CONF);
        let kdc_conf = dir.path().join(KDC_CONF);
        write(&dir.path().join(ACL_FILE), "")?;
        let mut attempt = 1;
        loop {
            let port = free_port().map_err(|e| Error::io("finding a free port", e))?;
            write(&krb5_conf, &krb5_conf_text(dir.path(), port))?;
            write(&kdc_conf, &kdc_conf_text(dir.path(), port))?;
            let env = Env {
                krb5_conf: &krb5_conf,
                kdc_conf: &kdc_conf,
            };
            if attempt == 1 {
                // The database does not depend on the port: made once.
                let master = random_password();
                let args = ["-r", REALM, "create", "-s", "-P", &master];
                tools.run(&tools.kdb5_util, &args, None, env)?;
            }
            match start_kdc(&tools, dir.path(), port, env)? {
                Started::Serving(kdc) => {
                    return Ok(KerberosRealm {
                        kdc,
                        tools,
                        port,
                        krb5_conf,
                        kdc_conf,
                        admin: Mutex::new(()),
                        dir,
                    })
                }
                Started::PortShared(mut kdc) if attempt < PORT_ATTEMPTS => {
                    let _ = kdc.kill();
                    attempt += 1;
                }
                Started::PortShared(mut kdc) => {
                    let _ = kdc.kill();
                    return Err(Error::io(
                        format!("starting krb5kdc on 127.0.0.1:{port}"),
                        io::Error::new(
                            io::ErrorKind::AddrInUse,
                            format!(
                                "{PORT_ATTEMPTS} ports in a row were shared with another \
                                 listener; last lines of {}:\n{}",
                                dir.path().join(KDC_LOG).display(),
                                log_tail(&dir.path().join(KDC_LOG))
                            ),
                        ),
                    ));
                }
            }
        }
    }

    /// The realm's name, `ZKR.TEST`.
    pub fn realm(&self) -> &str {
        REALM
    }

    /// The `krb5.conf` for clients of this realm (`KRB5_CONFIG`,
    /// `-Djava.security.krb5.conf`).
    pub fn krb5_conf(&self) -> &Path {
        &self.krb5_conf
    }

    /// The KDC's configuration (`KRB5_KDC_PROFILE`), for `kadmin.local` and
    /// `kdb5_util` commands of your own.
    pub fn kdc_conf(&self) -> &Path {
        &self.kdc_conf
    }

    /// Where the KDC serves, UDP and TCP: `127.0.0.1:<port>`.
    pub fn kdc_address(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// The realm's temporary folder (configuration, database, keytabs, the
    /// KDC's log `krb5kdc.log`), deleted on drop. A convenient place for the
    /// ticket caches of a test.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `principal` with `@ZKR.TEST` appended, unless it already names a
    /// realm: `zookeeper/localhost` becomes `zookeeper/localhost@ZKR.TEST`.
    pub fn full_principal(&self, principal: &str) -> String {
        if principal.contains('@') {
            principal.to_string()
        } else {
            format!("{principal}@{REALM}")
        }
    }

    pub(super) fn env(&self) -> Env<'_> {
        Env {
            krb5_conf: &self.krb5_conf,
            kdc_conf: &self.kdc_conf,
        }
    }
}

impl Drop for KerberosRealm {
    fn drop(&mut self) {
        // Never panic here: this may run while a test unwinds.
        let _ = self.kdc.kill();
    }
}

/// A master password nobody needs to know: 32 hex digits from std's random
/// hash keys, the time and the pid.
pub(super) fn random_password() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut out = String::new();
    for round in 0..2u32 {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u128(nanos);
        hasher.write_u32(std::process::id());
        hasher.write_u32(round);
        let _ = write!(out, "{:016x}", hasher.finish());
    }
    out
}
