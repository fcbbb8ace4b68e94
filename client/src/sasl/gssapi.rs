//! GSSAPI (Kerberos 5) for ZooKeeper's SASL, as RFC 4752 and the Java client run it:
//! establish a security context with the server's service principal (mutual
//! authentication), send an empty token once it is established, then unwrap the server's
//! security-layer offer and answer "no security layer" (ZooKeeper uses none: TLS, if any,
//! protects the connection), integrity-protected.

use std::path::PathBuf;

use super::gss::{Context, Credentials, Name, INTEG, MUTUAL};
use super::{SaslError, SaslExchange, SaslMechanism, SaslStep};

/// The service name of ZooKeeper's principals: `zookeeper/<host>`.
pub const DEFAULT_SERVICE: &str = "zookeeper";

/// RFC 4752's "no security layer" bit.
const NO_SECURITY_LAYER: u8 = 1;

/// Where the client's Kerberos identity comes from, and which server principal it expects:
/// the settings of [`gssapi`](crate::sasl::gssapi).
///
/// ```no_run
/// # async fn demo() -> zkrs_client::Result<()> {
/// use zkrs_client::sasl::{gssapi, Kerberos};
/// let client = zkrs_client::ClientBuilder::new("zk1.example.com:2181")
///     .sasl(gssapi(Kerberos::from_keytab("app@EXAMPLE.COM", "/etc/app/app.keytab")))
///     .connect()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Kerberos {
    identity: Identity,
    service_principal: Option<String>,
}

#[derive(Debug, Clone)]
enum Identity {
    /// The default ticket cache (`KRB5CCNAME`, after `kinit`), or MIT's default client
    /// keytab (`KRB5_CLIENT_KTNAME`).
    Default,
    /// This principal, from this keytab.
    Keytab { principal: String, keytab: PathBuf },
    /// The principal of this ticket cache.
    Cache(String),
}

impl Kerberos {
    /// The identity in the default ticket cache (`kinit` first; `KRB5CCNAME` picks the
    /// cache), or in MIT krb5's default client keytab (`KRB5_CLIENT_KTNAME`).
    ///
    /// MIT krb5 reads `KRB5CCNAME` once per thread and keeps the name it found for that
    /// thread, and the client runs the exchange on whichever runtime thread drives the
    /// session: a process that changes `KRB5CCNAME` after start-up (or runs several
    /// identities) should name its cache with [`Kerberos::from_ticket_cache_at`].
    pub fn from_ticket_cache() -> Kerberos {
        Kerberos {
            identity: Identity::Default,
            service_principal: None,
        }
    }

    /// The identity in the ticket cache `cache`, e.g. `FILE:/run/app/krb5cc` (what
    /// `KRB5CCNAME` would name; a bare path is a `FILE:` cache). Unlike
    /// [`Kerberos::from_ticket_cache`], it does not depend on the process's environment.
    pub fn from_ticket_cache_at(cache: impl Into<String>) -> Kerberos {
        Kerberos {
            identity: Identity::Cache(cache.into()),
            service_principal: None,
        }
    }

    /// `principal` (e.g. `app@EXAMPLE.COM`), with its keys from `keytab`: tickets are fetched
    /// as needed into a cache private to this client, so no `kinit` is needed and the
    /// user's own cache is left alone.
    pub fn from_keytab(principal: impl Into<String>, keytab: impl Into<PathBuf>) -> Kerberos {
        Kerberos {
            identity: Identity::Keytab {
                principal: principal.into(),
                keytab: keytab.into(),
            },
            service_principal: None,
        }
    }

    /// The server's principal, e.g. `zookeeper/zk.example.com` or
    /// `zookeeper/zk.example.com@EXAMPLE.COM` (without a realm, the default realm's).
    /// By default it is `zookeeper/<host>`, with the host as the connect string names the
    /// server connected to.
    pub fn service_principal(mut self, principal: impl Into<String>) -> Kerberos {
        self.service_principal = Some(principal.into());
        self
    }
}

