//! Reading and changing the ensemble's membership: [`Client::get_config`] and
//! [`Client::reconfig`] (the Java client's `getConfig` and `ZooKeeperAdmin.reconfigure`),
//! with [`Reconfig`], the change to ask for.

use crate::error::{ErrorExt, ErrorKind};
use std::fmt::Display;

use zkrs_codec::{
    Decode, ErrorCode, GetDataResponse, OpCode, PathWatchRequest, ReconfigRequest, Stat,
};

use crate::client::Client;
use crate::ensemble_config::{EnsembleConfig, EnsembleMember};
use crate::error::{Error, Result};
use crate::session::{Reply, WatchKind};
use crate::watch::OneshotWatch;

/// The node holding the ensemble's configuration. The chroot never applies to it (as in the
/// Java client).
pub const CONFIG_NODE: &str = "/zookeeper/config";

/// A change of the ensemble's membership, for [`Client::reconfig`]: incremental (members
/// join and leave, the others stay) or bulk (the whole new membership), optionally only if
/// the configuration is still a given version.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_client::Reconfig;
/// let (current, _) = client.get_config().await?;
/// let change = Reconfig::incremental()
///     .add_member("server.4=10.0.0.4:2888:3888:participant;10.0.0.4:2181")
///     .remove_member(1)
///     .from_config(current.version());
/// let (new_config, _stat) = client.reconfig(&change).await?;
/// # Ok(()) }
/// ```
#[must_use]
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reconfig {
    joining: Vec<String>,
    leaving: Vec<u64>,
    members: Option<Vec<String>>,
    from_config: Option<i64>,
}

impl Reconfig {
    /// An incremental change: add members with [`Reconfig::add_member`], remove them with
    /// [`Reconfig::remove_member`].
    pub fn incremental() -> Reconfig {
        Reconfig::default()
    }

    /// A bulk change: these members, and only these, form the new configuration. Each is a
    /// member line, `server.N=HOST:QUORUM_PORT:ELECTION_PORT[:ROLE][;[CLIENT_HOST:]PORT]`
    /// (a `&str`, or an [`EnsembleMember`]).
    pub fn bulk<M: Display>(members: impl IntoIterator<Item = M>) -> Reconfig {
        Reconfig {
            members: Some(members.into_iter().map(|m| m.to_string()).collect()),
            ..Reconfig::default()
        }
    }

    /// Adds a member (or changes one: its new line replaces the old): a member line as for
    /// [`Reconfig::bulk`].
    pub fn add_member(mut self, member: impl Display) -> Reconfig {
        self.joining.push(member.to_string());
        self
    }

    /// Removes the member with this id.
    pub fn remove_member(mut self, id: u64) -> Reconfig {
        self.leaving.push(id);
        self
    }

    /// Applies only if the configuration is still this version
    /// ([`EnsembleConfig::version`]); otherwise the server answers `BadVersion`.
    pub fn from_config(mut self, version: i64) -> Reconfig {
        self.from_config = Some(version);
        self
    }

    /// Checks the change and renders the request's three comma-separated lists.
    fn render(&self) -> Result<(Option<String>, Option<String>, Option<String>)> {
        let check = |spec: &String| -> Result<String> {
            let spec = spec.trim();
            if spec.contains(',') {
                return Err(Error::invalid(format!(
                    "a member line may not contain ',' (it separates members): {spec:?}"
                )));
            }
            EnsembleMember::parse(spec)
                .map_err(|e| Error::invalid(format!("bad member line: {e}")))?;
            Ok(spec.to_string())
        };
        let list = |specs: &[String]| -> Result<Option<String>> {
            if specs.is_empty() {
                return Ok(None);
            }
            let checked = specs.iter().map(check).collect::<Result<Vec<_>>>()?;
            Ok(Some(checked.join(",")))
        };
        match &self.members {
            Some(_) if !self.joining.is_empty() || !self.leaving.is_empty() => Err(Error::invalid(
                "a reconfig is either bulk (new members) or incremental (add/remove), not both",
            )),
            Some(members) if members.is_empty() => {
                Err(Error::invalid("a bulk reconfig needs at least one member"))
            }
            Some(members) => Ok((None, None, list(members)?)),
            None if self.joining.is_empty() && self.leaving.is_empty() => Err(Error::invalid(
                "an incremental reconfig needs a member to add or remove",
            )),
            None => {
                let leaving = (!self.leaving.is_empty()).then(|| {
                    self.leaving
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(",")
                });
                Ok((list(&self.joining)?, leaving, None))
            }
        }
    }
}

