//! `config` and `reconfig`: the ensemble's membership, read and changed.

use std::io::Write;

use zkrs_client::{Client, Reconfig};

use crate::args::Command;
use crate::failure::Outcome;

/// Runs `config` or `reconfig` on a connected client; both print the configuration as
/// ZooKeeper writes it, then a line break.
pub async fn run(client: &Client, command: Command) -> Outcome {
    let config = match command {
        Command::Config => client.get_config().await?.0,
        Command::Reconfig {
            add,
            remove,
            members,
            from_version,
        } => {
            let mut change = if members.is_empty() {
                Reconfig::incremental()
            } else {
                Reconfig::bulk(members)
            };
            for spec in add {
                change = change.add_member(spec);
            }
            for id in remove {
                change = change.remove_member(id);
            }
            if let Some(version) = from_version {
                change = change.from_config(version);
            }
            client.reconfig(&change).await?.0
        }
        other => unreachable!("not an ensemble command: {other:?}"),
    };
    let mut out = crate::output::stdout();
    if crate::output_json::on() {
        let text = config.to_string();
        crate::output_json::line(&mut out, &crate::json_records::Config::parse(&text))?;
    } else {
        writeln!(out, "{config}")?;
    }
    out.flush()?;
    Ok(0)
}