/// Kerberos (SASL mechanism `GSSAPI`) through the system's GSS-API library (MIT krb5), for
/// [`ClientBuilder::sasl`](crate::ClientBuilder::sasl). The session then has the identity
/// `sasl:<principal>` (the server may strip the host and realm, as its
/// `kerberos.removeHostFromPrincipal` and `kerberos.removeRealmFromPrincipal` say).
///
/// A failure on this side (no ticket, an expired one, a wrong keytab, a server whose
/// principal is unknown to the KDC) ends the client with `AuthFailed` and the library's
/// own words for the cause, as a refusal by the server does.
pub fn gssapi(settings: Kerberos) -> SaslMechanism {
    // One private in-memory ticket cache per mechanism: its connections share tickets.
    let cache = format!("MEMORY:zkr-{:016x}", crate::random::nonce_bits());
    SaslMechanism::per_server("GSSAPI", move |server| {
        let target = match &settings.service_principal {
            Some(principal) => Name::principal(principal),
            None => Name::service(&format!("{DEFAULT_SERVICE}@{server}")),
        };
        let credentials = match &settings.identity {
            Identity::Default => Ok(None),
            Identity::Keytab { principal, keytab } => {
                Credentials::from_keytab(principal, &keytab.to_string_lossy(), &cache).map(Some)
            }
            Identity::Cache(path) => Credentials::from_cache(path).map(Some),
        };
        Box::new(GssapiExchange {
            setup: target.and_then(|t| credentials.map(|c| (t, c))),
            context: Context::new(),
            stage: Stage::Establishing,
        })
    })
}

/// Where an exchange stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Exchanging context tokens.
    Establishing,
    /// Established; the server's wrapped security-layer offer comes next.
    LayerOffer,
    /// Our answer is sent; the server's last word comes next.
    Outcome,
    /// Authenticated.
    Done,
}

/// One GSSAPI exchange, on one connection.
struct GssapiExchange {
    /// The server's name and our credentials (`None`: the defaults), or why there are none.
    setup: Result<(Name, Option<Credentials>), String>,
    context: Context,
    stage: Stage,
}

impl SaslExchange for GssapiExchange {
    fn step(&mut self, server_token: Option<&[u8]>) -> Result<SaslStep, SaslError> {
        let (target, credentials) = self.setup.as_ref().map_err(Clone::clone)?;
        match self.stage {
            Stage::Establishing => {
                let step = self.context.step(
                    credentials.as_ref(),
                    target,
                    MUTUAL | INTEG,
                    server_token,
                )?;
                if step.complete {
                    // The server answers the (possibly empty) last token with its offer.
                    self.stage = Stage::LayerOffer;
                }
                Ok(SaslStep::Send(step.token))
            }
            Stage::LayerOffer => {
                let offer = self.context.unwrap(server_token.unwrap_or_default())?;
                let answer = layer_answer(&offer)?;
                self.stage = Stage::Outcome;
                Ok(SaslStep::Send(self.context.wrap(&answer)?))
            }
            Stage::Outcome | Stage::Done => {
                self.stage = Stage::Done;
                Ok(SaslStep::Done)
            }
        }
    }
}

/// Our answer to the server's offer (RFC 4752 section 3.1): four bytes, the layer chosen and
/// a maximum message size (0: no layer), and no authorization id (the authenticated
/// principal is the identity).
fn layer_answer(offer: &[u8]) -> Result<[u8; 4], String> {
    let [layers, _, _, _] = offer else {
        return Err(format!(
            "the server's security layer offer has {} bytes, not 4",
            offer.len()
        ));
    };
    if layers & NO_SECURITY_LAYER == 0 {
        return Err(format!(
            "the server requires a SASL security layer (offer {layers:#04x}); ZooKeeper \
             clients use none"
        ));
    }
    Ok([NO_SECURITY_LAYER, 0, 0, 0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_takes_no_security_layer() {
        assert_eq!(layer_answer(&[0x07, 0x01, 0, 0]).unwrap(), [1, 0, 0, 0]);
        assert_eq!(layer_answer(&[0x01, 0, 0, 0]).unwrap(), [1, 0, 0, 0]);
        let e = layer_answer(&[0x06, 0x01, 0, 0]).unwrap_err();
        assert!(e.contains("requires a SASL security layer"), "{e}");
        let e = layer_answer(&[1, 0, 0]).unwrap_err();
        assert!(e.contains("3 bytes, not 4"), "{e}");
    }

    #[test]
    fn a_bad_service_name_fails_the_exchange_with_the_cause() {
        // No KDC is needed to see a name the library refuses, nor a keytab that is missing.
        let mechanism = gssapi(
            Kerberos::from_keytab("nobody@ZKR.TEST", "/nonexistent/zkr.keytab")
                .service_principal("zookeeper/localhost"),
        );
        let mut exchange = mechanism.exchange("localhost");
        let e = match exchange.step(None) {
            Ok(step) => panic!("a missing keytab gave {step:?}"),
            Err(e) => e,
        };
        assert!(e.message().contains("nobody@ZKR.TEST"), "{e}");
        assert!(e.message().contains("/nonexistent/zkr.keytab"), "{e}");
    }
}
