//! The realm's principals and their keytabs (`kadmin.local`), and the checks on what goes
//! into its queries.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::MutexGuard;

use super::conf_files::REALM;
use super::realm::KerberosRealm;
use super::tools::{os_args, shown};
use crate::error::{Error, Result};

impl KerberosRealm {
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

/// Principal names go into `kadmin.local` queries and file names.
pub(super) fn check_principal(principal: &str) -> Result<()> {
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
pub(super) fn quote(value: &str) -> String {
    format!("\"{}\"", value.replace('"', "\"\""))
}

fn path_str(path: &Path) -> Result<&str> {
    path.to_str().ok_or_else(|| Error::InvalidArgument {
        message: format!("{} is not UTF-8", path.display()),
    })
}
