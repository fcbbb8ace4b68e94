//! [`ConnectDiagnosis`]: why no session was made yet, as the driver learns it, for the error
//! of a `connect()` that gave up (and its matchable cause).

use std::time::Instant;

use crate::session::ConnectionFailure;

/// What the driver learned of the connection attempts since the last session was
/// established: the last failure in the core's words, each host's, the attempt under way,
/// and the causes a caller can match (a SASL or TLS refusal).
#[derive(Debug, Default)]
pub(crate) struct ConnectDiagnosis {
    /// Why the last connection or connection attempt ended (the core's `Display`).
    last_failure: Option<ConnectionFailure>,
    /// Why authentication failed, once it has: the cause of `connect`'s error.
    auth_failure: Option<crate::sasl::SaslError>,
    /// The connection attempt under way, if any (none once a session is established).
    attempt: Option<Attempt>,
    /// Why each host (`name:port`) failed, in the order they last failed: a connect error
    /// names them all.
    host_failures: Vec<(String, String)>,
    /// The last TLS refusal: the source of a connect error, so that its kind can be matched.
    #[cfg(feature = "tls")]
    tls_failure: Option<crate::tls::TlsError>,
}

/// A connection attempt under way, as the driver last saw it.
#[derive(Debug, Clone)]
struct Attempt {
    /// `name:port`.
    host: String,
    /// Whether the TCP connection is up and the handshake reply awaited.
    handshaking: bool,
    /// When this phase started.
    since: Instant,
}

impl ConnectDiagnosis {
    /// An attempt at `host` (`name:port`) starts.
    pub(crate) fn attempt_started(&mut self, host: String, now: Instant) {
        self.attempt = Some(Attempt {
            host,
            handshaking: false,
            since: now,
        });
    }

    /// The attempt's TCP connection is up: the handshake reply is awaited from `now`.
    pub(crate) fn handshaking(&mut self, now: Instant) {
        if let Some(attempt) = &mut self.attempt {
            attempt.handshaking = true;
            attempt.since = now;
        }
    }

    /// Keeps why `host` failed (replacing what it said before).
    pub(crate) fn host_failed(&mut self, host: String, why: String) {
        self.host_failures.retain(|(h, _)| *h != host);
        self.host_failures.push((host, why));
    }

    /// Keeps a TLS refusal as the cause of connect()'s error.
    #[cfg(feature = "tls")]
    pub(crate) fn tls_refused(&mut self, tls: crate::tls::TlsError) {
        self.tls_failure = Some(tls);
    }

    /// The connection (or attempt) ended; `failure` is the core's reason, if it has one.
    pub(crate) fn connection_ended(&mut self, failure: Option<ConnectionFailure>) {
        self.attempt = None;
        if failure.is_some() {
            self.last_failure = failure;
        }
    }

    /// A session is in use: what was learned before no longer explains anything.
    pub(crate) fn session_established(&mut self) {
        self.attempt = None;
        self.host_failures.clear();
        #[cfg(feature = "tls")]
        {
            self.tls_failure = None;
        }
    }

    /// The client stops (authentication failed, or the session is lost): the core's reasons,
    /// kept before anyone hears of it, as connect() reports them.
    pub(crate) fn session_refused(
        &mut self,
        last_failure: Option<ConnectionFailure>,
        auth_failure: Option<crate::sasl::SaslError>,
    ) {
        self.last_failure = last_failure;
        self.auth_failure = auth_failure;
    }

    /// Why the last connection or attempt ended.
    pub(crate) fn last_failure(&self) -> Option<&ConnectionFailure> {
        self.last_failure.as_ref()
    }

    /// Why authentication failed, if it has.
    pub(crate) fn auth_failure(&self) -> Option<&crate::sasl::SaslError> {
        self.auth_failure.as_ref()
    }

    /// The last TLS refusal, if any.
    #[cfg(feature = "tls")]
    pub(crate) fn tls_failure(&self) -> Option<&crate::tls::TlsError> {
        self.tls_failure.as_ref()
    }

    /// Why no session was made yet, in words, for a connect that timed out: the last
    /// failure, and the attempt under way if it has lasted (`None` when nothing is known).
    pub(crate) fn report(&self, now: Instant) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(failure) = &self.last_failure {
            parts.push(format!("last attempt: {failure}"));
        }
        if !self.host_failures.is_empty() {
            let each: Vec<String> = self
                .host_failures
                .iter()
                .map(|(host, why)| format!("{host}: {why}"))
                .collect();
            parts.push(format!("no server reachable: {}", each.join("; ")));
        }
        if let Some(attempt) = &self.attempt {
            let ms = now.saturating_duration_since(attempt.since).as_millis();
            if attempt.handshaking {
                parts.push(format!(
                    "{} accepted the connection but sent no handshake reply in {ms} ms",
                    attempt.host
                ));
            } else if ms >= 100 {
                parts.push(format!(
                    "still connecting to {} after {ms} ms",
                    attempt.host
                ));
            }
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}
