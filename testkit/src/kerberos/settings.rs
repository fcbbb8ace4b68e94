//! [`KerberosSettings`]: what a server's options keep of a realm.

use std::path::PathBuf;

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
