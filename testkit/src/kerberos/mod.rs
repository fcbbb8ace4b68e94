//! A throw-away MIT Kerberos realm: a real `krb5kdc` on a free port of
//! `127.0.0.1`, its database, principals and keytabs in a temporary folder,
//! for GSSAPI (Kerberos) SASL tests against ZooKeeper servers started with
//! [`ServerOptions::kerberos`](crate::ServerOptions::kerberos).
//!
//! The realm ([`KerberosRealm`], `realm.rs`) runs its KDC (`kdc.rs`) with the MIT commands
//! (`tools.rs`) on the files of its folder (`conf_files.rs`), and makes principals with
//! keytabs (`principals.rs`) and tickets (`tickets.rs`); a server's options keep only paths
//! and names (`settings.rs`).

mod conf_files;
mod kdc;
mod principals;
mod realm;
mod settings;
#[cfg(test)]
mod tests;
mod tickets;
mod tools;

pub use realm::KerberosRealm;
pub(crate) use settings::KerberosSettings;
pub use tools::KRB5_PATH_ENV;
