//! The one place that wires a client: the session core, the driver task that runs it, and
//! the handle that talks to the driver, from the settings a [`crate::ClientBuilder`] collects.

use crate::error::ErrorExt;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use zkrs_codec::Secret;

use crate::client::{Client, Inner};
use crate::connect_string::ConnectString;
use crate::driver::Driver;
use crate::error::{Error, Result};
use crate::metrics::Metrics;
use crate::protocol::Shared;
use crate::random::random_seed;
use crate::session::{ConnectionState, Session, SessionConfig, StateChange};
use crate::transport::Connector;

/// Starts the driver task for `settings` and returns the handle to it.
pub(crate) fn start(settings: &Settings) -> Result<Client> {
    start_shared(settings).map(|(client, _)| client)
}

/// [`start`], also returning the state the driver shares with the handles (for
/// [`ClientBuilder::connect`]'s report when no session comes).
pub(crate) fn start_shared(settings: &Settings) -> Result<(Client, Arc<Mutex<Shared>>)> {
    let cs = ConnectString::parse(&settings.connect_string)?;
    if settings.host_provider.is_some() && settings.follow_ensemble {
        return Err(Error::invalid(
            "a host provider and follow_ensemble cannot be combined: both set the hosts",
        ));
    }
    if settings.session_timeout.is_zero() {
        return Err(Error::invalid("the session timeout must be positive"));
    }
    let mut cfg = SessionConfig::new(cs.hosts.len(), settings.session_timeout);
    cfg.can_be_read_only = settings.can_be_read_only;
    cfg.auth = settings.auth.clone();
    cfg.max_reply_len = settings.max_reply_len.unwrap_or(
        settings
            .max_frame_len
            .saturating_add(crate::session::REPLY_ROOM),
    );
    cfg.seed = random_seed();
    cfg.sasl = settings.sasl.clone();
    cfg.host_names = cs.hosts.iter().map(|(name, _)| name.clone()).collect();
    if let Some(resume) = &settings.resume {
        if resume.id == 0 {
            return Err(Error::invalid(
                "cannot resume session 0 (0 means no session)",
            ));
        }
    }
    cfg.resume = settings.resume.as_ref().map(|r| (r.id, r.password.clone()));
    let session = Session::new(cfg, crate::clock::now());
    let (tx, rx) = mpsc::unbounded_channel();
    let shared = Arc::new(Mutex::new(Shared {
        current: StateChange {
            state: ConnectionState::Connecting,
            session_id: 0,
        },
        password: Secret::default(),
        negotiated_timeout: settings.session_timeout,
        last_heard: None,
        subscribers: crate::listeners::Listeners::unbounded(),
        diagnosis: Default::default(),
        hosts: crate::host_list::host_strings(&cs.hosts),
    }));
    #[allow(unused_mut)] // set below with the `tls` feature
    let mut connector = Connector::new(settings.dialer.clone());
    #[cfg(feature = "tls")]
    if let Some(tls) = &settings.tls {
        connector.tls = Some(tls.connector()?);
    }
    let metrics = Arc::new(Metrics::new());
    let driver = Driver::new(
        session,
        cs.hosts,
        cs.chroot.clone(),
        rx,
        shared.clone(),
        connector,
        settings.host_provider.clone(),
    )
    .with_metrics(metrics.clone())
    .with_recorder(settings.recorder.clone());
    tokio::spawn(driver.run());
    let client = Client::from_inner(Inner {
        commands: tx,
        chroot: cs.chroot,
        max_frame_len: settings.max_frame_len,
        next_watcher: AtomicU64::new(1),
        shared: shared.clone(),
        in_flight: crate::in_flight::InFlight::new(settings.max_in_flight),
        reply_slots: Default::default(),
        metrics,
    });
    if settings.follow_ensemble {
        crate::ensemble_tracker::spawn(&client);
    }
    #[cfg(feature = "metrics")]
    crate::metrics_report::spawn(
        Arc::downgrade(&client.inner),
        settings
            .metrics_label
            .clone()
            .unwrap_or_else(crate::metrics_report::default_label),
    );
    Ok((client, shared))
}

/// A session to reattach to.
#[derive(Clone)]
pub(crate) struct SessionToResume {
    pub(crate) id: i64,
    pub(crate) password: Secret,
}

impl std::fmt::Debug for SessionToResume {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionToResume")
            .field("id", &format_args!("{:#x}", self.id))
            .field("password", &self.password)
            .finish()
    }
}

/// What a [`crate::ClientBuilder`] collects: everything [`start`] needs to start a client.
/// Builders get logged: every secret in it is a [`Secret`], whose `Debug` is redacted.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) connect_string: String,
    pub(crate) session_timeout: Duration,
    pub(crate) connect_timeout: Option<Duration>,
    pub(crate) can_be_read_only: bool,
    pub(crate) auth: Vec<(String, Secret)>,
    pub(crate) max_frame_len: usize,
    /// `None`: `max_frame_len` plus [`crate::session::REPLY_ROOM`].
    pub(crate) max_reply_len: Option<usize>,
    pub(crate) sasl: Option<crate::sasl::SaslMechanism>,
    pub(crate) resume: Option<SessionToResume>,
    pub(crate) host_provider: Option<crate::host_provider::SharedProvider>,
    pub(crate) follow_ensemble: bool,
    pub(crate) max_in_flight: usize,
    /// A simulation's network, in place of DNS and TCP.
    pub(crate) dialer: Option<Arc<dyn crate::memory_link::Dialer>>,
    /// A simulation's history of what the application saw.
    pub(crate) recorder: Option<Arc<dyn crate::history::Recorder>>,
    #[cfg(feature = "tls")]
    pub(crate) tls: Option<crate::tls::TlsOptions>,
    /// The `client` label of the facade's metrics (feature `metrics`).
    #[cfg(feature = "metrics")]
    pub(crate) metrics_label: Option<String>,
}