impl Client {
    /// The ensemble's configuration (`/zookeeper/config`, read without the chroot) and the
    /// node's Stat.
    pub async fn get_config(&self) -> Result<(EnsembleConfig, Stat)> {
        let frame = self.config_request(false)?;
        let reply = self.call(frame).await;
        config_and_stat(reply.map_err(|e| e.with_path(CONFIG_NODE))?)
    }

    /// Like [`Client::get_config`], leaving a watch that fires (`NodeDataChanged` on
    /// `/zookeeper/config`) when the configuration changes.
    pub async fn get_config_and_watch(&self) -> Result<(EnsembleConfig, Stat, OneshotWatch)> {
        let frame = self.config_request(true)?;
        let (reply, watch) = self
            .call_watched_at(frame, WatchKind::Data, CONFIG_NODE.into())
            .await;
        let (config, stat) = config_and_stat(reply.map_err(|e| e.with_path(CONFIG_NODE))?)?;
        Ok((config, stat, watch))
    }

    /// Changes the ensemble's membership; returns the new configuration and the Stat of
    /// `/zookeeper/config`. Needs a server with `reconfigEnabled=true`, and a superuser
    /// session (or servers with `skipACL=yes`).
    ///
    /// The server's refusals keep their codes (match on [`Error::code`]): `ReconfigDisabled`,
    /// `NewConfigNoQuorum` (no quorum of the new configuration is up and in sync, e.g. an
    /// added member that is not running), `ReconfigInProgress`, `BadVersion` (the
    /// configuration is no longer [`Reconfig::from_config`]'s version), `NoAuth`. Member
    /// lines are checked here first: a malformed one is
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) and nothing is sent.
    ///
    /// Removing the member this client is connected to, or the leader, can cut the
    /// connection before the answer comes (`ConnectionLoss`): read the configuration back
    /// to see whether the change applied.
    pub async fn reconfig(&self, change: &Reconfig) -> Result<(EnsembleConfig, Stat)> {
        let (joining, leaving, members) = change.render()?;
        let request = ReconfigRequest {
            joining_servers: joining.as_deref(),
            leaving_servers: leaving.as_deref(),
            new_members: members.as_deref(),
            cur_config_id: change.from_config.unwrap_or(-1),
        };
        let hint = joining.as_ref().map_or(0, String::len)
            + leaving.as_ref().map_or(0, String::len)
            + members.as_ref().map_or(0, String::len);
        let frame = self.frame(OpCode::Reconfig, &request, hint)?;
        let reply = self
            .call(frame)
            .await
            .map_err(|e| explain(e, change.from_config))?;
        config_and_stat(reply)
    }

    fn config_request(&self, watch: bool) -> Result<crate::frame::Frame> {
        self.frame(
            OpCode::GetData,
            &PathWatchRequest {
                path: CONFIG_NODE,
                watch,
            },
            CONFIG_NODE.len(),
        )
    }
}

