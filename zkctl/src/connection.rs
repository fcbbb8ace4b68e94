//! The connection every command shares: a client made from the global flags, and closing
//! it (or leaving a borrowed session open) when the command ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use zkrs_client::sasl::Kerberos;
use zkrs_client::{Client, ClientBuilder, TlsOptions};

use crate::args::Globals;
use crate::failure::Failure;

/// How long zkctl waits for the server to confirm a session close before exiting anyway (the
/// session then ends at its timeout).
const CLOSE_TIMEOUT: Duration = Duration::from_secs(3);

/// Set with `--resume`: the session is borrowed, so [`close`] leaves it open (detaches)
/// for its owner, wherever a command would close it. One flag for the process: zkctl
/// runs one command, and `--resume` is refused for the commands with several sessions.
static LEAVE_SESSION_OPEN: AtomicBool = AtomicBool::new(false);

/// A client for the global settings, connected (or the client's error: it names the hosts
/// when none is reachable).
pub async fn connect(g: &Globals) -> Result<Client, Failure> {
    Ok(builder(g).connect().await?)
}

/// A builder for the global settings (for commands that open several sessions).
pub fn builder(g: &Globals) -> ClientBuilder {
    let mut b = ClientBuilder::new(&g.server).session_timeout(g.session_timeout);
    if let Some(t) = g.connect_timeout {
        b = b.connect_timeout(t);
    }
    if let Some(resume) = &g.resume {
        b = b.resume(resume.id, resume.password.value());
    }
    if g.follow_ensemble {
        b = b.follow_ensemble(true);
    }
    for (scheme, credentials) in &g.auth {
        b = b.auth(scheme.as_str(), credentials.clone());
    }
    if let Some(sasl) = &g.sasl_digest {
        b = b.sasl(zkrs_client::sasl::digest_md5(
            &sasl.user,
            sasl.password.value(),
        ));
    }
    if let Some(k) = &g.kerberos {
        let mut settings = match &k.keytab {
            Some(keytab) => Kerberos::from_keytab(&k.principal, keytab),
            None => Kerberos::from_ticket_cache(),
        };
        if let Some(service) = &k.service_principal {
            settings = settings.service_principal(service);
        }
        b = b.sasl(zkrs_client::sasl::gssapi(settings));
    }
    if let Some(tls) = &g.tls {
        let mut options = TlsOptions::new();
        if let Some(ca) = &tls.ca {
            options = options.ca_file(ca);
        }
        if let Some(crl) = &tls.crl {
            options = options.crl_file(crl);
        }
        if let Some((cert, key)) = &tls.cert_and_key {
            options = options.client_cert(cert, key);
        }
        if let Some(name) = &tls.server_name {
            options = options.server_name(name);
        }
        b = b.tls(options);
    }
    b
}

/// Resolves `run_for` from now (a command's `--for MS`), or never without it.
pub async fn run_for(run_for: Option<Duration>) {
    match run_for {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}

/// Closes a session so its ephemeral nodes go now, not at the session timeout; bounded, so
/// an unreachable server does not hold zkctl. A session resumed with `--resume` is left
/// open instead, as it was found.
pub async fn close(client: &Client) {
    if LEAVE_SESSION_OPEN.load(Ordering::Relaxed) {
        client.detach().await;
        return;
    }
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, client.close()).await;
}

/// Whether [`close`] leaves sessions open (`--resume`: the session is borrowed).
pub fn leave_session_open(leave: bool) {
    LEAVE_SESSION_OPEN.store(leave, Ordering::Relaxed);
}
