//! A throw-away MIT Kerberos realm: a real `krb5kdc` on a free port of
//! `127.0.0.1`, its database, principals and keytabs in a temporary folder,
//! for GSSAPI (Kerberos) SASL tests against ZooKeeper servers started with
//! [`ServerOptions::kerberos`](crate::ServerOptions::kerberos).

use std::collections::hash_map::RandomState;
use std::env;
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read, Seek, SeekFrom, Write as _};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};
use crate::listen::{listens, tcp_listeners};
use crate::ports::free_port;
use crate::process::JvmProcess;
use crate::tempdir::TempDir;

/// Environment variable holding a `:`-separated list of folders where
/// [`KerberosRealm`] looks for the MIT Kerberos commands (`krb5kdc`,
/// `kdb5_util`, `kadmin.local`, `kinit`, `klist`) instead of the default: the
/// `PATH`, then `/usr/sbin`, `/usr/local/sbin` and `/sbin` (Debian puts the
/// KDC's commands in `/usr/sbin`, which is often not on a user's `PATH`).
pub const KRB5_PATH_ENV: &str = "ZKR_KRB5_PATH";

/// The realm every [`KerberosRealm`] serves.
const REALM: &str = "ZKR.TEST";

/// Folders searched after the `PATH` when [`KRB5_PATH_ENV`] is not set.
const SBIN_DIRS: [&str; 3] = ["/usr/sbin", "/usr/local/sbin", "/sbin"];

/// Files in the realm's folder.
const KDC_CONF: &str = "kdc.conf";
const KRB5_CONF: &str = "krb5.conf";
const KDC_LOG: &str = "krb5kdc.log";
const KDC_PID: &str = "krb5kdc.pid";
const ACL_FILE: &str = "kadm5.acl";

/// How long [`KerberosRealm::start`] waits for the KDC to listen.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(20);

/// How many times a start is retried when the KDC's port turns out to be
/// shared (see [`KerberosRealm::start`]).
const PORT_ATTEMPTS: usize = 3;

