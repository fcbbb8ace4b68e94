//! What clap cannot check: the [`Globals`] made from the global flags of every level (pairs
//! of flags given on different levels), and [`check`] of a command (words that need `--`
//! before them, a dynamic instance without a command, numbers whose width a flag sets,
//! `--resume` with a command of several sessions).

use std::time::Duration;

use super::cli::{Command, GlobalFlags};
use super::command::{Globals, KerberosArgs, ServiceKind, Tls};
use super::hold::MemberArgs;
use super::secrets::{self, SaslDigest, SecretFile};
use super::service::{RegisterArgs, ServiceSub};
use super::usage::{usage, UsageError};

/// The default connect string when neither `--server` nor `ZK_SERVER` is given.
pub const DEFAULT_SERVER: &str = "127.0.0.1:2181";

/// The connection settings, from the global flags of every level. `env_server` is `$ZK_SERVER`.
///
/// The pairs of flags are checked here, not by clap: clap checks `requires` on each level by
/// itself, so `--tls-cert c ls / --tls-key k` would be refused.
pub fn globals(flags: GlobalFlags, env_server: Option<String>) -> Result<Globals, UsageError> {
    let env_server = env_server.filter(|s| !s.is_empty());
    let server_given = flags.server.is_some() || env_server.is_some();
    let any_tls = flags.tls
        || flags.tls_ca.is_some()
        || flags.tls_crl.is_some()
        || flags.tls_cert.is_some()
        || flags.tls_key.is_some()
        || flags.tls_server_name.is_some();
    let tls = if any_tls {
        let cert_and_key = match (flags.tls_cert, flags.tls_key) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            (Some(_), None) => {
                return usage("--tls-cert needs --tls-key (the certificate's private key)")
            }
            (None, Some(_)) => return usage("--tls-key needs --tls-cert (the client certificate)"),
        };
        Some(Box::new(Tls {
            ca: flags.tls_ca,
            crl: flags.tls_crl,
            cert_and_key,
            server_name: flags.tls_server_name,
        }))
    } else {
        None
    };
    if !flags.auth.is_empty() {
        return usage(secrets::AUTH_INLINE);
    }
    let resume = secrets::resume(flags.resume, flags.resume_password_file)?;
    let sasl_digest = match (flags.sasl_digest, flags.sasl_password_file) {
        (None, None) => None,
        (Some(_), None) => {
            return usage(
                "--sasl-digest needs --sasl-password-file FILE (the password is never taken \
                 from the command line)",
            )
        }
        (None, Some(_)) => return usage("--sasl-password-file needs --sasl-digest USER"),
        (Some(user), Some(password_file)) => Some(SaslDigest {
            user,
            password: SecretFile::new("--sasl-password-file", password_file),
        }),
    };
    let kerberos = match flags.sasl_kerberos {
        None => {
            if flags.keytab.is_some() {
                return usage("--keytab needs --sasl-kerberos PRINCIPAL");
            }
            if flags.sasl_service_principal.is_some() {
                return usage("--sasl-service-principal needs --sasl-kerberos PRINCIPAL");
            }
            None
        }
        Some(_) if sasl_digest.is_some() => {
            return usage("--sasl-kerberos and --sasl-digest: one SASL mechanism at a time")
        }
        Some(principal) => Some(KerberosArgs {
            principal,
            keytab: flags.keytab,
            service_principal: flags.sasl_service_principal,
        }),
    };
    Ok(Globals {
        server: flags
            .server
            .or(env_server)
            .unwrap_or_else(|| DEFAULT_SERVER.to_string()),
        server_given,
        session_timeout: flags.session_timeout.unwrap_or(Duration::from_secs(10)),
        connect_timeout: flags.connect_timeout,
        auth_files: flags
            .auth_file
            .into_iter()
            .map(|file| SecretFile::new("--auth-file", file))
            .collect(),
        auth: Vec::new(),
        verbosity: flags.verbose,
        tls,
        sasl_digest,
        kerberos,
        resume,
        follow_ensemble: flags.follow_ensemble,
        output: flags.output.unwrap_or_default(),
    })
}

/// Checks what clap cannot about a command. `resume`: whether `--resume` was given (one
/// session only).
pub fn check(command: &Command, resume: bool) -> Result<(), UsageError> {
    match command {
        Command::Bench(_) | Command::Demo(_) if resume => {
            let name = if matches!(command, Command::Bench(_)) {
                "bench"
            } else {
                "demo"
            };
            usage(format!(
                "--resume takes one session; '{name}' opens several"
            ))
        }
        Command::Bench(b) => b.check(),
        Command::Counter(c) => c.action().map(drop),
        Command::Member(m) => member(m),
        Command::Service(ServiceSub::Register(r)) => register(r),
        Command::Reconfig(r) => r.change().map(drop),
        _ => Ok(()),
    }
}

/// `member PATH ID [DATA] -- CMD...`: the command after `--`, and one.
fn member(m: &MemberArgs) -> Result<(), UsageError> {
    if !m.extra.is_empty() {
        // Else `member /g a ./serve 80` would take ./serve as DATA and run `80`.
        return usage(
            "'member' needs -- before the command (DATA is optional): \
             zkctl member PATH ID [DATA] -- CMD [ARGS...]",
        );
    }
    if m.command.is_empty() {
        return usage(
            "'member' needs a command to run: zkctl member PATH ID [DATA] -- CMD [ARGS...]",
        );
    }
    Ok(())
}

/// `service register`: the command after `--`, and one unless the instance is permanent.
fn register(r: &RegisterArgs) -> Result<(), UsageError> {
    if !r.extra.is_empty() {
        // As with `member`: without `--` the words cannot be told apart.
        return usage(
            "'service register' needs -- before the command: zkctl service register \
             BASE NAME --address A --port P [FLAGS] [-- CMD [ARGS...]]",
        );
    }
    if r.command.is_empty() && r.kind != ServiceKind::Permanent {
        let why = match r.kind {
            ServiceKind::Dynamic => {
                "a dynamic instance's node is ephemeral and goes with zkctl's session"
            }
            _ => "a static instance is unregistered when zkctl ends",
        };
        return usage(format!(
            "'service register' needs -- CMD to run while registered: {why} \
             (--type permanent registers and exits)"
        ));
    }
    Ok(())
}
