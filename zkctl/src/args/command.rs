//! The connection settings made from the global flags ([`Globals`]), and the flags' value
//! types.

use std::time::Duration;

use clap::ValueEnum;
use zkrs_client::Secret;

use super::secrets::{read_identities, Resume, SaslDigest, SecretFile};

/// Settings for the connection, shared by every command. Its secrets are [`Secret`]s, read
/// from files ([`super::secrets`]): `Debug` prints them `Secret(***)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Globals {
    /// The connect string.
    pub server: String,
    /// Whether the server was chosen (`--server` or `ZK_SERVER`), for `demo`.
    pub server_given: bool,
    /// The session timeout to ask for.
    pub session_timeout: Duration,
    /// How long to wait for the first session (`None`: the session timeout).
    pub connect_timeout: Option<Duration>,
    /// `--auth-file FILE`s, read by [`Globals::read_secrets`] into `auth`.
    pub auth_files: Vec<SecretFile>,
    /// `(scheme, credentials)` identities, from `auth_files` once read.
    pub auth: Vec<(String, Secret)>,
    /// How many `-v`: 1 prints the library's events, 2 its debug events too.
    pub verbosity: u8,
    /// TLS settings, when any `--tls-*` flag is given.
    pub tls: Option<Box<Tls>>,
    /// `--sasl-digest USER --sasl-password-file FILE`.
    pub sasl_digest: Option<SaslDigest>,
    /// `--sasl-kerberos PRINCIPAL [--keytab FILE] [--sasl-service-principal NAME]`.
    pub kerberos: Option<KerberosArgs>,
    /// `--resume ID --resume-password-file FILE`: the session to reattach to (left open at
    /// exit).
    pub resume: Option<Resume>,
    /// `--follow-ensemble`: the client's hosts follow `/zookeeper/config`.
    pub follow_ensemble: bool,
    /// `--output text|json`.
    pub output: OutputFormat,
}

impl Globals {
    /// Reads every secret file (before connecting; the parser does no I/O). An error names
    /// the flag and the file, never what the file holds.
    pub fn read_secrets(&mut self) -> Result<(), String> {
        self.auth = read_identities(&mut self.auth_files)?;
        if let Some(sasl) = &mut self.sasl_digest {
            sasl.password.read()?;
        }
        if let Some(resume) = &mut self.resume {
            resume.read()?;
        }
        Ok(())
    }
}

/// What stdout looks like (`--output`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    // Plain comments, not doc comments: clap would print them as the values' help, and a
    // value with help makes `zkctl -h` and `zkctl help` differ.
    // Lines for eyes and for `cut`/`awk` (each command's own format).
    #[default]
    Text,
    // JSON lines: one object per line, the fields of README's table.
    Json,
}

/// `--sasl-kerberos PRINCIPAL [--keytab FILE] [--sasl-service-principal NAME]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KerberosArgs {
    /// The client's principal.
    pub principal: String,
    /// Its keytab; without one, the ticket cache (`kinit PRINCIPAL` first).
    pub keytab: Option<String>,
    /// The server's principal (default `zookeeper/<host>`).
    pub service_principal: Option<String>,
}

/// The `--tls-*` flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tls {
    /// `--tls-ca FILE` (else the platform's trust store).
    pub ca: Option<String>,
    /// `--tls-crl FILE`: revocation lists the servers' certificates are checked against.
    pub crl: Option<String>,
    /// `--tls-cert FILE` and `--tls-key FILE`, given together.
    pub cert_and_key: Option<(String, String)>,
    /// `--tls-server-name NAME`.
    pub server_name: Option<String>,
}

/// What `bench` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchKind {
    /// getData on a node of `--size` bytes.
    Get,
    /// setData of `--size` bytes.
    Set,
    /// Persistent creates of `--size` bytes (deleted afterwards).
    Create,
    /// InterProcessMutex cycles and hand-offs.
    Lock,
    /// LeaderLatch cycles and hand-offs.
    Latch,
    /// InterProcessSemaphoreV2 cycles and hand-offs (one lease).
    Semaphore,
}

/// When `lock` and `elect` take the lock or leadership as lost (`--policy`): the recipes'
/// `ConnectionStatePolicy`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum HoldPolicy {
    // Plain comments (see `OutputFormat`).
    // Lost at the first suspension (Curator's default).
    Standard,
    // Lost when the server could have expired the session, less a margin.
    #[default]
    SessionDeadline,
    // Lost only when the session is (Curator's session policy; not safe on its own).
    SessionOnly,
}

/// The tokio runtime `bench` runs on (`--rt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchRuntime {
    /// One thread: the callers' tasks and the client's driver share it.
    Current,
    /// tokio's multi-thread runtime (one worker per core), as `#[tokio::main]` builds it.
    Multi,
}

/// How a registered service instance's node lives (`service register --type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ServiceKind {
    /// Ephemeral: Curator's `DYNAMIC` (the default).
    Dynamic,
    /// Persistent, deleted when the registration ends: `STATIC`.
    Static,
    /// Persistent, left in place when zkctl ends: `PERMANENT`.
    Permanent,
}

/// How `service pick` picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PickStrategy {
    /// Each in turn (Curator's default).
    RoundRobin,
    /// Any one, uniformly.
    Random,
}

/// The shells `completions` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    /// bash
    Bash,
    /// zsh
    Zsh,
    /// fish
    Fish,
}