/// How many log lines startup errors quote.
const LOG_TAIL_LINES: usize = 20;

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
/// The MIT commands are looked for in [`KRB5_PATH_ENV`] when set, else on
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
    kdc: JvmProcess,
    tools: Tools,
    port: u16,
    krb5_conf: PathBuf,
    kdc_conf: PathBuf,
    /// Serialises `kadmin.local`: one database writer at a time.
    admin: Mutex<()>,
    dir: TempDir,
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

    /// Creates `principal` with a random key (`kadmin.local -q "addprinc
    /// -randkey <principal>"`) and writes its keys into a new keytab in the
    /// realm's folder (`ktadd -k <dir>/<principal, / as _>.keytab
    /// <principal>`), whose path is returned. The realm is appended by
    /// `kadmin.local`: give `zookeeper/localhost` or `alice`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an empty name or one with whitespace,
    /// quotes or control characters; [`Error::Io`] when `kadmin.local` fails
    /// (e.g. the principal exists already).
    pub fn add_principal_with_keytab(&self, principal: &str) -> Result<PathBuf> {
        check_principal(principal)?;
        let _admin = self.admin();
        self.kadmin(&format!("addprinc -randkey {principal}"), "\" created.")?;
        let keytab = self.new_keytab_path(principal);
        let keytab_arg = quote(path_str(&keytab)?);
        self.kadmin(
            &format!("ktadd -k {keytab_arg} {principal}"),
            "added to keytab",
        )?;
        Ok(keytab)
    }

    /// Creates `principal` with a password (`kadmin.local -q "addprinc -pw
    /// <password> <principal>"`), for clients that log in with one
    /// ([`kinit_with_password`](Self::kinit_with_password)).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a bad name (see
    /// [`add_principal_with_keytab`](Self::add_principal_with_keytab)) or an
    /// empty password or one with a line break; [`Error::Io`] when
    /// `kadmin.local` fails.
    pub fn add_principal_with_password(&self, principal: &str, password: &str) -> Result<()> {
        check_principal(principal)?;
        if password.is_empty() || password.contains(['\n', '\r', '\0']) {
            return Err(Error::InvalidArgument {
                message: "a Kerberos password must be non-empty and on one line".to_string(),
            });
        }
        let _admin = self.admin();
        self.kadmin(
            &format!("addprinc -pw {} {principal}", quote(password)),
            "\" created.",
        )
    }

    /// Gets a ticket-granting ticket for `principal` with the keys in
    /// `keytab` and stores it in the ticket cache file `ccache` (created or
    /// replaced): `kinit -k -t <keytab> -c FILE:<ccache> [-l <secs>s]
    /// <principal>`. Clients read the cache through
    /// `KRB5CCNAME=FILE:<ccache>`.
    ///
    /// `lifetime` (default: one day) is rounded up to whole seconds. MIT's
    /// KDC honours short ones exactly, down to one second (checked with
    /// krb5 1.20: `-l 1s` gives a ticket that expires one second after it was
    /// issued), so an expiring ticket needs no special principal; the KDC
    /// caps lifetimes at 7 days.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a bad name or a zero lifetime;
    /// [`Error::Io`] when `kinit` fails, e.g. because `keytab` holds no key
    /// of `principal` (`Keytab contains no suitable keys`) or stale ones.
    pub fn kinit(
        &self,
        principal: &str,
        keytab: &Path,
        ccache: &Path,
        lifetime: Option<Duration>,
    ) -> Result<()> {
        check_principal(principal)?;
        let mut args: Vec<OsString> = vec!["-k".into(), "-t".into(), keytab.into()];
        args.extend(ccache_args(ccache));
        args.extend(lifetime_args(lifetime)?);
        args.push(principal.into());
        self.tools.run(&self.tools.kinit, &args, None, self.env())?;
        Ok(())
    }

    /// Like [`kinit`](Self::kinit), with a password instead of a keytab (fed
    /// to `kinit` on its standard input).
    ///
    /// # Errors
    ///
    /// As for [`kinit`](Self::kinit); a wrong password fails with `Password
    /// incorrect`.
    pub fn kinit_with_password(
        &self,
        principal: &str,
        password: &str,
        ccache: &Path,
        lifetime: Option<Duration>,
    ) -> Result<()> {
        check_principal(principal)?;
        let mut args: Vec<OsString> = ccache_args(ccache).into();
        args.extend(lifetime_args(lifetime)?);
        args.push(principal.into());
        let stdin = format!("{password}\n");
        self.tools
            .run(&self.tools.kinit, &args, Some(&stdin), self.env())?;
        Ok(())
    }

    /// What `klist -c FILE:<ccache>` prints: the cache's default principal
    /// and its tickets.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when `klist` fails (e.g. there is no such cache).
    pub fn klist(&self, ccache: &Path) -> Result<String> {
        let args: Vec<OsString> = ccache_args(ccache).into();
        self.tools.run(&self.tools.klist, &args, None, self.env())
    }

    /// Whether the ticket cache `ccache` holds a ticket that has not expired
    /// (`klist -s`), e.g. to wait until a short-lived one has.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when `klist` cannot be run.
    pub fn has_valid_ticket(&self, ccache: &Path) -> Result<bool> {
        let mut args: Vec<OsString> = vec!["-s".into()];
        args.extend(ccache_args(ccache));
        let status = self
            .tools
            .command(&self.tools.klist, &args, self.env())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| self.tools.spawn_error(&self.tools.klist, &args, e))?;
        Ok(status.success())
    }

    fn env(&self) -> Env<'_> {
        Env {
            krb5_conf: &self.krb5_conf,
            kdc_conf: &self.kdc_conf,
        }
    }

    /// Locks the `kadmin.local` mutex, ignoring poisoning.
    fn admin(&self) -> MutexGuard<'_, ()> {
        self.admin.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs one `kadmin.local` query. `kadmin.local -q` exits with 0 also
    /// when the query fails, so success is recognised by `expected` in what
    /// it prints.
    fn kadmin(&self, query: &str, expected: &str) -> Result<()> {
        let args = ["-r", REALM, "-q", query];
        let printed = self
            .tools
            .run(&self.tools.kadmin_local, &args, None, self.env())?;
        if printed.contains(expected) {
            Ok(())
        } else {
            Err(Error::io(
                format!(
                    "`{}` failed",
                    shown(&self.tools.kadmin_local, &os_args(&args))
                ),
                io::Error::other(printed.trim().to_string()),
            ))
        }
    }

    /// `<dir>/<principal with / and other odd characters as _>.keytab`, with
    /// a counter when two principals map to the same name.
    fn new_keytab_path(&self, principal: &str) -> PathBuf {
        let base: String = principal
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut path = self.dir().join(format!("{base}.keytab"));
        let mut n = 2;
        while path.exists() {
            path = self.dir().join(format!("{base}-{n}.keytab"));
            n += 1;
        }
        path
    }
}

