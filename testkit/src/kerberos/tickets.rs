//! Tickets of the realm's principals: `kinit` into a ticket cache file, `klist` to read it.

use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use super::principals::check_principal;
use super::realm::KerberosRealm;
use crate::error::{Error, Result};

impl KerberosRealm {
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
