//! The commands, one concept per file, and the connection they share.

pub mod barrier;
pub mod bench;
pub mod cache;
pub mod counter;
pub mod data;
pub mod demo;
pub mod elect;
pub mod ensemble;
pub mod group;
pub mod lock;
pub mod queue;
pub mod service;
pub mod watch;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use zkrs_client::sasl::Kerberos;
use zkrs_client::{Client, ClientBuilder, TlsOptions};

use crate::args::{Command, Globals};
use crate::failure::{Failure, Outcome};

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
    if let Some((id, password)) = &g.resume {
        b = b.resume(*id, password.clone());
    }
    if g.follow_ensemble {
        b = b.follow_ensemble(true);
    }
    for (scheme, credentials) in &g.auth {
        b = b.auth(scheme.as_str(), credentials.as_bytes());
    }
    if let Some(sasl) = &g.sasl_digest {
        let password = sasl.password.clone().unwrap_or_default();
        b = b.sasl(zkrs_client::sasl::digest_md5(&sasl.user, password));
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

/// Closes a session so its ephemeral nodes go now, not at the session timeout; bounded, so
/// an unreachable server does not hold zkctl. A session resumed with `--resume` is left
/// open instead, as it was found.
/// Resolves `run_for` from now (a command's `--for MS`), or never without it.
pub async fn run_for(run_for: Option<Duration>) {
    match run_for {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}

pub async fn close(client: &Client) {
    if LEAVE_SESSION_OPEN.load(Ordering::Relaxed) {
        client.detach().await;
        return;
    }
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, client.close()).await;
}

/// Runs a parsed command; `Ok` holds the exit code.
pub async fn run(g: Globals, command: Command) -> Outcome {
    LEAVE_SESSION_OPEN.store(g.resume.is_some(), Ordering::Relaxed);
    match command {
        Command::Lock {
            path,
            timeout,
            grace,
            command,
        } => lock::run(&g, &path, timeout, grace, &command).await,
        Command::Elect {
            path,
            id,
            once,
            grace,
            command,
        } => elect::run(&g, &path, id, once, grace, &command).await,
        Command::Bench(options) => bench::run(&g, options).await,
        Command::Demo { participants } => demo::run(&g, participants).await,
        Command::Watch {
            path,
            recursive,
            count,
        } => watch::run(&g, &path, recursive, count).await,
        Command::Cache {
            path,
            kind,
            run_for,
        } => cache::run(&g, &path, kind, run_for).await,
        Command::Queue { path, action } => queue::run(&g, &path, action).await,
        Command::Counter { path, action, int } => counter::run(&g, &path, action, int).await,
        Command::Barrier {
            path,
            count,
            timeout,
            grace,
            command,
        } => barrier::run(&g, &path, count, timeout, grace, &command).await,
        Command::Member {
            path,
            id,
            data,
            grace,
            command,
        } => group::member(&g, &path, &id, &data, grace, &command).await,
        Command::Members { path } => group::members(&g, &path).await,
        Command::Service { base, action } => service::run(&g, &base, action).await,
        Command::Config | Command::Reconfig { .. } => {
            let client = connect(&g).await?;
            let result = ensemble::run(&client, command).await;
            close(&client).await;
            result
        }
        data_command => {
            let client = connect(&g).await?;
            let result = data::run(&client, data_command).await;
            close(&client).await;
            result
        }
    }
}