impl Drop for KerberosRealm {
    fn drop(&mut self) {
        // Never panic here: this may run while a test unwinds.
        let _ = self.kdc.kill();
    }
}

/// Settings of a server whose clients authenticate with Kerberos
/// ([`ServerOptions::kerberos`](crate::ServerOptions::kerberos)): paths and
/// names only, so the options stay `Clone + Send + Sync` without holding the
/// realm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KerberosSettings {
    /// The realm's `krb5.conf` (`-Djava.security.krb5.conf`).
    pub(crate) krb5_conf: PathBuf,
    /// The keytab holding the service principal's keys.
    pub(crate) keytab: PathBuf,
    /// The service principal with its realm, `zookeeper/localhost@ZKR.TEST`.
    pub(crate) principal: String,
}

/// The two variables every krb5 command gets.
#[derive(Debug, Clone, Copy)]
struct Env<'a> {
    krb5_conf: &'a Path,
    kdc_conf: &'a Path,
}

/// The MIT Kerberos commands, found once.
#[derive(Debug, Clone)]
struct Tools {
    krb5kdc: PathBuf,
    kdb5_util: PathBuf,
    kadmin_local: PathBuf,
    kinit: PathBuf,
    klist: PathBuf,
}

impl Tools {
    /// Looks in [`KRB5_PATH_ENV`]'s folders when set, else on the `PATH`
    /// and in the `sbin` folders.
    fn find() -> Result<Self> {
        let (dirs, from) = match env::var_os(KRB5_PATH_ENV).filter(|v| !v.is_empty()) {
            Some(value) => (env::split_paths(&value).collect(), KRB5_PATH_ENV),
            None => {
                let mut dirs: Vec<PathBuf> = env::var_os("PATH")
                    .map(|p| env::split_paths(&p).collect())
                    .unwrap_or_default();
                dirs.extend(SBIN_DIRS.iter().map(PathBuf::from));
                (dirs, "PATH, /usr/sbin, /usr/local/sbin, /sbin")
            }
        };
        Self::find_in(&dirs, from)
    }

    /// Looks in `dirs` (described by `from` in errors).
    fn find_in(dirs: &[PathBuf], from: &str) -> Result<Self> {
        let find = |name: &str| -> Result<PathBuf> {
            dirs.iter()
                .map(|d| d.join(name))
                .find(|p| is_executable(p))
                .ok_or_else(|| {
                    Error::io(
                        format!(
                            "finding the MIT Kerberos command {name} (looked in {from}): \
                             run scripts/install-zookeeper.sh (apt-get install krb5-kdc \
                             krb5-admin-server krb5-user) or set {KRB5_PATH_ENV}"
                        ),
                        io::Error::from(io::ErrorKind::NotFound),
                    )
                })
        };
        Ok(Tools {
            krb5kdc: find("krb5kdc")?,
            kdb5_util: find("kdb5_util")?,
            kadmin_local: find("kadmin.local")?,
            kinit: find("kinit")?,
            klist: find("klist")?,
        })
    }

    /// `program args` with the realm's environment, never the system's
    /// configuration or the user's caches and keytabs.
    fn command(&self, program: &Path, args: &[impl AsRef<OsStr>], env: Env<'_>) -> Command {
        let mut command = Command::new(program);
        command
            .args(args)
            .env("KRB5_CONFIG", env.krb5_conf)
            .env("KRB5_KDC_PROFILE", env.kdc_conf)
            .env_remove("KRB5CCNAME")
            .env_remove("KRB5_KTNAME")
            .env_remove("KRB5_CLIENT_KTNAME")
            .env_remove("KRB5_TRACE")
            // klist prints dates in the C locale's format.
            .env("LC_ALL", "C")
            .stdin(Stdio::null());
        command
    }

