//! The MIT Kerberos commands (`krb5kdc`, `kdb5_util`, `kadmin.local`, `kinit`, `klist`):
//! where they are found, and how they are run in the realm's environment only.

use std::env;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, Write as _};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{Error, Result};

/// Environment variable holding a `:`-separated list of folders where
/// [`KerberosRealm`](crate::KerberosRealm) looks for the MIT Kerberos commands (`krb5kdc`,
/// `kdb5_util`, `kadmin.local`, `kinit`, `klist`) instead of the default: the
/// `PATH`, then `/usr/sbin`, `/usr/local/sbin` and `/sbin` (Debian puts the
/// KDC's commands in `/usr/sbin`, which is often not on a user's `PATH`).
pub const KRB5_PATH_ENV: &str = "ZKR_KRB5_PATH";

/// Folders searched after the `PATH` when [`KRB5_PATH_ENV`] is not set.
const SBIN_DIRS: [&str; 3] = ["/usr/sbin", "/usr/local/sbin", "/sbin"];

/// The two variables every krb5 command gets.
#[derive(Debug, Clone, Copy)]
pub(super) struct Env<'a> {
    pub(super) krb5_conf: &'a Path,
    pub(super) kdc_conf: &'a Path,
}

/// The MIT Kerberos commands, found once.
#[derive(Debug, Clone)]
pub(super) struct Tools {
    pub(super) krb5kdc: PathBuf,
    pub(super) kdb5_util: PathBuf,
    pub(super) kadmin_local: PathBuf,
    pub(super) kinit: PathBuf,
    pub(super) klist: PathBuf,
}

impl Tools {
    /// Looks in [`KRB5_PATH_ENV`]'s folders when set, else on the `PATH`
    /// and in the `sbin` folders.
    pub(super) fn find() -> Result<Self> {
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
    pub(super) fn find_in(dirs: &[PathBuf], from: &str) -> Result<Self> {
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
    pub(super) fn command(
        &self,
        program: &Path,
        args: &[impl AsRef<OsStr>],
        env: Env<'_>,
    ) -> Command {
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
    pub(super) fn run(
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

    pub(super) fn spawn_error(
        &self,
        program: &Path,
        args: &[impl AsRef<OsStr>],
        e: io::Error,
    ) -> Error {
        Error::io(format!("running {}", shown(program, args)), e)
    }
}

pub(super) fn os_args(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

pub(super) fn shown(program: &Path, args: &[impl AsRef<OsStr>]) -> String {
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