/// Decodes a getData-shaped reply as a configuration; a configuration that does not parse
/// is a protocol error (the server's data is malformed), never a panic.
fn config_and_stat(reply: Reply) -> Result<(EnsembleConfig, Stat)> {
    let decoded = GetDataResponse::decode_prefix(&reply.body)?;
    let data = match decoded.data {
        Some(d) => reply.body.slice_ref(d),
        None => bytes::Bytes::new(),
    };
    let config = EnsembleConfig::parse(data).map_err(|e| {
        Error::new(
            ErrorKind::Protocol,
            format!("the server's configuration does not parse: {e}"),
        )
        .with_path(CONFIG_NODE)
    })?;
    Ok((config, decoded.stat))
}

/// The server's reconfig refusals, said in words (the code stays what callers match on).
fn explain(error: Error, from_config: Option<i64>) -> Error {
    let Some(code) = error.code() else {
        return error;
    };
    let detail = match code {
        ErrorCode::ReconfigDisabled => {
            "reconfiguration is disabled on the server (reconfigEnabled=false)".to_string()
        }
        ErrorCode::NewConfigNoQuorum => "no quorum of the new configuration is connected and \
                                         in sync with the leader (are the added members running?)"
            .to_string(),
        ErrorCode::ReconfigInProgress => {
            "another reconfiguration is in progress; try again once it is done".to_string()
        }
        ErrorCode::BadVersion => match from_config {
            Some(v) => format!("the configuration is no longer version {v:x}"),
            None => "the configuration changed".to_string(),
        },
        ErrorCode::NoAuth => "reconfig needs a superuser session (or skipACL=yes on the \
                              servers)"
            .to_string(),
        _ => return error,
    };
    error.with_detail(detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_incremental_and_bulk_changes() {
        let change = Reconfig::incremental()
            .add_member("server.4=h:1:2;3")
            .add_member(" server.5=h:4:5:observer;6 ")
            .remove_member(1)
            .remove_member(2);
        assert_eq!(
            change.render().unwrap(),
            (
                Some("server.4=h:1:2;3,server.5=h:4:5:observer;6".into()),
                Some("1,2".into()),
                None
            )
        );
        let member = EnsembleMember::parse("server.1=h:1:2;3").unwrap();
        let bulk = Reconfig::bulk([member.to_string(), "server.2=h:4:5;6".into()]);
        assert_eq!(
            bulk.render().unwrap(),
            (
                None,
                None,
                Some("server.1=h:1:2:participant;0.0.0.0:3,server.2=h:4:5;6".into())
            )
        );
        assert_eq!(
            Reconfig::incremental().remove_member(3).render().unwrap(),
            (None, Some("3".into()), None)
        );
    }

    #[test]
    fn refuses_bad_changes_before_sending() {
        for (change, expected) in [
            (Reconfig::incremental(), "needs a member to add or remove"),
            (Reconfig::bulk(Vec::<String>::new()), "at least one member"),
            (
                Reconfig::bulk(["server.1=h:1:2"]).remove_member(1),
                "either bulk (new members) or incremental",
            ),
            (
                Reconfig::incremental().add_member("server.4=h:1"),
                "bad member line",
            ),
            (
                Reconfig::incremental().add_member("h:1:2:3"),
                "bad member line",
            ),
            (
                Reconfig::incremental().add_member("server.4=h:1:2,server.5=h:3:4"),
                "may not contain ','",
            ),
        ] {
            let err = change.render().unwrap_err();
            assert!(err.is_invalid_input(), "{err}");
            assert!(err.to_string().contains(expected), "{err}");
        }
    }

    #[test]
    fn server_refusals_keep_their_code_and_say_why() {
        let e = explain(Error::from(ErrorCode::BadVersion), Some(0x1_0000_0000));
        assert_eq!(e.code(), Some(ErrorCode::BadVersion));
        assert_eq!(
            e.to_string(),
            "BadVersion: the configuration is no longer version 100000000"
        );
        let e = explain(Error::from(ErrorCode::NoAuth), None);
        assert!(e.to_string().contains("superuser"), "{e}");
        let e = explain(Error::new(ErrorKind::ConnectionLoss, ""), None);
        assert_eq!(e.kind(), ErrorKind::ConnectionLoss);
    }
}