    /// Runs a command to completion; returns what it printed (stdout, then
    /// stderr). `stdin` is written to its standard input.
    fn run(
        &self,
        program: &Path,
        args: &[impl AsRef<OsStr>],
        stdin: Option<&str>,
        env: Env<'_>,
    ) -> Result<String> {
        let mut command = self.command(program, args, env);
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        if stdin.is_some() {
            command.stdin(Stdio::piped());
        }
        let mut child = command
            .spawn()
            .map_err(|e| self.spawn_error(program, args, e))?;
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            // A command that exits early closes the pipe: its status says why.
            let _ = pipe.write_all(text.as_bytes());
        }
        let output = child
            .wait_with_output()
            .map_err(|e| Error::io(format!("running {}", shown(program, args)), e))?;
        let mut printed = String::from_utf8_lossy(&output.stdout).into_owned();
        printed.push_str(&String::from_utf8_lossy(&output.stderr));
        if output.status.success() {
            Ok(printed)
        } else {
            Err(Error::io(
                format!("`{}` failed ({})", shown(program, args), output.status),
                io::Error::other(printed.trim().to_string()),
            ))
        }
    }

    fn spawn_error(&self, program: &Path, args: &[impl AsRef<OsStr>], e: io::Error) -> Error {
        Error::io(format!("running {}", shown(program, args)), e)
    }
}

/// How a KDC start ended, short of an error.
enum Started {
    /// It listens, alone, on its port.
    Serving(JvmProcess),
    /// It listens, but so does someone else (`SO_REUSEPORT`).
    PortShared(JvmProcess),
}

/// Starts `krb5kdc -n` and waits until it accepts TCP connections.
fn start_kdc(tools: &Tools, dir: &Path, port: u16, env: Env<'_>) -> Result<Started> {
    let log_path = dir.join(KDC_LOG);
    let log = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|e| Error::io(format!("opening {}", log_path.display()), e))?;
    let log_err = log
        .try_clone()
        .map_err(|e| Error::io(format!("opening {}", log_path.display()), e))?;
    let pid_file = dir.join(KDC_PID);
    let args: [&OsStr; 4] = ["-n".as_ref(), "-r".as_ref(), REALM.as_ref(), "-P".as_ref()];
    let mut command = tools.command(&tools.krb5kdc, &args, env);
    command
        .arg(&pid_file)
        .current_dir(dir)
        .stdout(log)
        .stderr(log_err);
    let mut kdc = JvmProcess::spawn(command)
        .map_err(|e| Error::io(format!("starting {}", tools.krb5kdc.display()), e))?;
    let name = format!("Kerberos KDC 127.0.0.1:{port}");
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    let mut last = String::from("not listening yet");
    loop {
        match kdc.try_wait() {
            Ok(None) => {}
            Ok(Some(status)) => {
                return Err(Error::ServerExited {
                    server: name,
                    status: status.to_string(),
                    log_tail: log_tail(&log_path),
                    log_path,
                })
            }
            Err(e) => return Err(Error::io(format!("waiting for {name}"), e)),
        }
        // Our own listening socket first (a TCP probe alone could reach
        // another process that took the port), then a real connection.
        let own = listens(kdc.pid(), port);
        if own != Some(false) {
            let attempt = deadline
                .saturating_duration_since(Instant::now())
                .clamp(Duration::from_millis(1), Duration::from_secs(1));
            match TcpStream::connect_timeout(&address, attempt) {
                Ok(_) => {
                    return Ok(match tcp_listeners(port) {
                        Some(n) if n > 1 => Started::PortShared(kdc),
                        _ => Started::Serving(kdc),
                    })
                }
                Err(e) => last = e.to_string(),
            }
        }
        if Instant::now() >= deadline {
            return Err(Error::io(
                format!(
                    "{name} did not accept TCP connections within {STARTUP_TIMEOUT:?} \
                     ({last}); last lines of {}:\n{}",
                    log_path.display(),
                    log_tail(&log_path)
                ),
                io::Error::from(io::ErrorKind::TimedOut),
            ));
        }
        thread::sleep(
            deadline
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(10)),
        );
    }
}

/// The client configuration.
fn krb5_conf_text(dir: &Path, port: u16) -> String {
    let mut conf = String::from("# Generated by zkrs-testkit.\n[libdefaults]\n");
    let _ = writeln!(conf, " default_realm = {REALM}");
    conf.push_str(
        " dns_lookup_kdc = false\n \
         dns_lookup_realm = false\n \
         rdns = false\n \
         dns_canonicalize_hostname = false\n \
         udp_preference_limit = 1\n \
         clockskew = 1\n",
    );
    let _ = writeln!(
        conf,
        " default_ccache_name = FILE:{}",
        dir.join("ccache").display()
    );
    let _ = write!(
        conf,
        "[realms]\n {REALM} = {{\n  kdc = 127.0.0.1:{port}\n }}\n\
         [domain_realm]\n localhost = {REALM}\n 127.0.0.1 = {REALM}\n"
    );
    conf
}

/// The KDC's configuration: everything in `dir`, one port for UDP and TCP
/// (`kdc_listen` binds it on 127.0.0.1 only; krb5 before 1.15 ignores it and
/// uses `kdc_ports` on every address), its log on stderr.
fn kdc_conf_text(dir: &Path, port: u16) -> String {
    let at = |name: &str| dir.join(name).display().to_string();
    format!(
        "# Generated by zkrs-testkit.\n\
         [kdcdefaults]\n \
         kdc_ports = {port}\n \
         kdc_tcp_ports = {port}\n\
         [realms]\n \
         {REALM} = {{\n  \
         database_name = {database}\n  \
         key_stash_file = {stash}\n  \
         acl_file = {acl}\n  \
         kdc_listen = 127.0.0.1:{port}\n  \
         kdc_tcp_listen = 127.0.0.1:{port}\n  \
         kdc_ports = {port}\n  \
         kdc_tcp_ports = {port}\n  \
         max_life = 7d\n  \
         max_renewable_life = 14d\n \
         }}\n\
         [logging]\n \
         kdc = STDERR\n",
        database = at("principal"),
        stash = at("stash"),
        acl = at(ACL_FILE),
    )
}

/// A master password nobody needs to know: 32 hex digits from std's random
/// hash keys, the time and the pid.
fn random_password() -> String {
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

/// Principal names go into `kadmin.local` queries and file names.
fn check_principal(principal: &str) -> Result<()> {
    let bad = principal.is_empty()
        || principal.starts_with('-')
        || principal
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '\''));
    if bad {
        return Err(Error::InvalidArgument {
            message: format!(
                "{principal:?} is not a usable Kerberos principal name (it must be \
                 non-empty, not start with '-', and hold no whitespace or quotes)"
            ),
        });
    }
    Ok(())
}

/// A `kadmin.local` query argument in double quotes (its parser reads `""`
/// inside quotes as one `"`).
fn quote(value: &str) -> String {
    format!("\"{}\"", value.replace('"', "\"\""))
}

fn path_str(path: &Path) -> Result<&str> {
    path.to_str().ok_or_else(|| Error::InvalidArgument {
        message: format!("{} is not UTF-8", path.display()),
    })
}

fn ccache_args(ccache: &Path) -> [OsString; 2] {
    let mut name = OsString::from("FILE:");
    name.push(ccache);
    ["-c".into(), name]
}

fn lifetime_args(lifetime: Option<Duration>) -> Result<Vec<OsString>> {
    let Some(lifetime) = lifetime else {
        return Ok(Vec::new());
    };
    if lifetime.is_zero() {
        return Err(Error::InvalidArgument {
            message: "a ticket lifetime must be at least one second".to_string(),
        });
    }
    let secs = lifetime.as_secs() + u64::from(lifetime.subsec_nanos() > 0);
    Ok(vec!["-l".into(), format!("{secs}s").into()])
}

fn os_args(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

fn shown(program: &Path, args: &[impl AsRef<OsStr>]) -> String {
    let mut s = program.display().to_string();
    for arg in args {
        s.push(' ');
        s.push_str(&arg.as_ref().to_string_lossy());
    }
    s
}

fn is_executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The last [`LOG_TAIL_LINES`] lines of a log file.
fn log_tail(path: &Path) -> String {
    let mut bytes = Vec::new();
    if let Ok(mut file) = fs::File::open(path) {
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        if file
            .seek(SeekFrom::Start(len.saturating_sub(64 * 1024)))
            .is_ok()
        {
            let _ = file.read_to_end(&mut bytes);
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n")
}

fn write(path: &Path, contents: &str) -> Result<()> {
    fs::write(path, contents).map_err(|e| Error::io(format!("writing {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
